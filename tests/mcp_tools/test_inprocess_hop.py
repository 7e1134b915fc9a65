"""The in-process hop of a tool call (mcp_tools.client.direct_dispatch) calls the view itself and takes its
data unrendered; it answers (status, body, the headers a tool reads) what the full stack answers, request
for request. (The long way through a second Django handler, and its switch LEV_MCP_DIRECT_DISPATCH, are
retired: issue 40.)"""

from __future__ import annotations

import datetime as dt
import enum
import json
import uuid
from decimal import Decimal

import pytest
from django.test import Client
from django.utils.translation import gettext_lazy
from rest_framework.exceptions import ErrorDetail
from rest_framework.utils.encoders import JSONEncoder

from deals.models import Deal
from mcp_tools.client import InProcessTransport, json_native
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
        # (Not /account/: its limits' "resets_in_seconds" moves with the clock between the two requests.)
        ("GET", f"/api/v1/deals/{mine.id}/financials/", {}, auth),
        ("GET", "/api/v1/lenders/", {"page_size": "5"}, auth),
        ("GET", "/api/v1/market-rates/", {}, auth),
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


def test_in_process_writes_and_their_refusals_are_the_full_stacks(api_key, account, user, settings):
    deal = DealFactory(account=account)
    auth = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
    transport = InProcessTransport(host="testserver")
    refusals = [
        ("PATCH", f"/api/v1/deals/{deal.id}/", {"loan_amount": -5}),  # 400 with the field named
        ("PATCH", f"/api/v1/deals/{deal.id + 10_000}/", {"title": "x"}),  # 404
        ("POST", "/api/v1/deals/", {"title": ""}),
    ]
    for method, path, body in refusals:
        hop = transport.send(method, path, query={}, body=body, headers={**auth, "X-Request-Id": "w"})
        full = Client().generic(method, path, json.dumps(body), content_type="application/json",
                                headers={"Authorization": auth["Authorization"], "X-Request-Id": "w"})
        assert (hop.status, hop.body) == (full.status_code, json.loads(full.content)), path
    hop = transport.send("PATCH", f"/api/v1/deals/{deal.id}/", query={}, body={"title": "Renamed by a tool"},
                         headers={**auth, "X-Request-Id": "w"})
    assert hop.status == 200 and hop.body["title"] == "Renamed by a tool"
    assert Deal.objects.get(pk=deal.id).title == "Renamed by a tool"


class _Stage(enum.IntEnum):
    THREE = 3


def test_json_native_is_what_the_renderer_writes_and_json_reads_back():
    # Every type DRF's encoder knows, nested, with keys JSON writes as text.
    value = {
        "decimal": Decimal("12.50"), "when": dt.datetime(2026, 11, 25, 3, 4, 5, 600000, tzinfo=dt.UTC),
        "day": dt.date(2026, 11, 25), "at": dt.time(9, 30), "span": dt.timedelta(hours=2),
        "id": uuid.UUID(int=7), "lazy": gettext_lazy("Deal"), "detail": ErrorDetail("is required", code="required"),
        "enum": _Stage.THREE, "tuple": (1, 2.5, None, True), "nested": [{"x": [Decimal("1")]}],
        1: "int key", 2.5: "float key", False: "bool key", None: "none key", "set": {"kept as a list"},
    }
    expected = json.loads(json.dumps(value, cls=JSONEncoder))
    found = json_native(value)
    assert found == expected
    assert json.dumps(found) == json.dumps(expected)  # the same types too (str, not ErrorDetail)
    with pytest.raises(ValueError):
        json_native({"rate": float("nan")})


