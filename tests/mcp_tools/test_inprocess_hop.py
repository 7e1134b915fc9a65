"""The in-process hop of a tool call (mcp_tools.client.ApiHandler) runs only the API's middleware (the
request id and the JSON error body), not the page middleware the /mcp request already went through:
its answers (status, body, the headers a tool reads) are the full stack's, request for request."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from lev.handlers import API_MIDDLEWARE
from mcp_tools.client import InProcessTransport
from tests.factories import DealFactory

pytestmark = pytest.mark.django_db

KEPT_HEADERS = ("WWW-Authenticate", "Retry-After", "Allow", "X-Request-Id", "Content-Type")


def test_in_process_answers_are_the_full_stacks(api_key, account, other_account, settings):
    settings.LEV_RATE_LIMIT_READS = "100000/min"
    mine, theirs = DealFactory(account=account), DealFactory(account=other_account)
    auth = {"Authorization": f"Bearer {api_key}"}
    requests = [
        ("GET", f"/api/v1/deals/{mine.id}/", {}, auth),
        ("GET", f"/api/v1/deals/{mine.id}/", {"include": "properties,financials"}, auth),
        ("GET", f"/api/v1/deals/{theirs.id}/", {}, auth),  # another account's: 404 like a missing one
        ("GET", "/api/v1/deals/", {"limit": "0"}, auth),  # bad input: 400
        ("GET", "/api/v1/no-such-route/", {}, auth),  # no route: the JSON 404, not Django's page
        ("GET", f"/api/v1/deals/{mine.id}/", {}, {}),  # no credential: 401 with its challenge
        ("GET", f"/api/v1/deals/{mine.id}/", {}, {"Authorization": "Bearer lev_sk_wrong"}),
        ("DELETE", f"/api/v1/deals/{mine.id}/", {}, auth),  # 405 with Allow
    ]
    transport = InProcessTransport(host="testserver")
    for index, (method, path, query, headers) in enumerate(requests):
        request_id = f"hop-{index}"
        hop = transport.send(method, path, query=query, body=None, headers={**headers, "X-Request-Id": request_id})
        full = Client().generic(method, path + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else ""),
                                headers={**headers, "X-Request-Id": request_id, "Accept": "application/json"})
        assert hop.status == full.status_code, path
        assert hop.body == (json.loads(full.content) if full.content else None), path
        for name in KEPT_HEADERS:
            assert hop.headers.get(name) == full.headers.get(name), (path, name)
        assert hop.headers["X-Request-Id"] == request_id


def test_the_hop_runs_only_the_api_middleware(settings):
    handler = InProcessTransport.handler()
    chain, names = handler._middleware_chain, []
    while chain is not None:  # each middleware wrapped by Django's convert_exception_to_response
        middleware = getattr(chain, "__wrapped__", chain)
        if hasattr(middleware, "get_response"):  # a middleware class
            names.append(f"{type(middleware).__module__}.{type(middleware).__name__}")
            chain = middleware.get_response
            continue
        # A function middleware (django-simple-history's): its factory's name, the next one in its closure.
        cells = dict(zip(middleware.__code__.co_freevars, middleware.__closure__ or (), strict=False))
        if "get_response" not in cells:
            break  # the view handling itself
        names.append(f"{middleware.__module__}.{middleware.__qualname__.split('.<locals>')[0]}")
        chain = cells["get_response"].cell_contents
    assert names == [name for name in settings.MIDDLEWARE if name in API_MIDDLEWARE] == list(API_MIDDLEWARE)
