"""Endpoints an app above the ground serves under a path of its own, answering in a shape of its own
(today the MCP endpoint, which `mcp_tools` registers from its `ready()`).

The ground routes and guards every request before any view runs: the production server reads a
request's body within the bound of its path and refuses an unreadable one in the path's shape
(`lev.wsgi`, `lev.asgi`), an endpoint's requests take a lean handler running only the middleware it
relies on (`lev.handlers`), a mistyped address under it gets the API's JSON 404 rather than a page
(`lev.middleware`), and OAuth binds tokens to it as a protected resource of its own (`lev.resource`).
What each of those needs to know of an endpoint — its path, the most body it reads, how it says "your
body could not be read", its middleware, whether it is a protected resource — it asks this registry,
never the app, which `lev` does not import.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Endpoint:
    path: str  # "/mcp": the endpoint and every address under it
    body_limit: Callable[[], int]  # the most body a request to it may carry (read when asked)
    unreadable: Callable[[str], bytes]  # the JSON body answering a request whose body `problem`
    # The names of settings.MIDDLEWARE its requests rely on (lev.handlers.EndpointHandler runs only
    # those, in settings.MIDDLEWARE's order); empty: the site's whole stack.
    middleware: tuple[str, ...] = ()
    # Of those, the ones run as another class in the same place ({name in settings.MIDDLEWARE: dotted
    # path}): the same answers, written for an endpoint that serves no pages (/mcp: django-csp's header
    # built once, lev.middleware.FixedContentSecurityPolicy). Run only where the name is in the site's stack.
    replacements: tuple[tuple[str, str], ...] = ()
    # An OAuth protected resource of its own (RFC 9728, RFC 8707): tokens may be bound to
    # `<origin><path>` and to addresses under it (lev.resource).
    protected_resource: bool = False

    def serves(self, path: str) -> bool:
        """The endpoint itself or an address under it, exactly as its URLs spell them."""
        return path == self.path or path.startswith(self.path + "/")


_endpoints: list[Endpoint] = []
_SLASHES = re.compile(r"/{2,}")


def register_endpoint(path: str, *, body_limit: Callable[[], int], unreadable: Callable[[str], bytes],
                      middleware: tuple[str, ...] = (), replacements: dict[str, str] | None = None,
                      protected_resource: bool = False) -> None:
    """Called from an app's `ready()`; registering the same path again replaces it."""
    _endpoints[:] = [e for e in _endpoints if e.path != path]
    _endpoints.append(Endpoint(path, body_limit, unreadable, tuple(middleware),
                               tuple(sorted((replacements or {}).items())), protected_resource))


def all_endpoints() -> list[Endpoint]:
    """Every registered endpoint, in the order they were registered."""
    return list(_endpoints)


def protected_resources() -> list[Endpoint]:
    """The endpoints that are OAuth protected resources of their own, in the order they were registered."""
    return [e for e in _endpoints if e.protected_resource]


def served_by(path: str) -> Endpoint | None:
    """The endpoint serving `path` as its URLs spell it (`/mcp`, `/mcp/x/deals`), or None."""
    return next((e for e in _endpoints if e.serves(path)), None)


def claimed_by(path: str) -> Endpoint | None:
    """The endpoint whose path `path` starts with, however it goes on (`/mcpx` too): for the guards that
    decide a bound or a refusal's shape before the URLs are matched."""
    return next((e for e in _endpoints if path.startswith(e.path)), None)


def answers_json(path: str) -> bool:
    """Whether `path`, as a client may mistype it (`/MCP`, `//mcp`), is under an endpoint: such a path
    answers JSON, never the site's HTML page."""
    path = _SLASHES.sub("/", path).lower()
    return any(path.startswith(e.path) for e in _endpoints)
