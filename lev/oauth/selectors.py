"""Reads of a person's OAuth grants ("connected apps")."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, QuerySet
from oauth2_provider.models import get_refresh_token_model

from lev.oauth.models import OAuthAuthorization


def connected_apps(*, user) -> QuerySet[OAuthAuthorization]:
    """The person's live grants: exchanged, not revoked, with a refresh token still usable."""
    live = get_refresh_token_model().objects.filter(token_family=OuterRef("token_family"), revoked__isnull=True)
    return (
        OAuthAuthorization.objects.filter(user=user, revoked_at__isnull=True, token_family__isnull=False)
        .filter(Exists(live))
        .select_related("application", "account")
        .order_by("-created_at")
    )


def connected_app_grants(*, authorization: OAuthAuthorization) -> QuerySet[OAuthAuthorization]:
    """The person's live grants for the same app in the same account as `authorization`: one connected app
    to the person, however many times the app was connected (a client that signs in again, a CIMD client
    on a second machine)."""
    return OAuthAuthorization.objects.filter(user_id=authorization.user_id, application_id=authorization.application_id,
                                             account_id=authorization.account_id, revoked_at__isnull=True)


def connected_app_get(*, user, authorization_id: str) -> OAuthAuthorization | None:
    """One of the person's own grants; None for anything else (another person's is not found either)."""
    if not (isinstance(authorization_id, str) and authorization_id.isdigit() and len(authorization_id) < 19):
        return None
    return OAuthAuthorization.objects.filter(user=user, pk=int(authorization_id), revoked_at__isnull=True).first()
