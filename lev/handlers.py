"""A Django request handler that runs a chosen part of settings.MIDDLEWARE, for the requests that need no
pages' middleware: a registered endpoint's (`EndpointHandler`, routed by lev.wsgi when
LEV_MCP_LEAN_MIDDLEWARE is on; the endpoint names its middleware when it registers, lev.endpoints); and
its table of resolved paths (`resolve`), which an in-process call given a path uses too.

The chain keeps the order settings.MIDDLEWARE gives the names, and a name not in settings.MIDDLEWARE is
not run (a deployment that removes a middleware removes it here too). URL resolution, views, exception
handling and statuses are Django's own.
"""

from __future__ import annotations

from functools import lru_cache

from django.core.handlers.wsgi import WSGIHandler, WSGIRequest
from django.urls import URLResolver, get_resolver, set_urlconf
from django.urls.resolvers import ResolverMatch

from lev.adapters.django import MiddlewareChain


# Paths resolved lately, per URL resolver: resolving walks the URL patterns one regular expression after
# another, on every request to an endpoint (an in-process call that names its route resolves nothing).
# The patterns are fixed for a process's life, and a ResolverMatch is read, never changed, by Django and
# DRF, so one path resolves to the same match every time; a path that resolves to nothing raises
# Resolver404 each time (an exception is never kept). Keyed by the resolver itself, so a request's own
# urlconf or a test's ROOT_URLCONF (a new resolver) never sees another's matches; bounded, as paths carry ids.
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


class EndpointRequest(WSGIRequest):
    """An endpoint's request: Django's, its host (`get_host()`: the Host header checked against
    ALLOWED_HOSTS) worked out once. CommonMiddleware, the request-id middleware and the tool call behind a
    tools/call each ask for the host; nothing a request does changes its headers or the settings. A
    refused host is never kept: each asking is refused again, as before."""

    def get_host(self) -> str:
        host = self.__dict__.get("_lev_host")
        if host is None:
            host = self.__dict__["_lev_host"] = super().get_host()
        return host


class EndpointHandler(ChosenMiddleware, WSGIHandler):
    """Django's WSGI handler (request signals, so the database connection's age and health are kept as
    for any request) with an endpoint's middleware only, its requests EndpointRequest."""

    request_class = EndpointRequest

    def __init__(self, middleware: tuple[str, ...], replacements: dict[str, str] | None = None):
        # Read by load_middleware, which Django's __init__ calls.
        self.middleware, self.replacements = tuple(middleware), dict(replacements or {})
        super().__init__()
