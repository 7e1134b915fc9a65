"""A Django request handler that runs a chosen part of settings.MIDDLEWARE, for the requests that need no
pages' middleware: /mcp itself (`McpWSGIHandler`, routed by lev.wsgi when LEV_MCP_LEAN_MIDDLEWARE is on);
and the resolve table the MCP tools' in-process API calls share (mcp_tools.client.direct_dispatch).

MCP_MIDDLEWARE names the middleware such a request relies on; the chain keeps the order
settings.MIDDLEWARE gives them, and a name not in settings.MIDDLEWARE is not run (a deployment that
removes a middleware removes it here too). URL resolution, views, exception handling and statuses are
Django's own.
"""

from __future__ import annotations

from functools import lru_cache

from django.core.handlers.wsgi import WSGIHandler, WSGIRequest
from django.urls import URLResolver, get_resolver, set_urlconf
from django.urls.resolvers import ResolverMatch

from lev import endpoints
from lev.adapters.django import MiddlewareChain

# The middleware /mcp (and its sub-paths, mcp_tools.urls) goes through. Kept:
# * RequestIdMiddleware: the request id, the access log line, the JSON error body for any error page and
#   the ALLOWED_HOSTS refusal in that body; ApiErrorMiddleware: JSON for a 404 and for an exception.
# * SecurityMiddleware, CSPMiddleware, XFrameOptionsMiddleware: the headers a client sees on every
#   /mcp answer (nosniff, Referrer-Policy, Cross-Origin-Opener-Policy, HSTS over https, the content
#   security policy, X-Frame-Options); CommonMiddleware: its Content-Length and DISALLOWED_USER_AGENTS.
#   tests/deploy/test_mcp_lean_middleware.py compares every header of every kind of /mcp answer with
#   the full stack's, under the production server.
# * HistoryRequestMiddleware: django-simple-history's user of a change a tool makes (request.user,
#   which DRF sets when McpView authenticates).
# Not run, because /mcp uses none of it: WhiteNoise (static files only), sessions and authentication
# (McpView authenticates the Authorization header itself, as DRF; no cookie is read or set), CSRF (a DRF
# view is exempt, and a bearer credential is not ambient), messages (pages only) and axes (it refuses
# locked-out sign-ins, which only the sign-in pages make; API keys and OAuth tokens never go through
# django.contrib.auth.authenticate()).
MCP_MIDDLEWARE = (
    "lev.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "lev.middleware.CommonMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "lev.middleware.ApiErrorMiddleware",
)


def is_mcp_path(path: str) -> bool:
    """An address of a registered endpoint (`lev.endpoints`: /mcp and the addresses under it, mcp_tools
    registers them): what McpWSGIHandler serves. Spellings the URLs do not match (`/MCP`, `//mcp`) take
    the full stack, which answers them the JSON 404."""
    return endpoints.served_by(path) is not None


# Paths resolved lately, per URL resolver: resolving walks the URL patterns one regular expression after
# another (about 0.05 ms for /api/v1/deals/<id>/ here, twice per MCP tool call: /mcp and the API view
# behind the tool). The patterns are fixed for a process's life, and a ResolverMatch is read, never
# changed, by Django and DRF, so one path resolves to the same match every time; a path that resolves to
# nothing raises Resolver404 each time (an exception is never kept). Keyed by the resolver itself, so a
# request's own urlconf or a test's ROOT_URLCONF (a new resolver) never sees another's matches; bounded,
# as paths carry ids.
@lru_cache(maxsize=2048)
def _resolve_cached(resolver: URLResolver, path: str) -> ResolverMatch:
    return resolver.resolve(path)


def resolve(path: str, resolver: URLResolver | None = None) -> ResolverMatch:
    """`resolver.resolve(path)` (the default urlconf's resolver when none is given), through the table
    above; Resolver404 when nothing matches."""
    return _resolve_cached(resolver or get_resolver(), path)


class ChosenMiddleware(MiddlewareChain):
    """A Django handler whose middleware chain is `middleware` (lev.adapters.django), resolving paths through
    `resolve` (the table above)."""

    def resolve_request(self, request):
        # As Django's BaseHandler.resolve_request (public), resolving through `resolve`.
        if hasattr(request, "urlconf"):
            set_urlconf(request.urlconf)
            resolver = get_resolver(request.urlconf)
        else:
            resolver = get_resolver()
        match = resolve(request.path_info, resolver)
        request.resolver_match = match
        return match


class McpRequest(WSGIRequest):
    """A /mcp request: Django's, its host (`get_host()`: the Host header checked against ALLOWED_HOSTS)
    worked out once. CommonMiddleware, the request-id middleware and the tool call behind a tools/call each
    ask for the host; nothing a request does changes its headers or the settings. A refused host is never
    kept: each asking is refused again, as before."""

    def get_host(self) -> str:
        host = self.__dict__.get("_lev_host")
        if host is None:
            host = self.__dict__["_lev_host"] = super().get_host()
        return host


class McpWSGIHandler(ChosenMiddleware, WSGIHandler):
    """Django's WSGI handler (request signals, so the database connection's age and health are kept as
    for any request) with /mcp's middleware only (MCP_MIDDLEWARE), its requests McpRequest."""

    middleware = MCP_MIDDLEWARE
    request_class = McpRequest
