"""The base of every account-scoped REST view: the caller's membership, read-only roles refused on writes."""
from __future__ import annotations

from rest_framework.request import Request
from rest_framework.views import APIView

from lev.accounts import selectors
from lev.accounts.models import Account


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

