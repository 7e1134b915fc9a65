"""`jsonrpc.check_request` answers a plain `tools/call` without the SDK's CallToolRequest model (issue 24): it
must answer every message as the model does. Each message below is checked both ways: the shortcut's
answer (accepted, or the error) against the model's own (`jsonrpc.check_request` with the shortcut's
test made to say no), and the shortcut must have answered the plain ones itself."""

from __future__ import annotations

import pytest
from mcp import types

from mcp_tools import jsonrpc
from mcp_tools.server import get_server

PARAMS = [
    {"name": "get_deal", "arguments": {"deal_id": 5}},
    {"name": "get_deal"},
    {"name": "get_deal", "arguments": None},
    {"name": "get_deal", "arguments": {}},
    {"name": "", "arguments": {"x": [1, {"y": None}]}},
    {"name": "get_deal", "arguments": {"deal_id": 5}, "extra": {"allowed": True}},
    {"name": "get_deal", "arguments": {"deal_id": 5}, "_meta": {"progressToken": "p1"}},
    {"name": "get_deal", "arguments": {"deal_id": 5}, "_meta": {"progressToken": [1]}},
    {"name": "get_deal", "arguments": {"deal_id": 5}, "_meta": None},
    {"name": "get_deal", "arguments": {"deal_id": 5}, "_meta": "x"},
    {"name": 7, "arguments": {}},
    {"name": None},
    {"name": ["get_deal"]},
    {"arguments": {"deal_id": 5}},
    {"name": "get_deal", "arguments": [5]},
    {"name": "get_deal", "arguments": "deal_id=5"},
    {"name": "get_deal", "arguments": 5},
    {},
    [],
    None,
    "get_deal",
    5,
]


def answer(message: dict, models: dict) -> str | None:
    try:
        jsonrpc.check_request(message, models)
    except jsonrpc.JsonRpcError as error:
        return f"{error.code} {error.message}"
    return None


@pytest.mark.parametrize("params", PARAMS, ids=lambda p: repr(p)[:60])
def test_a_tools_call_is_answered_as_the_sdks_model_answers_it(params, monkeypatch):
    models = get_server().request_models
    assert models["tools/call"] is types.CallToolRequest
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    if params is not None:
        message["params"] = params
    shortcut = answer(message, models)
    taken = jsonrpc._plain_tool_call(message.get("params"))
    monkeypatch.setattr(jsonrpc, "_plain_tool_call", lambda params: False)
    assert shortcut == answer(message, models)
    if taken:
        assert shortcut is None  # only messages the model accepts are taken
    plain = isinstance(params, dict) and isinstance(params.get("name"), str) and "_meta" not in params and (
        params.get("arguments") is None or isinstance(params.get("arguments"), dict))
    assert taken == plain


def test_other_methods_still_go_through_their_models():
    models = get_server().request_models
    bad = {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": 5}}
    assert answer(bad, models).startswith(f"{types.INVALID_PARAMS} Invalid params: uri")
    assert answer({"jsonrpc": "2.0", "id": 3, "method": "ping"}, models) is None
