"""Changes to a person's OAuth grants."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from oauth2_provider.models import get_refresh_token_model

from lev.accounts.credential_cache import credential_cache
from lev.oauth.models import OAuthAuthorization


@transaction.atomic
def authorization_revoke(*, authorization: OAuthAuthorization) -> None:
    """Disconnect an app: its access tokens stop working at once and its refresh tokens are revoked
    (the whole family, so no rotated copy survives)."""
    if authorization.token_family is not None:
        get_refresh_token_model().revoke_family(authorization.token_family)
    authorization.revoked_at = timezone.now()
    authorization.save(update_fields=["revoked_at"])  # empties this process's credential cache (its signal)
    # ... and again once committed, so a check that read the tokens before the commit is not kept either.
    transaction.on_commit(credential_cache.clear)
