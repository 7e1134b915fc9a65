"""API-key authentication: `Authorization: Bearer lev_sk_…` (never in the query string)."""

from __future__ import annotations

import hashlib
import secrets

from django.utils import timezone
from rest_framework import HTTP_HEADER_ENCODING
from rest_framework import exceptions as drf_exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from lev.accounts.credential_cache import credential_cache
from lev.errors import AuthenticationFailed, SessionExpired

KEY_PREFIX = "lev_sk_"
# WSGI environ key through which an in-process call hands the API view the (user, credential) its caller
# verified moments before (PreAuthenticated, below). Not an HTTP_* key, so it cannot come from the network.
PREAUTHENTICATED_ENVIRON_KEY = "lev.preauthenticated"


def generate_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_key(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode("utf-8")).hexdigest()


def authorization_header(request: Request) -> bytes:
    """The request's `Authorization` header as bytes (b"" without one): DRF's get_authorization_header,
    read from the environ itself, so no request builds its whole `headers` mapping for this alone (the
    in-process call behind every MCP tool call would, once per authentication class)."""
    value = request._request.META.get("HTTP_AUTHORIZATION", b"")
    return value.encode(HTTP_HEADER_ENCODING) if isinstance(value, str) else value


class ApiKeyRejected(drf_exceptions.AuthenticationFailed):
    """DRF's own type (so DRF marks the request unauthenticated) carrying our error."""

    def __init__(self, error: AuthenticationFailed):
        self.app_error = error
        super().__init__(error.message)


class ApiKeyAuthentication(BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request):
        try:
            return self._authenticate(request)
        except AuthenticationFailed as error:
            raise ApiKeyRejected(error) from None

    def _authenticate(self, request: Request):
        header = authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise AuthenticationFailed("Unauthorized: malformed Authorization header; use 'Bearer <api key>'.")
        try:
            raw_key = header[1].decode("ascii")
        except UnicodeDecodeError as exc:
            raise AuthenticationFailed("Unauthorized: invalid API key.") from exc
        if not raw_key.startswith(KEY_PREFIX):
            raise AuthenticationFailed("Unauthorized: invalid API key.")
        return self.authenticate_key(raw_key)

    @staticmethod
    def authenticate_key(raw_key: str):
        """(user, key) for a live key; AuthenticationFailed otherwise. A key found valid is kept in
        this process's credential cache for LEV_AUTH_CACHE_SECONDS (lev.accounts.credential_cache: revoking
        it empties this process's cache at once); its expiry is checked on every request."""
        from lev.accounts.models import ApiKey

        key_hash = hash_key(raw_key)
        cache_key = ("api_key", key_hash)
        key = credential_cache.get(cache_key)
        if key is None:
            generation = credential_cache.generation()
            key = ApiKey.objects.select_related("user", "account").filter(key_hash=key_hash).first()
            if key is None or not key.user.is_active:
                raise AuthenticationFailed("Unauthorized: invalid API key.")
            if key.revoked_at is not None:
                raise AuthenticationFailed("Unauthorized: this API key has been revoked.")
            credential_cache.put(cache_key, key, generation)
        now = timezone.now()
        if key.expires_at is not None and key.expires_at <= now:
            raise SessionExpired()
        # Touch at most once a minute: a write per request would cost more than the read.
        if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
            ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
            key.last_used_at = now
        return key.user, key

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="lev"'


class PreAuthenticated(BaseAuthentication):
    """The credential verified moments before by the endpoint that calls this API view in process (the MCP
    tools' calls, mcp_tools.client), handed over under PREAUTHENTICATED_ENVIRON_KEY: the tool call is
    authenticated once, by /mcp, and the view takes its (user, credential) as they are. Such a request
    carries no Authorization header, so the classes before this one find nothing to read; it comes last
    so that a REST request's 401 keeps the first class's challenge (DRF asks the first class for it)."""

    def authenticate(self, request: Request):
        return request._request.META.get(PREAUTHENTICATED_ENVIRON_KEY)
