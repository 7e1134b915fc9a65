"""The official MCP conformance suite's diagnostic tools, on /mcp only when a test setting is on.

`@modelcontextprotocol/conformance` checks a server through tools of its own naming (`test_error_handling`,
`test_missing_capability`, `test_input_required_result_elicitation`, ...): a server that does not list
one has the checks that call it reported "Not testable", or fails them (`bench/conformance.py`). This
module is those tools, answered at the protocol level (the request's params in, the JSON-RPC answer
out), never through the tool registry, the REST API or the database: they touch no data.

They are an app of their own (`mcp_tools.conformance`), installed by the test and conformance settings and
never by production's (`lev/settings.py`), which registers this module with `mcp_tools.extra_tools`. Even
installed, they exist only when `settings.LEV_MCP_CONFORMANCE_FIXTURE` is on (`LEV_MCP_CONFORMANCE_FIXTURE=1`,
what `make conformance` sets for the server it starts), read on every request so a test can flip it.
Off (the default), `tools/list` shows none of them and calling one is an unknown tool, as for any
other name. The production profile refuses to start with it on (`lev/settings.py`).

Both revisions' dispatchers (`mcp_tools.protocol_2025_11_25`, `mcp_tools.protocol_2026_07_28`) call `listed`
for tools/list and, for a tools/call of a name `owns` claims, `call_legacy` / `call_modern` before the
normal path. Which tools each revision lists (a listed tool makes its scenarios required):

* both: test_error_handling (an `isError` result in the error contract), test_simple_text,
  test_image_content, test_audio_content, test_embedded_resource, test_multiple_content_types
  (content blocks of each type);
* 2026-07-28 only, as that revision's stateless checks and input-required scenarios expect:
  test_missing_capability (-32021 with `requiredCapabilities: {"sampling": {}}` unless the request
  declares sampling), test_logging_tool (no `notifications/message`: the server sends none, with or
  without a `logLevel`), test_streaming_elicitation and the test_input_required_result_* tools
  (InputRequiredResult: `resultType: "input_required"`, `inputRequests`, `requestState`; the retry
  carries `inputResponses` and the echoed `requestState`).

A `requestState` is Django-signed (HMAC with SECRET_KEY, a salt of this module) and names the tool,
the round, the answers so far and the caller; one that fails verification, has expired
(`STATE_TTL_SECONDS`), or belongs to another tool or caller is -32602. `inputResponses` that is not an
object, or a response to a requested key that is not the shape its method answers, is -32602 too;
a requested key left unanswered is asked again (a new InputRequiredResult), keys never asked are
ignored. An input request is only sent for a capability the request declares in `_meta`; a tool
that cannot work without one answers -32021 naming it.
"""

from __future__ import annotations

import base64
import io
import json
import struct
import wave
import zlib
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core import signing
from django.http import HttpResponse
from mcp import types

from lev.errors import ErrorCode
from mcp_tools import budget, jsonrpc
from mcp_tools import protocol_2026_07_28 as modern
from mcp_tools.errors import ToolFailure

MISSING_REQUIRED_CLIENT_CAPABILITY = -32021  # 2026-07-28 MissingRequiredClientCapabilityError (HTTP 400)
# (the module's name before it moved: a state signed before the move still verifies)
STATE_SALT = "mcp_tools.conformance_fixture.requestState"
STATE_TTL_SECONDS = 600
_ECHO_MAX = 200


def enabled() -> bool:
    return bool(getattr(settings, "LEV_MCP_CONFORMANCE_FIXTURE", False))


# --- content of the simple tools -------------------------------------------------------------------
def _png() -> str:
    """A 1x1 red PNG, base64."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b"")
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + raw).decode()


def _wav() -> str:
    """A tenth of a second of silence, 8 kHz mono 16-bit WAV, base64."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * 800)
    return base64.b64encode(buffer.getvalue()).decode()


_IMAGE = {"type": "image", "data": _png(), "mimeType": "image/png"}
_RESOURCE = {"type": "resource", "resource": {"uri": "test://conformance/fixture.txt", "mimeType": "text/plain",
                                              "text": "An embedded text resource of the conformance fixture."}}
