"""The base of every account-scoped REST view: the caller's membership, read-only roles refused on writes."""
from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lev.accounts import scopes, selectors
from lev.accounts.models import Account, ApiKey, Membership
from lev.accounts.scopes import ACCOUNT_READ
from lev.accounts.serializers import AccountMeSerializer
from lev.openapi import error_responses
from lev.throttling import limits_left


def validated(serializer_class, data, **kwargs) -> dict:
    serializer = serializer_class(data=data, **kwargs)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class AccountScopedView(APIView):
    """Every view of an account's work acts for the caller's account; other accounts' records do not
    exist here."""

    def initial(self, request: Request, *args, **kwargs) -> None:
        super().initial(request, *args, **kwargs)
        self.membership = selectors.membership_for_user(user=request.user, api_key=request.auth)
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            selectors.check_can_write(membership=self.membership)

    def account(self, request: Request) -> Account:
        return self.membership.account



def credential_of(credential: Any) -> dict[str, Any]:
    """What a request's credential is: an API key, an OAuth access token (lev.oauth's OAuthCredential,
    read by its fields: this package is below lev.oauth), or none (a session on the site itself)."""
    granted = [name for name in scopes.SCOPES if name in scopes.granted(credential)]
    if credential is None:
        return {"kind": "session", "name": "", "prefix": None, "scopes": granted, "expires_at": None}
    if isinstance(credential, ApiKey):
        return {"kind": "api_key", "name": credential.name, "prefix": credential.prefix, "scopes": granted,
                "expires_at": credential.expires_at}
    return {"kind": "oauth", "name": getattr(credential, "client_name", ""), "prefix": None, "scopes": granted,
            "expires_at": getattr(credential, "expires_at", None)}


class AccountMeApi(AccountScopedView):
    """The caller: every credential may read it (scopes.ALWAYS_GRANTED)."""

    required_scopes = {"GET": ACCOUNT_READ}
    # Reading what is left of the limits does not use any of it: this view is not counted (nor refused
    # when the limits are spent, so a caller can always learn when they reset).
    throttle_classes: list = []

    @extend_schema(operation_id="account_retrieve",
                   responses={200: AccountMeSerializer, **error_responses(401, 403, 503)})
    def get(self, request: Request) -> Response:
        """Who is calling: the user, the account the credential acts in and the user's role there, the
        credential (kind, name, scopes, expiry) and what is left of the caller's rate limits in the
        current window. Reading this does not count against the limits."""
        membership, user = self.membership, request.user
        return Response(AccountMeSerializer({
            "user": {"username": user.get_username(), "name": user.get_full_name(), "email": user.email or ""},
            "account": {"id": membership.account_id, "name": membership.account.name,
                        "slug": membership.account.slug},
            "role": membership.role,
            "can_write": membership.role != Membership.Role.VIEWER,
            "credential": credential_of(request.auth),
            "rate_limits": limits_left(request.user),
        }).data)
