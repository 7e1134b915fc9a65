"""JSON-RPC 2.0 on /mcp: parse and check each message before anything answers it.

The MCP SDK's own checks answer with pydantic's text (`input_value=…`, pydantic URLs), the id
"server-error" and -32602 for almost everything. The endpoint checks every message here first, so
clients get the JSON-RPC codes with the request's id and a short plain message:

| what is wrong                                         | HTTP | code   | id             |
|-------------------------------------------------------|------|--------|----------------|
| not JSON (empty, not UTF-8, NaN/Infinity, too deep)   | 400  | -32700 | null           |
| JSON but not one JSON-RPC message (batch, scalar, …)  | 400  | -32600 | the id or null |
| MCP-Protocol-Version header names an unknown version  | 400  | -32600 | the id or null |
| a well-formed request for a method the server lacks   | 200  | -32601 | the id         |
| a well-formed request whose params do not fit it      | 200  | -32602 | the id         |

HTTP 400 for a message that is not a well-formed JSON-RPC request is what both official SDK
servers (Python and TypeScript) answer; a well-formed request always gets HTTP 200 with either a
result or a JSON-RPC error. Batches (a JSON array) were removed from MCP in 2025-06-18 and the SDK
never supported them, so a batch is one -32600 error, not a list of answers.

This table is the initialize-based era (2025-11-25 and before). Requests of MCP 2026-07-28 (their
`_meta` names that version, or their `MCP-Protocol-Version` header does) are checked and answered by
`mcp_tools.protocol_2026_07_28`, with that revision's codes and statuses (-32020, -32022, 404 for -32601, 400 for
-32602); everything above that happens before the era is known (parse errors, invalid requests)
answers the same in both.

An unsupported `MCP-Protocol-Version` header of a legacy client (no 2026-07-28 `_meta`) gets 400 as
the 2025-11-25 transport requires, with the initialize-based versions in `error.data.supported`.
The code is the legacy -32600, not 2026-07-28's -32022 `UnsupportedProtocolVersionError`: a client
that names no modern version in `_meta` is not a modern client, and -32022 is the answer a modern
client gets (`mcp_tools.protocol_2026_07_28`).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

import pydantic
from django.http import HttpResponse
from mcp import types
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS

# A version is a short date (YYYY-MM-DD); whatever a client sends is echoed only this far.
_ECHO_MAX = 40


@dataclass
class JsonRpcError(Exception):
    """A JSON-RPC error answer; `http_status` is 200 for well-formed requests."""

    code: int
    message: str
    id: str | int | None = None
    http_status: int = 200
    data: dict[str, Any] | None = field(default=None)

    def response(self) -> HttpResponse:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        body = {"jsonrpc": "2.0", "id": self.id, "error": error}
        return HttpResponse(json.dumps(body, separators=(",", ":")), status=self.http_status,
                            content_type="application/json")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class _TooManyDigits(ValueError):
    pass


def _parse_int(digits: str) -> int:
    # Python reads integers of at most sys.get_int_max_str_digits() digits (4300; a bound against
    # quadratic conversion). A longer one is no tool argument's value either: say so plainly.
    limit = sys.get_int_max_str_digits()
    if limit and len(digits.lstrip("-")) > limit:
        raise _TooManyDigits(limit)
    return int(digits)


def parse(body: bytes) -> Any:
    """The body as JSON (RFC 8259: UTF-8, no NaN/Infinity), or a -32700 parse error."""
    try:
        text = body.decode("utf-8")
        if not text.strip():
            raise ValueError("the body is empty")
        return json.loads(text, parse_constant=_refuse_constant, parse_int=_parse_int)
    except UnicodeDecodeError:
        reason = "the body is not UTF-8"
    except _TooManyDigits as exc:
        reason = f"the body holds an integer of more than {exc.args[0]} digits"
    except RecursionError:
        reason = "the body is nested too deeply"
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        reason = "the body is empty" if str(exc) == "the body is empty" else "the body is not valid JSON"
    raise JsonRpcError(types.PARSE_ERROR, f"Parse error: {reason}", http_status=400)


def unreadable_body(problem: str) -> bytes:
    """The parse error (-32700, id null) answering a body the server could not read ("could not be read:
    …"), before any view runs (`lev.endpoints`: the production server's body guard)."""
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": {
        "code": types.PARSE_ERROR, "message": f"Parse error: the request body {problem}"}},
        separators=(",", ":")).encode()


