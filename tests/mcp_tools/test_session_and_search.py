"""A key that expires while an agent is working, and `list_deals` search, end to end over /mcp."""

from __future__ import annotations

import datetime as dt
import json

import httpx
import pytest
from django.utils import timezone

from lev.accounts.models import ApiKey
from tests.factories import DealFactory

pytestmark = pytest.mark.django_db(transaction=True)


def rpc(http: httpx.Client, url: str, request_id: int, method: str, params: dict | None = None) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, **({"params": params} if params else {})}
    return http.post(url, json=body)


def test_a_key_that_expires_mid_session_is_refused_on_the_next_call(live_server, api_key, account):
    DealFactory(account=account, title="Alpha Tower")
    ApiKey.objects.update(expires_at=timezone.now() + dt.timedelta(hours=1))
    url = f"{live_server.url}/mcp"
    headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json, text/event-stream"}
    with httpx.Client(headers=headers, timeout=30) as http:
        started = rpc(http, url, 1, "initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
        assert started.status_code == 200
        first = rpc(http, url, 2, "tools/call", {"name": "list_deals", "arguments": {}})
        assert first.status_code == 200
        assert json.loads(first.json()["result"]["content"][0]["text"])["total"] == 1

        # The key's lifetime ends while the agent is still working (its row says so from now on).
        ApiKey.objects.update(expires_at=timezone.now() - dt.timedelta(seconds=1))
        refused = rpc(http, url, 3, "tools/call", {"name": "list_deals", "arguments": {}})
    assert refused.status_code == 401
    assert refused.headers["WWW-Authenticate"].startswith("Bearer")
    assert refused.json()["message"] == "Unauthorized: your session has expired. Please sign in again."


def test_list_deals_search_keeps_only_deals_whose_title_has_the_words(mcp, account):
    DealFactory(account=account, title="Alpha Tower refinance")
    DealFactory(account=account, title="Beta Plaza")
    DealFactory(account=account, title="alpha industrial park")
    found = mcp.ok("list_deals", {"search": "ALPHA"})
    assert sorted(d["title"] for d in found["deals"]) == ["Alpha Tower refinance", "alpha industrial park"]
    assert found["total"] == 2
    assert mcp.ok("list_deals", {"search": "gamma"})["deals"] == []
