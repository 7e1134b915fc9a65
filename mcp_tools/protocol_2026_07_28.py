"""MCP specification 2026-07-28 on /mcp, beside 2025-11-25 on the same URL.

2026-07-28 is stateless: no `initialize`, no sessions. Every request carries in `params._meta`
the protocol version (`io.modelcontextprotocol/protocolVersion`) and the client's capabilities
(`io.modelcontextprotocol/clientCapabilities`), and the HTTP request mirrors the body in headers
(`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`). This module decides which era a request is of
and answers the modern ones itself (django-mcp-server and the `mcp` 1.x SDK speak only the
initialize-based revisions): the 2025-11-25 dispatcher (`mcp_tools.protocol_2025_11_25.answer`) asks
`is_modern` of every message and hands a modern request to `answer` here, which `check`s it first.

A request is modern when its `_meta` names a protocol version that is not one of the legacy
revisions, or when its `MCP-Protocol-Version` header is 2026-07-28. Anything else is legacy and is
answered exactly as before (an unknown header version without a modern `_meta` stays the legacy
400/-32600, see `mcp_tools.jsonrpc`).

A modern request is checked in this order (streamable-http transport, "Server Validation"; the
official conformance suite's `server-stateless` scenario):

| what is wrong                                                  | HTTP | code   |
|----------------------------------------------------------------|------|--------|
| `_meta`, its protocolVersion or its clientCapabilities missing | 400  | -32602 |
| MCP-Protocol-Version / Mcp-Method / Mcp-Name header missing     | 400  | -32020 |
|   or not the body's value (Mcp-Name may be `=?base64?…?=`)     |      |        |
| the protocol version is not one this server speaks              | 400  | -32022 |
| a method this server lacks (removed ones too: initialize,      | 404  | -32601 |
|   ping, logging/setLevel, resources/subscribe, …)              |      |        |
| params that do not fit the method, an unknown tool (its        | 400  | -32602 |
|   VALIDATION_ERROR object in `data`), "Resource not found"      |      |        |

(-32602 is 400 whatever produced it, as the official Python SDK 2.x answers it in this era; a
well-formed request of 2025-11-25 still gets HTTP 200 with any JSON-RPC error.)

Methods answered: `server/discover`, `tools/list`, `tools/call`, `resources/list`,
`resources/templates/list`, `resources/read` and `prompts/list` (the server has no resources or
prompts: empty lists, and "Resource not found" as -32602 with the URI in `data`, 2026-07-28's code
for it). `subscriptions/listen` is 404/-32601: the server advertises no list-changed or subscribe
capability, so there is nothing to listen to. Every result carries `resultType: "complete"`; the
cacheable ones carry `ttlMs` and `cacheScope`. `tools/list` is `private`: it lists only the tools
the credential's scopes allow, so a cache must not be shared across credentials (and only those of
the toolsets the request selects, `mcp_tools.toolsets`, by its URL or headers).

`tools/call` goes through the same `mcp_tools.calls.call` as 2025-11-25 (argument checks, scopes,
byte budget, the breaker, metrics, the request id, the OAuth step-up 403): only the envelope differs.
The byte budget (`mcp_tools.budget`) counts the same bytes in both eras; a 2026-07-28 result adds
`resultType` and `_meta` (the server's name and version, under 100 bytes) after them.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import pydantic
from django.http import HttpResponse
from mcp import types
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS

from mcp_tools import budget, confirmations, extra_tools, jsonrpc
from mcp_tools.calls import credential_scopes, step_up_challenge
from mcp_tools.registry import TOOLS
from mcp_tools.results import http_answer
from mcp_tools.toolsets import EVERYTHING

MODERN_VERSION = "2026-07-28"
# server/discover and -32022 list every version this endpoint speaks, the modern one first.
SUPPORTED_VERSIONS = [MODERN_VERSION, *sorted(SUPPORTED_PROTOCOL_VERSIONS, reverse=True)]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022

# Caching hints (2026-07-28 "Caching"). The catalogue changes only with a deploy, but which tools a
# credential sees follows its scopes, which its owner may change: a minute, private to the credential.
TOOLS_TTL_MS = 60_000
# server/discover and the (empty) resource and prompt lists are the same for every caller.
PUBLIC_TTL_MS = 300_000

# Methods whose Mcp-Name header mirrors a body field.
_NAME_FIELD = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_ECHO_MAX = 200

# method -> the SDK model its params are checked with (pydantic allows the `_meta` they carry).
_MODELS: dict[str, type[pydantic.BaseModel]] = {
    "tools/call": types.CallToolRequest,
    "tools/list": types.ListToolsRequest,
    "resources/list": types.ListResourcesRequest,
    "resources/templates/list": types.ListResourceTemplatesRequest,
    "resources/read": types.ReadResourceRequest,
    "prompts/list": types.ListPromptsRequest,
}
METHODS = frozenset({"server/discover", *_MODELS})


def _meta_of(message: dict[str, Any]) -> Any:
    params = message.get("params")
    return params.get("_meta") if isinstance(params, dict) else None


def client_capabilities(params: Any) -> Any:
    """What `_meta` says the client can do (None when it says nothing)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(META_CAPABILITIES) if isinstance(meta, dict) else None