SIMPLE_CONTENT: dict[str, list[dict[str, Any]]] = {
    "test_simple_text": [{"type": "text", "text": "This is a simple text response for testing."}],
    "test_image_content": [_IMAGE],
    "test_audio_content": [{"type": "audio", "data": _wav(), "mimeType": "audio/wav"}],
    "test_embedded_resource": [_RESOURCE],
    "test_multiple_content_types": [{"type": "text", "text": "Multiple content types test:"}, _IMAGE, _RESOURCE],
}
ERROR_TOOL = "test_error_handling"
LOGGING_TOOL = "test_logging_tool"


def _error_payload() -> str:
    failure = ToolFailure(ErrorCode.BUSINESS_RULE,
                          "test_error_handling always fails: it is the conformance suite's diagnostic tool for "
                          "tool error results",
                          customer_message="This diagnostic tool always reports an error.")
    return budget.dumps(failure.as_dict())


# --- the input-required tools ----------------------------------------------------------------------
def _elicit(message: str, **properties: str) -> dict[str, Any]:
    return {"method": "elicitation/create", "params": {
        "message": message,
        "requestedSchema": {"type": "object", "properties": {name: {"type": kind} for name, kind in properties.items()},
                            "required": list(properties)}}}


def _sample(text: str, max_tokens: int) -> dict[str, Any]:
    return {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": max_tokens}}


_ROOTS = {"method": "roots/list", "params": {}}
# input request method -> the client capability it needs
CAPABILITY = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}


@dataclass(frozen=True)
class Interactive:
    """A tool that asks the client for input: one dict of input requests per round."""

    rounds: tuple[dict[str, dict[str, Any]], ...]
    done: str  # the final text; {key} is replaced by that key's answer
    stateful: bool = True  # a requestState from the first round on (later rounds always carry one)
    only_declared: bool = False  # ask only what the client declared (else -32021 for what it lacks)


NAME = _elicit("What is your name?", name="string")
CAPITAL = _sample("What is the capital of France?", 100)
CONFIRM = _elicit("Please confirm", ok="boolean")
INTERACTIVE: dict[str, Interactive] = {
    "test_input_required_result_elicitation": Interactive(({"user_name": NAME},), "Hello, {user_name}!",
                                                          stateful=False),
    "test_input_required_result_sampling": Interactive(({"capital_question": CAPITAL},),
                                                       "The model answered: {capital_question}", stateful=False),
    "test_input_required_result_list_roots": Interactive(({"client_roots": _ROOTS},),
                                                         "The client's roots: {client_roots}", stateful=False),
    "test_input_required_result_request_state": Interactive(({"confirm": CONFIRM},),
                                                            "state-ok: the echoed requestState verified, ok={confirm}"),
    "test_input_required_result_multiple_inputs": Interactive(
        ({"user_name": NAME, "greeting": _sample("Generate a greeting", 50), "client_roots": _ROOTS},),
        "{greeting}, {user_name}! Roots: {client_roots}"),
    "test_input_required_result_multi_round": Interactive(
        ({"step1": _elicit("Step 1: What is your name?", name="string")},
         {"step2": _elicit("Step 2: What is your favorite color?", color="string")}),
        "Hello, {step1}! Your favorite color is {step2}."),
    "test_input_required_result_tampered_state": Interactive(({"confirm": CONFIRM},),
                                                             "state-ok: the requestState verified, ok={confirm}"),
    "test_input_required_result_capabilities": Interactive(
        ({"user_name": NAME, "capital_question": CAPITAL, "client_roots": _ROOTS},),
        "Answered with the declared capabilities only: {answers}", only_declared=True),
    "test_streaming_elicitation": Interactive(({"user_name": NAME},), "Hello, {user_name}!", stateful=False),
    "test_missing_capability": Interactive(({"capital_question": CAPITAL},),
                                           "The model answered: {capital_question}", stateful=False),
}

_EMPTY_SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}
_DESCRIPTIONS = {
    ERROR_TOOL: "Conformance fixture: always returns a tool error result (isError).",
    LOGGING_TOOL: "Conformance fixture: runs without sending log notifications (no logLevel was set).",
    "test_missing_capability": "Conformance fixture: needs the client's sampling capability (-32021 without it).",
    "test_streaming_elicitation": "Conformance fixture: asks the user a question through elicitation.",
}
LEGACY_TOOLS = (ERROR_TOOL, *SIMPLE_CONTENT)
MODERN_TOOLS = (*LEGACY_TOOLS, LOGGING_TOOL, *INTERACTIVE)


