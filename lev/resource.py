"""This site as an OAuth protected resource (RFC 9728, RFC 8707): its identifiers and its challenges.

The site is one resource server with several doors: the REST API (the whole site, `<origin>`) and each
endpoint registered as a protected resource of its own (lev.endpoints; today `/mcp`, resource
`<origin>/mcp`, the identifier MCP clients ask tokens for). A token is accepted when its audience is one
of these identifiers (or an address under an endpoint's), and refused for any other audience.

`<origin>` is LEV_PUBLIC_URL when set (production: the one public address, whatever Host a request
arrived with, so a token issued through one address works behind a load balancer or from the MCP
service to a separate backend), else the scheme and Host of the request (development).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest

from lev import endpoints
from lev.accounts.scopes import ALL_SCOPES, as_text

PROTECTED_RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize(uri: str) -> str | None:
    """A resource identifier compared the way RFC 8707 and the MCP specification allow: scheme and host
    in lowercase, the default port and a trailing slash dropped. None for what is no identifier
    (no scheme or host, a fragment, user information, a bad port)."""
    if not isinstance(uri, str) or "#" in uri:
        return None
    try:
        parts = urlsplit(uri.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.username is not None:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = parts.path.rstrip("/")
    return f"{scheme}://{netloc}{path}" + (f"?{parts.query}" if parts.query else "")


def public_origin(request: Any) -> str:
    """`scheme://host[:port]` of this site (a Django/DRF request, or an oauthlib request's `uri`)."""
    configured = getattr(settings, "LEV_PUBLIC_URL", "")
    if configured:
        return normalize(configured) or configured.rstrip("/")
    if not hasattr(request, "get_host"):
        request = _django_request_of(request)
    return normalize(f"{request.scheme}://{request.get_host()}") or ""


class _RequestOfOAuthlib(HttpRequest):
    """The Django request an oauthlib request was made from: django-oauth-toolkit hands oauthlib the
    request's META as its headers, and marks a secure request."""

    def __init__(self, oauthlib_request: Any):
        super().__init__()
        self.META = dict(oauthlib_request.headers)

    @property
    def scheme(self) -> str:
        return "https" if self.META.get("X_DJANGO_OAUTH_TOOLKIT_SECURE") else "http"


def _django_request_of(oauthlib_request: Any) -> HttpRequest:
    return _RequestOfOAuthlib(oauthlib_request)


def _endpoint_paths() -> list[str]:
    return [endpoint.path for endpoint in endpoints.protected_resources()]


def default_resource(request: Any) -> str:
    """The identifier a token is bound to when its client names none: the first endpoint registered as a
    protected resource (/mcp), or the site when there is none."""
    paths = _endpoint_paths()
    return public_origin(request) + (paths[0] if paths else "")


def site_resources(request: Any) -> frozenset[str]:
    """The resource identifiers tokens of this site may be bound to: the site and its endpoints."""
    origin = public_origin(request)
    return frozenset({origin, *(origin + path for path in _endpoint_paths())})


def endpoint_address(path: str) -> bool:
    """A protected endpoint itself or an address under it (its toolsets' addresses: /mcp/x/deals), a
    trailing slash or not."""
    path = path.rstrip("/")
    return any(endpoint.serves(path) for endpoint in endpoints.protected_resources())


def is_site_resource(value: str, request: Any) -> bool:
    """One of this site's resource identifiers, or an address under one of its endpoints: identifiers are
    hierarchical (RFC 8707; the MCP clients match them so), and a client connected to /mcp/x/deals may
    ask for a token for that address."""
    normalized = normalize(value)
    if normalized is None:
        return False
    origin = public_origin(request)
    return normalized in site_resources(request) or any(normalized.startswith(origin + path + "/")
                                                        for path in _endpoint_paths())


def audience_allowed(audience: Iterable[str], request: Any) -> bool:
    """A token bound to this site (RFC 8707): it names at least one audience, and each is ours."""
    audience = list(audience or ())
    return bool(audience) and all(is_site_resource(value, request) for value in audience)


def resource_metadata_url(request: Any) -> str:
    """The RFC 9728 metadata of the resource a request addressed: for a protected endpoint (or an address
    under it) the well-known path with that address inserted, the site's else."""
    path = getattr(request, "path", "")
    suffix = path.rstrip("/") if endpoint_address(path) else ""
    return public_origin(request) + PROTECTED_RESOURCE_METADATA_PATH + suffix


def _quoted(value: str) -> str:
    value = value.replace("\r", "").replace("\n", "")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def bearer_challenge(request: Any, *, error: str | None = None, description: str | None = None,
                     scopes: Iterable[str] = ALL_SCOPES) -> str:
    """`WWW-Authenticate: Bearer …` (RFC 6750 §3, RFC 9728 §5.1): where the resource's metadata is and
    which scopes to ask for; `error` only when a credential was sent and refused (`invalid_token`) or
    lacks a scope (`insufficient_scope`)."""
    params: list[tuple[str, str]] = []
    if error:
        params.append(("error", error))
    if description:
        params.append(("error_description", description))
    params.append(("scope", as_text(scopes)))
    params.append(("resource_metadata", resource_metadata_url(request)))
    return "Bearer " + ", ".join(f"{key}={_quoted(value)}" for key, value in params)
