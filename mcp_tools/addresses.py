"""The REST API's addresses as the MCP tools name them: the route's path and the ids that fill it
(`at("/deals/{deal_id}/", deal_id=7)`), never a path the tool wrote out itself.

Over HTTP (LEV_API_BASE_URL set) an address is written out, as any client writes it. In process the
view its route names is called with the ids as the tool validated them (`routes`, built once from the
URLconf): the deal id the agent sent reaches the view as the int it is, not written into a path and
read back by the URL resolver. The path is still written, for what records the request (the access
and error logs, the links a view builds to its next page).

An id is held to its route's converter as the resolver would hold it (`<int:…>` takes a whole number
of 0 or more; anything else is the API's 404), so both transports answer alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.converters import IntConverter
from django.urls.resolvers import ResolverMatch, RoutePattern

# "<int:deal_id>" or "<deal_id>" in a route: "{deal_id}" in its address.
_PART = re.compile(r"<(?:[^>:]+:)?([^>]+)>")


@dataclass(frozen=True, slots=True)
class Address:
    """A route of the API (`template`, its parts in braces) and the values of its parts."""

    template: str
    ids: Mapping[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.template.format_map(self.ids) if self.ids else self.template


def at(template: str, **ids: Any) -> Address:
    """The API address `template` (a route's path, its ids in braces: "/deals/{deal_id}/") with `ids`."""
    return Address(template, ids)


@dataclass(frozen=True, slots=True)
class Route:
    view: Any
    route: str  # Django's route, as ResolverMatch.route spells it
    name: str | None
    converters: Mapping[str, Any]
    defaults: Mapping[str, Any]

    def match(self, ids: Mapping[str, Any]) -> ResolverMatch | None:
        """The match the resolver would make of this route's path filled with `ids`; None where it would
        find no route (an id its converter refuses)."""
        kwargs = dict(self.defaults)
        for name, converter in self.converters.items():
            value = ids[name]
            if type(converter) is IntConverter and type(value) is int:
                if value < 0:  # "-1" is not `[0-9]+`
                    return None
            else:
                text = str(value)
                if not re.fullmatch(converter.regex, text):
                    return None
                try:
                    value = converter.to_python(text)
                except ValueError:
                    return None
            kwargs[name] = value
        return ResolverMatch(self.view, (), kwargs, url_name=self.name, route=self.route)


def routes() -> dict[str, tuple[Route, ...]]:
    """Every path route of the URLconf by its address ("/api/v1/deals/{deal_id}/"), in the resolver's
    order; routes written as regular expressions have no address and are reached by their path."""
    return _routes(get_resolver())


@lru_cache(maxsize=8)  # keyed by the resolver: a test's own ROOT_URLCONF (a new resolver) has its own table
def _routes(resolver: URLResolver) -> dict[str, tuple[Route, ...]]:
    table: dict[str, list[Route]] = {}
    _collect(resolver, "", {}, {}, table)
    return {address: tuple(found) for address, found in table.items()}


def _collect(resolver: URLResolver, prefix: str, converters: dict, defaults: dict,
             table: dict[str, list[Route]]) -> None:
    for entry in resolver.url_patterns:
        if not isinstance(entry.pattern, RoutePattern):
            continue
        route = prefix + str(entry.pattern)
        parts = {**converters, **entry.pattern.converters}
        if isinstance(entry, URLResolver):
            _collect(entry, route, parts, {**defaults, **entry.default_kwargs}, table)
        elif isinstance(entry, URLPattern):
            address = "/" + _PART.sub(r"{\1}", route)
            table.setdefault(address, []).append(
                Route(entry.callback, route, entry.name, parts, {**defaults, **entry.default_args}))


def match(address: Address) -> ResolverMatch | None:
    """The view `address` names, with its ids; None where no route would be found. Raises
    LookupError for an address that is no route's (a tool's typo: a bug, not the agent's 404)."""
    found = routes().get(address.template)
    if found is None:
        raise LookupError(f"no API route has the address {address.template!r}")
    # Routes of one address that differ in their converters are tried in order, as the resolver tries them.
    for route in found:
        matched = route.match(address.ids)
        if matched is not None:
            return matched
    return None