def _tool(name: str) -> dict[str, Any]:
    description = _DESCRIPTIONS.get(name) or (
        f"Conformance fixture: asks the client for input ({', '.join(sorted(INTERACTIVE[name].rounds[0]))})."
        if name in INTERACTIVE else f"Conformance fixture: returns {name.removeprefix('test_').replace('_', ' ')}.")
    return {"name": name, "description": description, "inputSchema": _EMPTY_SCHEMA,
            "annotations": {"readOnlyHint": True, "openWorldHint": False}}


_LISTED = {False: [_tool(name) for name in LEGACY_TOOLS], True: [_tool(name) for name in MODERN_TOOLS]}


def owns(name: Any, *, modern_era: bool) -> bool:
    """Whether a tools/call of `name` is the fixture's (never when the setting is off)."""
    return isinstance(name, str) and name.startswith("test_") and enabled() and \
        name in (MODERN_TOOLS if modern_era else LEGACY_TOOLS)


def listed(result: dict[str, Any], *, modern_era: bool) -> dict[str, Any]:
    """A tools/list result with the fixture's tools after the server's own (unchanged when off)."""
    if not enabled():
        return result
    return {**result, "tools": [*result["tools"], *_LISTED[modern_era]]}


# --- answering ---------------------------------------------------------------------------------------
def call_legacy(name: str) -> str:
    """The `result` JSON of a 2025-11-25 tools/call of a fixture tool (`owns(name, modern_era=False)`)."""
    if name == ERROR_TOOL:
        return budget.result_json(_error_payload(), is_error=True)
    return budget.dumps({"content": SIMPLE_CONTENT[name], "isError": False})


def call_modern(request: Any, message: dict[str, Any], server_info: dict[str, str]) -> HttpResponse:
    """The answer to a 2026-07-28 tools/call of a fixture tool (`owns(name, modern_era=True)`); the
    request passed `protocol_2026_07_28.check`, so `params._meta` and its capabilities are there."""
    params, request_id = message["params"], message["id"]
    name = params["name"]
    if name == ERROR_TOOL:
        return _respond(request_id, modern.tool_result_json(_error_payload(), server_info, is_error=True))
    if name in SIMPLE_CONTENT:
        return _complete(request_id, SIMPLE_CONTENT[name], server_info)
    if name == LOGGING_TOOL:
        # 2026-07-28: no notifications/message without _meta's logLevel; this server sends none at all.
        return _complete(request_id, [{"type": "text", "text": "Ran without sending any log notification."}],
                         server_info)
    try:
        return _interactive(request, message, INTERACTIVE[name], server_info)
    except jsonrpc.JsonRpcError as error:
        error.id = request_id
        return error.response()


def _invalid(message: str, **data: Any) -> jsonrpc.JsonRpcError:
    return jsonrpc.JsonRpcError(types.INVALID_PARAMS, f"Invalid params: {message}", http_status=400, data=data or None)


def _principal(request: Any) -> str:
    user = getattr(request, "user", None)
    return str(getattr(user, "pk", "") or "")