def is_modern(message: dict[str, Any], header_version: str | None) -> bool:
    """Whether a JSON-RPC message is of the 2026-07-28 era (see the module docstring)."""
    meta = _meta_of(message)
    if isinstance(meta, dict) and META_VERSION in meta:
        return meta[META_VERSION] not in SUPPORTED_PROTOCOL_VERSIONS
    return header_version == MODERN_VERSION


def _error(code: int, message: str, request_id: Any, status: int, data: dict[str, Any] | None = None) -> HttpResponse:
    return jsonrpc.JsonRpcError(code, message, id=request_id if jsonrpc.is_id(request_id) else None,
                                http_status=status, data=data).response()


def _decoded(value: str) -> str | None:
    """A header value as the client meant it: `=?base64?…?=` decoded (None if it does not decode)."""
    if value.startswith("=?base64?") and value.endswith("?=") and len(value) >= len("=?base64??="):
        try:
            return base64.b64decode(value[len("=?base64?"):-2], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    return value


def check(message: dict[str, Any], headers: Any) -> HttpResponse | None:
    """The error answer for a modern request that is malformed, mismatched or of a version or
    method this server lacks; None when it may be answered."""
    request_id, method = message.get("id"), message["method"]
    meta = _meta_of(message)
    if not isinstance(meta, dict):
        return _error(types.INVALID_PARAMS, "Invalid params: _meta is required (with "
                      f"{META_VERSION} and {META_CAPABILITIES})", request_id, 400)
    version = meta.get(META_VERSION)
    if not isinstance(version, str):
        return _error(types.INVALID_PARAMS, f"Invalid params: _meta.{META_VERSION} is required (a string)",
                      request_id, 400)
    if not isinstance(meta.get(META_CAPABILITIES), dict):
        return _error(types.INVALID_PARAMS, f"Invalid params: _meta.{META_CAPABILITIES} is required (an object)",
                      request_id, 400)
    mismatch = _header_mismatch(message, headers, version)
    if mismatch:
        return _error(HEADER_MISMATCH, f"Header mismatch: {mismatch}", request_id, 400)
    if version != MODERN_VERSION:
        requested = version[:40]
        return _error(UNSUPPORTED_PROTOCOL_VERSION,
                      f"Unsupported protocol version: {requested!r}; this server speaks "
                      f"{', '.join(SUPPORTED_VERSIONS)}",
                      request_id, 400, data={"supported": SUPPORTED_VERSIONS, "requested": requested})
    if method not in METHODS:
        return _error(types.METHOD_NOT_FOUND, f"Method not found: {method[:40]}", request_id, 404)
    model = _MODELS.get(method)
    if model is not None:
        try:
            model.model_validate({"method": method, "params": message.get("params")})
        except pydantic.ValidationError as exc:
            return _error(types.INVALID_PARAMS, f"Invalid params: {jsonrpc.describe(exc.errors()[0])}",
                          request_id, 400)
    return None


def _header_mismatch(message: dict[str, Any], headers: Any, version: str) -> str | None:
    method = message["method"]
    expected = [("MCP-Protocol-Version", version), ("Mcp-Method", method)]
    field = _NAME_FIELD.get(method)
    if field is not None:
        value = (message.get("params") or {}).get(field)
        if isinstance(value, str):
            expected.append(("Mcp-Name", value))
    for name, body_value in expected:
        sent = headers.get(name)
        if sent is None:
            return f"the {name} header is required (it must be {_short(body_value)})"
        if (_decoded(sent) if name == "Mcp-Name" else sent) != body_value:
            return f"{name} header value {_short(sent)} does not match body value {_short(body_value)}"
    return None


def _short(value: str) -> str:
    return repr(value[:_ECHO_MAX])


def complete(result: dict[str, Any], server_info: dict[str, str], **hints: Any) -> dict[str, Any]:
    """A result of this era: `resultType`, the server named in `_meta` (basic/index "Per-response protocol
    fields": SHOULD on every result) and the caching `hints` of a cacheable one."""
    return {**result, "resultType": "complete", **hints, "_meta": {META_SERVER_INFO: server_info}}


def interim(result: dict[str, Any], server_info: dict[str, str]) -> dict[str, Any]:
    """An `input_required` result (basic/patterns/mrtr) with the server named in `_meta`."""
    return {**result, "_meta": {META_SERVER_INFO: server_info}}


def invalid_params(request_id: Any, message: str) -> HttpResponse:
    return _error(types.INVALID_PARAMS, message[:300], request_id, 400)


def result_body(request_id: Any, result: str) -> str:
    return f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"result":{result}}}'