def is_id(value: Any) -> bool:
    # MCP: "Requests MUST include a string or integer ID ... the ID MUST NOT be null."
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _invalid(message: str, request_id: Any = None) -> JsonRpcError:
    return JsonRpcError(types.INVALID_REQUEST, f"Invalid request: {message}",
                        id=request_id if is_id(request_id) else None, http_status=400)


def kind(message: Any) -> str:
    """"request", "notification" or "response"; raises -32600 for anything else."""
    if isinstance(message, list):
        raise _invalid("batches are not supported; send one JSON-RPC message per HTTP request")
    if not isinstance(message, dict):
        raise _invalid("the body must be a JSON-RPC message (a JSON object)")
    request_id = message.get("id")
    if message.get("jsonrpc") != "2.0":
        raise _invalid('"jsonrpc" must be "2.0"', request_id)
    if "method" not in message:
        if is_id(request_id) and (("result" in message) != ("error" in message)):
            return "response"
        raise _invalid('a request needs "method" (and "id"); a response needs "id" and "result" or "error"',
                       request_id)
    # Any string names a method, the empty one too (JSON-RPC 2.0 and both SDKs' schemas say "a string"):
    # a request for one this server lacks is well formed and answered -32601 with HTTP 200.
    if not isinstance(message["method"], str):
        raise _invalid('"method" must be a string', request_id)
    if "params" in message and not isinstance(message["params"], dict | list):
        raise _invalid('"params" must be an object', request_id)
    if "id" not in message:
        return "notification"
    if not is_id(request_id):
        raise _invalid('"id" must be a string or an integer', request_id)
    return "request"


def check_protocol_version(header: str | None, message: dict[str, Any]) -> None:
    """400 for an `MCP-Protocol-Version` header this server does not speak (not on initialize,
    where the version is negotiated in the body). No header means 2025-03-26, as the spec says."""
    if header is None or header in SUPPORTED_PROTOCOL_VERSIONS or message.get("method") == "initialize":
        return
    requested = header[:_ECHO_MAX]
    supported = sorted(SUPPORTED_PROTOCOL_VERSIONS, reverse=True)
    raise JsonRpcError(
        types.INVALID_REQUEST,
        f"Bad Request: unsupported protocol version {requested!r}; this server speaks {', '.join(supported)}",
        id=message.get("id") if is_id(message.get("id")) else None,
        http_status=400,
        data={"supported": supported, "requested": requested},
    )


def describe(error: Any) -> str:
    loc = [str(p) for p in error.get("loc", ()) if isinstance(p, int) or str(p).isidentifier()]
    loc = loc[1:] if loc[:1] == ["params"] else loc
    where = ".".join(loc) or "params"
    if error.get("type") == "missing":
        return f"{where} is required"
    # pydantic's `msg` names the expected type ("Input should be a valid string") and never the
    # input value, unlike str(ValidationError).
    text = str(error.get("msg") or "is invalid")
    return f"{where}: {text[0].lower()}{text[1:]}"


def _plain_tool_call(params: Any) -> bool:
    """Whether `params` is a `tools/call`'s that the SDK's CallToolRequest accepts without a doubt: an
    object with a string `name`, `arguments` an object or null or absent, and no `_meta` (whose shape the
    model checks); other members are allowed (the model allows extra ones). Anything else is left to the
    model, which says what is wrong."""
    if type(params) is not dict or type(params.get("name")) is not str or "_meta" in params:
        return False
    arguments = params.get("arguments")
    return arguments is None or type(arguments) is dict


def check_request(message: dict[str, Any], models: dict[str, type[pydantic.BaseModel]]) -> None:
    """-32601 for a method the server does not have, -32602 for params that do not fit it."""
    method = message["method"]
    model = models.get(method)
    if model is None:
        raise JsonRpcError(types.METHOD_NOT_FOUND, f"Method not found: {method[:_ECHO_MAX]}", id=message["id"])
    if model is types.CallToolRequest and _plain_tool_call(message.get("params")):
        return  # what nearly every tools/call is: a plain name and arguments, which the model would accept
    try:
        model.model_validate({k: v for k, v in message.items() if k in ("method", "params")})
    except pydantic.ValidationError as exc:
        errors = exc.errors()
        raise JsonRpcError(types.INVALID_PARAMS, f"Invalid params: {describe(errors[0])}",
                           id=message["id"]) from None
