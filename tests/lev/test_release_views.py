"""LEV_RELEASE_VIEWS (lev.api_request.LevRequestMixin, issue 24): an API view and /mcp's let go of what they
hold once their response is closed (sent) or, behind a tool call, read, so a request leaves no reference
cycle through a view, a DRF request or a response for the collector. Driven through the WSGI application
the production server runs (lev.wsgi), as it runs it: the response's body joined, then closed; the cyclic
garbage of one request watched with the collector's DEBUG_SAVEALL. Off: the view keeps them (the test
of the switch fails without the release)."""

from __future__ import annotations

import gc
import json

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connection
from django.test import RequestFactory
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lev.api_request import release
from lev.wsgi import application
from tests.factories import DealFactory


def _environ(method: str, path: str, key: str, body: bytes = b"") -> dict:
    """The WSGI environ of a request, as Django's RequestFactory builds it (a fresh body stream each time)."""
    return RequestFactory().generic(method, path, data=body, content_type="application/json",
                                    HTTP_ACCEPT="application/json, text/event-stream",
                                    HTTP_AUTHORIZATION=f"Bearer {key}").environ


def _serve(environ: dict) -> tuple[str, bytes, list]:
    """One request as the server makes it; (status, body, the request's cyclic garbage)."""
    # As Django's test client: the request's start and end leave the test's database connection open (it
    # holds the test's transaction, which Django would otherwise take for a connection to close).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        return _serve_once(environ)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _serve_once(environ: dict) -> tuple[str, bytes, list]:
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        started = {}
        result = application(environ, lambda status, headers, exc_info=None: started.update(status=status))
        try:
            body = b"".join(result)
        finally:
            result.close()
        gc.collect()
        garbage = list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return started["status"], body, garbage


def _held(garbage: list) -> list:
    # type(), not isinstance: the garbage holds lazy objects (the CSP nonce) that isinstance would evaluate.
    return [type(o).__name__ for o in garbage if issubclass(type(o), APIView | Request | Response)]


@pytest.fixture
def deal(account):
    return DealFactory(account=account, title="Released")


def _tool_call(deal_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                       "params": {"name": "get_deal", "arguments": {"deal_id": deal_id}}}).encode()


@pytest.mark.parametrize("release_views", [True, False], ids=["on", "off"])
def test_a_tool_call_leaves_no_view_in_a_reference_cycle(settings, api_key, deal, release_views):
    settings.LEV_RELEASE_VIEWS = release_views
    _serve(_environ("POST", "/mcp", api_key, _tool_call(deal.pk)))  # warm: first-use caches
    status, body, garbage = _serve(_environ("POST", "/mcp", api_key, _tool_call(deal.pk)))
    assert status.startswith("200"), body
    if release_views:
        # Neither /mcp's view nor the API view behind the tool, their DRF requests or the tool's response.
        assert _held(garbage) == []
    else:
        assert {"McpView", "DealDetailApi", "LevRequest", "Response"} <= set(_held(garbage))
    # The same answer as the API's own, either way.
    status, api_body, _garbage = _serve(_environ("GET", f"/api/v1/deals/{deal.pk}/", api_key))
    assert status.startswith("200")
    assert json.loads(body)["result"]["structuredContent"]["deal"] == json.loads(api_body)
    assert json.loads(api_body)["title"] == "Released"


def test_release_runs_the_closers_without_ending_the_request(api, deal):
    """What direct dispatch calls on a response it read: the view lets go, and Django's request_finished,
    which would close the database connection of the request still running, is not sent."""
    finished = []

    def count(**kwargs):
        finished.append(kwargs)

    request_finished.connect(count)
    try:
        response = api.get(f"/api/v1/deals/{deal.pk}/")  # the test client closes it: the view already let go
        assert response.status_code == 200 and len(finished) == 1
        view = response.renderer_context["view"]
        assert view.__dict__ == {} and response.renderer_context["request"].parser_context is None

        let_go = []
        response._resource_closers.append(lambda: let_go.append(True))
        connection.ensure_connection()
        release(response)
        assert let_go == [True] and response._resource_closers == []
        assert len(finished) == 1 and connection.connection is not None  # no signal: the connection stays
    finally:
        request_finished.disconnect(count)


def test_the_setting_is_on_by_default():
    from django.conf import settings

    assert settings.LEV_RELEASE_VIEWS is True
