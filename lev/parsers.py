"""Request parsing and content negotiation for the REST API and /mcp.

Every body the API cannot take becomes a ParseError (a 400 `VALIDATION_ERROR` through the one
exception handler), never a crash: DRF's own JSON parser lets `RecursionError` (e.g. 3,000 `[`)
escape. And every answer is JSON: an `Accept` or `?format=` the view cannot serve falls back to
its first renderer instead of a 406 or 404 page.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import SuspiciousOperation
from django.http import Http404
from rest_framework import parsers
from rest_framework.exceptions import NotAcceptable, ParseError
from rest_framework.negotiation import DefaultContentNegotiation

from lev.limits import JSON_MAX_DEPTH


def json_depth_exceeds(value: Any, limit: int = JSON_MAX_DEPTH) -> bool:
    """True when arrays/objects nest more than `limit` levels. Iterative: the point is to never
    recurse on the caller's data."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, Mapping) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, Mapping | list))
    return False


class JSONParser(parsers.JSONParser):
    """DRF's strict JSON parser (no NaN/Infinity) whose every failure is a ParseError."""

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON parse error - nested more than {JSON_MAX_DEPTH} levels deep") from None
        except ValueError as exc:
            # DRF maps the json module's errors; this catches decoders' and others' ValueErrors.
            raise ParseError("JSON parse error - the body is not valid UTF-8 JSON") from exc
        if json_depth_exceeds(data):
            raise ParseError(f"JSON parse error - nested more than {JSON_MAX_DEPTH} levels deep")
        return data


class JsonFirstContentNegotiation(DefaultContentNegotiation):
    """The view's first renderer (JSON for the API and /mcp) whenever the client asks for a
    format the view does not have (`Accept: text/html`, `?format=api`) or the query string
    cannot be read: one JSON error body beats a 406/404 HTML page."""

    def select_renderer(self, request, renderers, format_suffix=None):
        # DRF's choice is a function of the Accept header, the format asked for and the renderers' classes
        # alone, and an API client sends the same few Accept headers call after call (an MCP tool call
        # makes two requests, /mcp's and the API view's behind it): each such choice is worked out once,
        # by DRF, and remembered — up to _CHOSEN_MAX of them, as Accept is the client's to vary.
        try:
            fmt = format_suffix or request.query_params.get(self.settings.URL_FORMAT_OVERRIDE)
        except SuspiciousOperation:  # a query string that cannot be read: DRF's choice, below, says so
            key = None
        else:
            key = (request.META.get("HTTP_ACCEPT"), fmt, tuple(type(r) for r in renderers))
            chosen = _CHOSEN.get(key)
            if chosen is not None:
                return renderers[chosen[0]], chosen[1]
        try:
            renderer, media_type = super().select_renderer(request, renderers, format_suffix)
        except (Http404, NotAcceptable, SuspiciousOperation):
            renderer, media_type = renderers[0], renderers[0].media_type
        if key is not None and len(_CHOSEN) < _CHOSEN_MAX:
            _CHOSEN[key] = (renderers.index(renderer), media_type)
        return renderer, media_type


_CHOSEN: dict[tuple, tuple[int, str]] = {}
_CHOSEN_MAX = 256
