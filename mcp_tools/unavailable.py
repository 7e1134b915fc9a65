"""The answer to a /mcp request that could not be served because a dependency is down.

Every /mcp request gets a JSON-RPC answer, even when its credentials could not be checked because
the database is unreachable: a `tools/call` gets a tool result with `isError: true` and the
UPSTREAM_UNAVAILABLE contract (so the agent waits `retryAfterMs` and retries); any other request
with an id gets a JSON-RPC error carrying the same object as `data`. Only a request with no
JSON-RPC id (a notification, or a body that is not JSON-RPC) gets a plain HTTP 503.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpResponse, JsonResponse

from lev.errors import UPSTREAM_MESSAGE, UpstreamUnavailable
from mcp_tools.errors import upstream_unavailable

# JSON-RPC's range for implementation-defined server errors.
SERVER_UNAVAILABLE_CODE = -32000


def _message(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def unavailable_response(body: bytes, retry_after_ms: int | None, protocol_version: str | None = None) -> HttpResponse:
    """`body` is the request's raw body (the view has already read it from the stream);
    `protocol_version` its MCP-Protocol-Version header (a 2026-07-28 result carries `resultType`)."""
    from mcp_tools import protocol_2026_07_28
    from mcp_tools.results import result as tool_result  # imports the transport library: import late

    failure = upstream_unavailable(retry_after_ms)
    message = _message(body)
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, str | int) and not isinstance(request_id, bool):
        if message.get("method") == "tools/call":
            payload = {"result": tool_result(failure.as_dict(), is_error=True).as_sdk().model_dump(
                by_alias=True, mode="json", exclude_none=True)}
            if protocol_2026_07_28.is_modern(message, protocol_version):
                payload["result"]["resultType"] = "complete"
        else:
            payload = {"error": {"code": SERVER_UNAVAILABLE_CODE, "message": UPSTREAM_MESSAGE,
                                 "data": failure.as_dict()}}
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, **payload}, separators=(",", ":"))
        return HttpResponse(body, content_type="application/json")
    error = UpstreamUnavailable()
    return JsonResponse(error.as_body(), status=error.http_status, headers=error.headers())
