"""DRF's Request with the Django request's attributes that Lev's views read on every request defined
outright (`LevRequest`), for the views that serve the MCP hot path: the /mcp endpoint and every
account-scoped API view (`LevRequestMixin`).

DRF's Request finds an attribute of the Django request it wraps (method, META, headers, ...) through
`__getattr__`, which Python calls only after the ordinary lookup has failed: about 0.4 us each, where a
property costs a tenth of that, and an MCP tool call made about 30 such lookups (both requests: /mcp
and the API view behind the tool; issue 24, docs/benchmarks.md). The answers are the Django request's
own, read when asked; every other attribute still goes DRF's way.
"""

from __future__ import annotations

import contextlib
from typing import Any

from django.conf import settings
from rest_framework.request import Request


class LevRequest(Request):
    @property
    def method(self) -> str:
        return self._request.method

    @property
    def META(self) -> dict[str, Any]:
        return self._request.META

    @property
    def headers(self) -> Any:
        return self._request.headers

    @property
    def scheme(self) -> str:
        return self._request.scheme

    def get_host(self) -> str:
        return self._request.get_host()


class LevRequestMixin:
    """For an APIView: its request is a LevRequest (DRF builds it as ever; only its class changes)."""

    def initialize_request(self, request, *args, **kwargs) -> Request:
        drf_request = super().initialize_request(request, *args, **kwargs)  # type: ignore[misc]
        drf_request.__class__ = LevRequest
        return drf_request

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)  # type: ignore[misc]
        if settings.LEV_RELEASE_VIEWS:
            response._resource_closers.append(self._let_go)
        return response

    def _let_go(self) -> None:
        """Once the response is closed (sent) or read in process: the view drops what it holds, and its
        DRF request the parser context that refers back to it, so none of it is left in a reference cycle."""
        request = self.__dict__.get("request")
        if isinstance(request, Request):
            request.parser_context = None
        self.__dict__.clear()


def release(response) -> None:
    """What closing `response` releases (its resource closers: a LevRequestMixin view's state), for a
    response that is read in process and dropped, never sent: without Django's request_finished signal,
    which would end the request's database work while the request it serves is still running."""
    closers, response._resource_closers = response._resource_closers, []
    for closer in closers:
        with contextlib.suppress(Exception):  # as HttpResponseBase.close: one closer's failure stops no other
            closer()