def tool_result_json(text: str, server_info: dict[str, str], *, is_error: bool) -> str:
    """`budget.result_json` (the bytes the budget counts) followed by `resultType` and `_meta`."""
    tail = json.dumps({"resultType": "complete", "_meta": {META_SERVER_INFO: server_info}}, separators=(",", ":"))
    return budget.result_json(text, is_error=is_error)[:-1] + "," + tail[1:]


def resource_not_found(request_id: Any, uri: str) -> HttpResponse:
    # 2026-07-28 (SEP-2164): "Resource not found" is invalid params (-32602), the URI in `data`.
    return _error(types.INVALID_PARAMS, "Resource not found", request_id, 400, data={"uri": uri[:_ECHO_MAX]})


def unknown_tool(request_id: Any, name: str, contract: dict[str, Any]) -> HttpResponse:
    return _error(types.INVALID_PARAMS, f"Unknown tool: {name[:_ECHO_MAX]}; call tools/list for the available tools",
                  request_id, 400, data=contract)


def discover(capabilities: dict[str, Any], instructions: str, server_info: dict[str, str]) -> dict[str, Any]:
    """server/discover: the versions, the capabilities (as initialize would give them) and instructions."""
    # Nothing is delivered on subscriptions/listen: no list-changed or subscribe promises.
    offered = {name: {} for name in ("tools", "resources", "prompts") if name in capabilities}
    return complete({"supportedVersions": SUPPORTED_VERSIONS, "capabilities": offered, "instructions": instructions},
                    server_info, ttlMs=PUBLIC_TTL_MS, cacheScope="public")


def answer(server: Any, request: Any, message: dict[str, Any]) -> HttpResponse:
    """Answer a request of this revision: every method it may name is answered here, none goes the SDK's
    way. `server` is the LevMCP answering (its catalogue, `call_tool_sync`, server info)."""
    refused = check(message, request.headers)
    if refused is not None:
        return refused
    method, params, request_id = message["method"], message.get("params") or {}, message["id"]
    challenge = None
    if method == "tools/call" and (extra := extra_tools.owner(params["name"], modern_era=True)) is not None:
        return extra.call_modern(request, message, server.server_info)
    if method == "tools/call":
        # A client that can show a form is asked to confirm what cannot be undone (confirmations).
        request.mcp_ask = confirmations.Ask.of(params, client_capabilities(params))
        try:
            called = server.call_tool_sync(params["name"], params.get("arguments"), request)
        except confirmations.InvalidInput as exc:
            return invalid_params(request_id, f"Invalid params: {exc}")
        if isinstance(called, confirmations.InputRequired):
            return http_answer(result_body(request_id, budget.dumps(interim(called.as_result(), server.server_info))),
                               None)
        if params["name"] not in TOOLS:
            # server/tools, "Error Handling": an unknown tool is a protocol error, -32602; the contract's
            # VALIDATION_ERROR object (counted in the metrics as in 2025-11-25) is its data.
            return unknown_tool(request_id, params["name"], called.structuredContent or {})
        challenge = step_up_challenge(request, called)
        result = tool_result_json(called.text, server.server_info, is_error=bool(called.isError))
    elif method == "tools/list":
        listed = extra_tools.listed(
            server.tools_list_for(credential_scopes(request), getattr(request, "mcp_selection", EVERYTHING)),
            modern_era=True)
        result = budget.dumps(complete(listed, server.server_info, ttlMs=TOOLS_TTL_MS, cacheScope="private"))
    elif method == "server/discover":
        result = budget.dumps(server.discover_result)
    elif method == "resources/read":
        # This server has no resources (resources/list is empty): every URI names none.
        return resource_not_found(request_id, params["uri"])
    else:
        listed = {"resources/list": {"resources": []}, "resources/templates/list": {"resourceTemplates": []},
                  "prompts/list": {"prompts": []}}[method]
        result = budget.dumps(complete(listed, server.server_info, ttlMs=PUBLIC_TTL_MS, cacheScope="public"))
    return http_answer(result_body(request_id, result), challenge)
