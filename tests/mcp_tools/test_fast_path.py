"""The endpoint answers tools/call and tools/list itself (no per-request event loop); the result
must be exactly what django-mcp-server's SDK path gives for the same request."""

from __future__ import annotations

import pytest

from mcp_tools.server import LevMCP
from tests.factories import DealFactory

pytestmark = pytest.mark.django_db(transaction=True)


def spy_fast_path(monkeypatch) -> list:
    """Record what the fast path answered (None = left it to the SDK)."""
    answered: list = []
    original = LevMCP.handle_fast

    def spy(self, request):
        response = original(self, request)
        answered.append(response)
        return response

    monkeypatch.setattr(LevMCP, "handle_fast", spy)
    return answered


def both_ways(mcp, monkeypatch, name, arguments):
    answered = spy_fast_path(monkeypatch)
    fast = mcp.call_raw(name, arguments)
    assert any(r is not None for r in answered), "the fast path did not answer tools/call"
    with monkeypatch.context() as patch:
        patch.setattr(LevMCP, "handle_fast", lambda self, request: None)
        slow = mcp.call_raw(name, arguments)
    return fast.model_dump(), slow.model_dump()


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("get_deal", {"deal_id": "DEAL"}),  # success
        ("get_deal", {"deal_id": 99999}),  # API error
        ("create_deal", {"title": "T", "loan_amount": -3}),  # schema violation
        ("no_such_tool", {}),
    ],
)
def test_fast_path_matches_sdk_path(mcp, monkeypatch, account, name, arguments):
    deal = DealFactory(account=account)
    arguments = {k: deal.id if v == "DEAL" else v for k, v in arguments.items()}
    fast, slow = both_ways(mcp, monkeypatch, name, arguments)
    assert fast == slow


def test_tools_list_matches_sdk_path(mcp, monkeypatch):
    answered = spy_fast_path(monkeypatch)
    fast = [t.model_dump() for t in mcp.list_tools()]
    assert any(r is not None for r in answered)
    with monkeypatch.context() as patch:
        patch.setattr(LevMCP, "handle_fast", lambda self, request: None)
        slow = [t.model_dump() for t in mcp.list_tools()]
    assert fast == slow and len(fast) >= 7
