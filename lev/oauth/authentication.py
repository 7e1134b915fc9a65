"""OAuth 2.1 access tokens as bearer credentials of /mcp and the REST API.

`Authorization: Bearer <token>` only (never the query string). A token is accepted when it exists, has
not expired, is bound to this site (RFC 8707 audience, `lev.resource`), belongs to a connected app that
is not revoked, and its user is active; it resolves to (user, OAuthCredential) whose account and scopes
the API's tenancy and scope checks read exactly as they read an API key's. API keys (`lev_sk_…`) are
left to lev.accounts.auth.ApiKeyAuthentication, the next class in the list.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from typing import Any

from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_refresh_token_model
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from lev import limits
from lev.accounts import scopes
from lev.accounts.auth import KEY_PREFIX, ApiKeyRejected, authorization_header
from lev.accounts.credential_cache import credential_cache
from lev.errors import AuthenticationFailed, SessionExpired
from lev.resource import audience_allowed, bearer_challenge

INVALID_TOKEN = "Unauthorized: invalid access token."
WRONG_AUDIENCE = "Unauthorized: this access token was issued for another resource."


@dataclass(frozen=True)
class OAuthCredential:
    """What an OAuth access token grants: the account and scopes the person consented to."""

    token_checksum: str
    authorization_id: int
    account_id: int
    scope_set: frozenset[str]
    client_name: str
    # When the access token stops working (its refresh token, if any, lives longer).
    expires_at: dt.datetime | None = None


def token_checksum(raw: str) -> str:
    # django-oauth-toolkit looks tokens up by this digest (AccessToken.token_checksum).
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def bearer_value(request: Request) -> str | None:
    """The credential of `Authorization: Bearer <credential>`; None without a Bearer header.
    AuthenticationFailed for a malformed one."""
    header = authorization_header(request).split()
    if not header or header[0].lower() != b"bearer":
        return None
    if len(header) != 2:
        raise AuthenticationFailed("Unauthorized: malformed Authorization header; use 'Bearer <token>'.")
    if len(header[1]) > limits.BEARER_CREDENTIAL_MAX:
        raise AuthenticationFailed(INVALID_TOKEN)
    try:
        return header[1].decode("ascii")
    except UnicodeDecodeError:
        raise AuthenticationFailed(INVALID_TOKEN) from None


class OAuthTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Request):
        try:
            raw = bearer_value(request)
            if raw is None or raw.startswith(KEY_PREFIX):
                return None  # not ours: an API key, a session, or nothing
            return authenticate_token(token_checksum(raw), request)
        except AuthenticationFailed as error:
            raise ApiKeyRejected(error) from None

    def authenticate_header(self, request: Request) -> str:
        sent = bool(authorization_header(request))
        return bearer_challenge(request, error="invalid_token" if sent else None)


@dataclass(frozen=True)
class _VerifiedToken:
    """What a database check of a token found (kept in the credential cache); the checks that depend
    on the clock and the request (expiry, audience) are made from it on every request."""

    user: Any
    credential: OAuthCredential
    expires: dt.datetime
    resource: tuple[str, ...]


def authenticate_token(checksum: str, request) -> tuple:
    """(user, OAuthCredential) for a live token bound to this site; AuthenticationFailed otherwise.

    A token found valid is kept in this process's credential cache for LEV_AUTH_CACHE_SECONDS
    (lev.accounts.credential_cache): deleting the token (`/oauth/revoke/`), disconnecting the app or revoking
    the grant empties this process's cache at once, other processes within that time."""
    cache_key = ("oauth_token", checksum)
    verified = credential_cache.get(cache_key)
    if verified is None:
        generation = credential_cache.generation()
        verified = _verify_token(checksum, request)
        credential_cache.put(cache_key, verified, generation)
    elif verified.expires <= timezone.now():
        raise SessionExpired()
    elif not audience_allowed(list(verified.resource), request):
        raise AuthenticationFailed(WRONG_AUDIENCE)
    _touch(verified.credential.authorization_id)
    return verified.user, verified.credential


def _verify_token(checksum: str, request) -> _VerifiedToken:
    from lev.oauth.models import OAuthAuthorization

    token = (
        get_access_token_model().objects.select_related("user", "application")
        .filter(token_checksum=checksum).first()
    )
    if token is None or token.user is None or not token.user.is_active:
        raise AuthenticationFailed(INVALID_TOKEN)
    if token.is_expired():
        raise SessionExpired()
    if not audience_allowed(token.resource or [], request):
        raise AuthenticationFailed(WRONG_AUDIENCE)
    families = get_refresh_token_model().objects.filter(access_token=token).values("token_family")
    authorization = (
        OAuthAuthorization.objects.filter(token_family__in=families, user=token.user, revoked_at__isnull=True)
        .only("id", "account_id", "last_used_at").first()
    )
    if authorization is None:
        raise AuthenticationFailed(INVALID_TOKEN)
    _last_touched[authorization.pk] = authorization.last_used_at
    credential = OAuthCredential(
        token_checksum=checksum,
        authorization_id=authorization.pk,
        account_id=authorization.account_id,
        scope_set=scopes.known(token.scope),
        client_name=token.application.name if token.application else "",
        expires_at=token.expires,
    )
    return _VerifiedToken(user=token.user, credential=credential, expires=token.expires,
                          resource=tuple(token.resource or ()))


# authorization id -> its last_used_at as this process last read or wrote it.
_last_touched: dict[int, dt.datetime | None] = {}


def _touch(authorization_id: int) -> None:
    """Touch at most once a minute: the connected-apps page shows it, a write per request would cost more."""
    from lev.oauth.models import OAuthAuthorization

    now = timezone.now()
    last = _last_touched.get(authorization_id)
    if last is None or (now - last).total_seconds() > 60:
        OAuthAuthorization.objects.filter(pk=authorization_id).update(last_used_at=now)
        if len(_last_touched) > 10_000:
            _last_touched.clear()
        _last_touched[authorization_id] = now