def _state_of(request: Any, name: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """(round, answers so far) from a retry's requestState; (0, {}) for a first call."""
    if "requestState" not in params:
        return 0, {}
    state = params["requestState"]
    if not isinstance(state, str):
        raise _invalid("requestState must be the string the server sent")
    try:
        data = signing.loads(state, salt=STATE_SALT, max_age=STATE_TTL_SECONDS)
    except signing.SignatureExpired:
        raise _invalid("requestState has expired; call the tool again without it") from None
    except signing.BadSignature:
        raise _invalid("requestState failed its integrity check; send back exactly the value the server sent") \
            from None
    if data.get("tool") != name or data.get("caller") != _principal(request):
        raise _invalid("requestState belongs to another request; send back the value this request's answer carried")
    return int(data["round"]), dict(data["answers"])


def _state(request: Any, name: str, round_: int, answers: dict[str, Any]) -> str:
    return signing.dumps({"tool": name, "round": round_, "answers": answers, "caller": _principal(request)},
                         salt=STATE_SALT, compress=True)


def _answer_of(key: str, method: str, response: Any) -> tuple[bool, Any]:
    """(answered, the answer) of one input response; -32602 when it is not the shape `method` answers."""
    if not isinstance(response, dict):
        raise _invalid(f"inputResponses.{key[:_ECHO_MAX]} must be an object (the result of {method})",
                       inputResponse=key[:_ECHO_MAX])
    if method == "elicitation/create":
        action = response.get("action")
        if action not in ("accept", "decline", "cancel"):
            raise _invalid(f"inputResponses.{key[:_ECHO_MAX]}.action must be accept, decline or cancel",
                           inputResponse=key[:_ECHO_MAX])
        if action != "accept":
            return True, "(declined)" if action == "decline" else "(cancelled)"
        content = response.get("content")
        if not isinstance(content, dict) or not content:
            return False, None  # accepted with nothing filled in: asked again
        return True, next(iter(content.values())) if len(content) == 1 else content
    if method == "sampling/createMessage":
        content = response.get("content")
        if not isinstance(content, dict) or not isinstance(content.get("text", ""), str):
            raise _invalid(f"inputResponses.{key[:_ECHO_MAX]}.content must be a text content block",
                           inputResponse=key[:_ECHO_MAX])
        return True, content.get("text") or f"({content.get('type', 'no')} content)"
    roots = response.get("roots")
    if not isinstance(roots, list) or not all(isinstance(root, dict) and isinstance(root.get("uri"), str)
                                              for root in roots):
        raise _invalid(f"inputResponses.{key[:_ECHO_MAX]}.roots must be a list of roots with a uri",
                       inputResponse=key[:_ECHO_MAX])
    return True, ", ".join(root["uri"] for root in roots) or "(none)"


def _interactive(request: Any, message: dict[str, Any], tool: Interactive,
                 server_info: dict[str, str]) -> HttpResponse:
    params, request_id, name = message["params"], message["id"], message["params"]["name"]
    responses = params.get("inputResponses", {})
    if not isinstance(responses, dict):
        raise _invalid("inputResponses must be an object of the client's results, by the keys the server sent")
    round_, answers = _state_of(request, name, params)
    if round_ >= len(tool.rounds):
        raise _invalid("requestState names no pending round of this tool")
    declared = params["_meta"][modern.META_CAPABILITIES]
    asked = tool.rounds[round_]
    lacking = sorted({CAPABILITY[r["method"]] for r in asked.values()} - set(declared))
    if tool.only_declared:
        asked = {key: r for key, r in asked.items() if CAPABILITY[r["method"]] in declared}
    elif lacking:
        needed = ", ".join(lacking)
        raise jsonrpc.JsonRpcError(MISSING_REQUIRED_CLIENT_CAPABILITY,
                                   f"Missing required client capability: {name} needs {needed}, which the request "
                                   "did not declare in _meta.io.modelcontextprotocol/clientCapabilities",
                                   http_status=400, data={"requiredCapabilities": {cap: {} for cap in lacking}})
    pending = {}
    for key, input_request in asked.items():
        answered, answer = _answer_of(key, input_request["method"], responses[key]) if key in responses else \
            (key in answers, answers.get(key))  # answered on an earlier retry of this round (in the state)
        if answered:
            answers[key] = answer
        else:
            pending[key] = input_request
    if pending:
        # Asked again: the same round, with whatever this retry did answer kept in the state.
        return _input_required(request_id, pending, tool.stateful or round_ > 0,
                               _state(request, name, round_, answers), server_info)
    round_ += 1
    if round_ < len(tool.rounds):
        return _input_required(request_id, tool.rounds[round_], True, _state(request, name, round_, answers),
                               server_info)
    text = tool.done.format(answers=json.dumps(answers) if answers else "nothing could be asked",
                            **{key: answers.get(key, "") for round_asks in tool.rounds for key in round_asks})
    return _complete(request_id, [{"type": "text", "text": text}], server_info)


def _input_required(request_id: Any, asked: dict[str, Any], with_state: bool, state: str,
                    server_info: dict[str, str]) -> HttpResponse:
    result: dict[str, Any] = {"resultType": "input_required", "inputRequests": asked}
    if with_state:
        result["requestState"] = state
    return _respond(request_id, budget.dumps(modern.interim(result, server_info)))


def _complete(request_id: Any, content: list[dict[str, Any]], server_info: dict[str, str]) -> HttpResponse:
    return _respond(request_id, budget.dumps(modern.complete({"content": content, "isError": False}, server_info)))


def _respond(request_id: Any, result: str) -> HttpResponse:
    return HttpResponse(modern.result_body(request_id, result), content_type="application/json")
