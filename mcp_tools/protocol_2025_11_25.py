"""MCP specification 2025-11-25 (and the initialize-based revisions before it) on /mcp: the dispatcher.

`answer` checks the JSON-RPC message (`mcp_tools.jsonrpc`: every protocol error is answered here, so the
SDK only ever sees valid requests for methods it has) and answers what needs none of the SDK's machinery:
`tools/call`, `tools/list`, `ping`, notifications and responses. Stateless JSON mode needs no transport,
event loop or task group for those, which the SDK's path builds for every request. Anything else
(initialize, resources/list, ...) returns None and goes the SDK's way (`mcp_tools.adapters.sdk`). A request
of MCP 2026-07-28 (`mcp_tools.protocol_2026_07_28.is_modern`) is handed whole to that revision's
dispatcher: the SDK (mcp 1.x) does not speak it.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpResponse

from mcp_tools import budget, extra_tools, jsonrpc, protocol_2026_07_28
from mcp_tools.calls import credential_scopes, step_up_challenge
from mcp_tools.results import http_answer
from mcp_tools.toolsets import EVERYTHING


def answer(server: Any, request: Any) -> HttpResponse | None:
    """`request.data` is the parsed body (the view parsed it); `server` is the LevMCP answering."""
    message = request.data
    try:
        kind = jsonrpc.kind(message)
        if kind != "response" and protocol_2026_07_28.is_modern(message, request.headers.get("MCP-Protocol-Version")):
            # 2026-07-28 defines no client notification over HTTP; one is accepted and ignored,
            # as in 2025-11-25.
            return server.handle_modern(request, message) if kind == "request" else \
                HttpResponse(status=202, content_type="application/json")
        jsonrpc.check_protocol_version(request.headers.get("MCP-Protocol-Version"), message)
        if kind != "request":
            # Stateless: no session to initialise, no request of ours a response could answer,
            # and nothing running on another HTTP request that a cancellation could stop.
            return HttpResponse(status=202, content_type="application/json")
        jsonrpc.check_request(message, server.request_models)
    except jsonrpc.JsonRpcError as error:
        return error.response()
    method, params = message["method"], message.get("params") or {}
    challenge = None
    if method == "tools/list":
        result: dict[str, Any] | str = extra_tools.listed(
            server.tools_list_for(credential_scopes(request), getattr(request, "mcp_selection", EVERYTHING)),
            modern_era=False)
    elif method == "tools/call" and (extra := extra_tools.owner(params["name"], modern_era=False)) is not None:
        result = extra.call_legacy(params["name"])
    elif method == "tools/call":
        called = server.call_tool_sync(params["name"], params.get("arguments"), request)
        challenge = step_up_challenge(request, called)
        # Every result is `mcp_tools.results.result`'s: one text block holding the payload's JSON, which
        # is written into the body as it is (neither dumped through pydantic nor serialized again).
        result = budget.result_json(called.text, is_error=bool(called.isError))
    elif method == "ping":
        result = {}
    else:
        return None
    # The result in UTF-8, exactly as `mcp_tools.budget` counts it; the id as the client may send it
    # (escaped, so even a lone surrogate in it is valid JSON in a UTF-8 body).
    if not isinstance(result, str):
        result = budget.dumps(result)
    body = f'{{"jsonrpc":"2.0","id":{json.dumps(message["id"])},"result":{result}}}'
    return http_answer(body, challenge)
