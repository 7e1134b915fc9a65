"""The MCP server: django-mcp-server's DjangoMCP with every tool behind the error contract.

`LevMCP.call_tool` replaces FastMCP's: it validates arguments itself (so a schema violation is a
VALIDATION_ERROR naming the argument, not pydantic's text), runs the tool with a LevClient bound
to the caller's credentials and a fresh request id, and turns any failure into the contract.
Nothing a tool raises reaches the transport.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pydantic
from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpResponse
from mcp.shared.exceptions import McpError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS, CallToolResult, ErrorData, ListToolsResult, TextContent, Tool
from mcp_server.djangomcp import DjangoMCP, django_request_ctx

import lev
from lev import limits
from lev.accounts import scopes
from lev.errors import ErrorCode
from lev.outages import is_dependency_outage, report_outage
from lev.request_id import reset_request_id, set_request_id
from lev.resource import bearer_challenge
from mcp_tools import budget, catalogue, confirmations, conformance_fixture, jsonrpc, modern
from mcp_tools.client import LevClient, default_transport
from mcp_tools.errors import ToolFailure, internal_error, upstream_unavailable, validation_failure
from mcp_tools.registry import TOOLS, ToolSpec, bind_client, record_tool_call, unbind_client
from mcp_tools.toolsets import EVERYTHING, Selection

logger = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Lev: commercial real estate deals and a lender directory. Deals belong to the user's account. "
    "Amounts are US dollars. Every failed call returns a JSON error with errorCategory, isRetryable, "
    "code and message: fix arguments on validation errors, relay customerMessage on business errors, "
    "wait retryAfterMs before retrying transient ones, never retry in a tight loop."
)


# pydantic error types -> messages that follow an argument name ("loan_amount must be ...").
_MESSAGES = {
    "missing": "is required",
    "extra_forbidden": "is not a known argument",
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
    "int_parsing": "must be a whole number",
    "int_type": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_parsing": "must be a number",
    "float_type": "must be a number",
    "finite_number": "must be a finite number",
    "bool_parsing": "must be true or false",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "string_unicode": "must be valid Unicode text",
    "string_too_short": "may not be empty",
    "string_too_long": "must be at most {max_length} characters",
    "string_pattern_mismatch": "has the wrong format",
    "date_parsing": "must be a date in YYYY-MM-DD format",
    "date_from_datetime_parsing": "must be a date in YYYY-MM-DD format",
    "date_type": "must be a date in YYYY-MM-DD format",
    "list_type": "must be a list",
    "too_long": "may list at most {max_length} items",
    "model_type": "must be an object",
    "dict_type": "must be an object",
    "json_invalid": "is not valid JSON",
}
# A wrong JSON type is named, so "must be a whole number, not true or false" says what went wrong.
_TYPE_ERRORS = {"int_type", "float_type", "bool_type", "string_type", "date_type", "list_type", "model_type",
                "dict_type"}
# Patterns of lev.limits -> what a value that misses them lacks.
_PATTERN_MESSAGES = {
    limits.TEXT_PATTERN: "may not contain control characters",
    limits.NON_BLANK_TEXT_PATTERN: "may not be blank or contain control characters",
    limits.ZIP_PATTERN: "must be a 5-digit ZIP code (or ZIP+4)",
    limits.IDEMPOTENCY_KEY_PATTERN: f"must be 1 to {limits.IDEMPOTENCY_KEY_MAX} visible ASCII characters "
                                    "(no spaces or control characters)",
    limits.EMAIL_PATTERN: "must be an email address such as name@lender.com",
}
# Tool arguments are at most a list of objects deep; anything much deeper is garbage, refused before
# it is serialized (so no RecursionError).
MAX_ARGUMENT_DEPTH = 8


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if value is None:
        return "null"
    return {str: "a string", int: "a number", float: "a number", list: "a list", dict: "an object"}.get(
        type(value), "another type")


def _printable(name: str) -> str:
    """An argument name as it may appear in an answer: control and surrogate characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


def _arg_errors(exc: pydantic.ValidationError) -> dict[str, list[str]]:
    """Name each bad argument (dotted path for nested ones) with a plain-language message."""
    fields: dict[str, list[str]] = {}
    for error in exc.errors():
        # pydantic adds union branches and validator names to the location; keep field names
        # and list indexes only.
        loc = [str(p) for p in error.get("loc", ()) if isinstance(p, int) or p.isidentifier()]
        loc = [p for p in loc if p not in ("str", "int", "float", "bool", "date", "list", "dict", "none")]
        name = ".".join(loc) or "arguments"
        kind = error.get("type", "")
        ctx = {k: int(v) if isinstance(v, float) and v.is_integer() else v
               for k, v in (error.get("ctx") or {}).items()}
        if kind in _TYPE_ERRORS and isinstance(error.get("input"), float) and not math.isfinite(error["input"]):
            # 1e400 and the like read as infinity, for an integer argument too: not "a number".
            message = _MESSAGES["finite_number"]
        elif kind == "literal_error":
            message = "must be one of: " + str(ctx.get("expected", "")).replace("'", "").replace(" or ", ", ")
        elif kind == "string_pattern_mismatch" and ctx.get("pattern") in _PATTERN_MESSAGES:
            message = _PATTERN_MESSAGES[ctx["pattern"]]
        elif kind in _MESSAGES:
            try:
                message = _MESSAGES[kind].format(**ctx)
            except (KeyError, IndexError):
                message = _MESSAGES[kind].split(" {")[0]
            if kind in _TYPE_ERRORS and "input" in error:
                message += f", not {_json_kind(error['input'])}"
        else:
            text = error.get("msg") or "is invalid"
            message = text[0].lower() + text[1:]
        if message not in fields.get(name, []):
            fields.setdefault(name, []).append(message)
    return fields


def _unreadable(name: str, value: Any) -> dict[str, list[str]]:
    """Errors for what no schema check can name: lone surrogates (not encodable, so not JSON pydantic
    can read) and nesting deeper than any argument has. Walks iteratively: depth is what is checked."""
    fields: dict[str, list[str]] = {}
    stack: list[tuple[str, Any, int]] = [(name, value, 0)]
    while stack:
        path, item, depth = stack.pop()
        if depth > MAX_ARGUMENT_DEPTH:
            fields.setdefault(name, ["is nested too deeply"])
            continue
        if isinstance(item, dict):
            for key, child in item.items():
                if not _is_utf8(key):
                    fields.setdefault(_printable(path), ["holds a key that is not valid Unicode text "
                                                         "(a lone surrogate)"])
                else:
                    stack.append((f"{path}.{key}", child, depth + 1))
        elif isinstance(item, list):
            stack.extend((f"{path}.{index}", child, depth + 1) for index, child in enumerate(item))
        elif isinstance(item, str) and not _is_utf8(item):
            fields.setdefault(_printable(path), ["must be valid Unicode text (it holds a lone surrogate)"])
    return fields


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _integral_numbers(value: Any) -> Any:
    """5.0 as 5: JSON Schema calls any number without a fraction an integer, and a JSON parser may
    hand it over as a float. (A float argument takes an integer in strict mode too.)"""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_integral_numbers(item) for item in value]
    if isinstance(value, dict):
        return {key: _integral_numbers(item) for key, item in value.items()}
    return value


def _arguments_json(arguments: dict[str, Any]) -> tuple[str | None, dict[str, list[str]]]:
    """The arguments as one JSON object, for pydantic's strict JSON validation, or the errors of
    the arguments that cannot be written as JSON (each named)."""
    parts: list[str] = []
    fields: dict[str, list[str]] = {}
    for name, value in arguments.items():
        problems = _unreadable(name, value)
        if problems:
            fields.update(problems)
            continue
        try:
            parts.append(f"{json.dumps(name)}:{json.dumps(_integral_numbers(value))}")
        except ValueError:  # an integer past Python's int/str digit limit
            fields[name] = ["is too large a number"]
    return ("{" + ",".join(parts) + "}", fields) if not fields else (None, fields)


class ToolResult:
    """A tool call's result: what the SDK's CallToolResult holds of it (Lev's results are one text block,
    the payload's JSON, beside the payload as structuredContent), built without pydantic's validation of
    each field and block (10 us of an MCP get_deal in process; issue 24). `text` is that JSON as
    `mcp_tools.budget` writes it; `content` is the block as the SDK's TextContent, and `as_sdk()` the whole
    CallToolResult, for the SDK's path (LevMCP.call_tool)."""

    __slots__ = ("isError", "structuredContent", "text")

    def __init__(self, text: str, structured: dict[str, Any], is_error: bool):
        self.text, self.structuredContent, self.isError = text, structured, is_error

    @property
    def content(self) -> list[TextContent]:
        return [TextContent(type="text", text=self.text)]

    def as_sdk(self) -> CallToolResult:
        return CallToolResult(content=self.content, structuredContent=self.structuredContent, isError=self.isError)


def _result(payload: dict[str, Any], *, is_error: bool, tool: str | None = None) -> ToolResult:
    """The result of a payload: its JSON as text content and the object as structuredContent.

    The final guard of the byte budget (`mcp_tools.budget`): tools fit their answers themselves, so an
    answer still over budget is a bug of the tool. It is never cut (cut JSON is no answer) and never
    sent whole: it becomes an INTERNAL_ERROR result naming the tool, logged as an error. An error
    payload over budget (thousands of bad arguments named) keeps its code and message and lists only
    the first named arguments."""
    text = budget.dumps(payload)
    size = budget.result_size(text, is_error=is_error)
    if size > budget.limit():
        payload = _shrunk_error(payload, size) if is_error else _oversize_error(tool, size)
        is_error = True
        text = budget.dumps(payload)
    return ToolResult(text, payload, is_error)


# What an over-budget error keeps: the first named arguments (names and messages shortened).
ERROR_FIELDS_KEPT = 20
# Characters kept of an over-budget error's message and hint (a message may name every bad argument).
ERROR_TEXT_KEPT = 1000
ERROR_NAME_KEPT = 200


def _oversize_error(tool: str | None, size: int) -> dict[str, Any]:
    logger.error("Tool %s answer of %d bytes is over the %d byte budget (LEV_MCP_MAX_RESPONSE_BYTES): "
                 "answered INTERNAL_ERROR", tool, size, budget.limit())
    return ToolFailure(
        ErrorCode.INTERNAL_ERROR,
        f"Internal error: the answer of {tool or 'this tool'} was too large to send.",
        hint="Ask for less (a smaller limit, fewer include items or narrower filters); the same call "
             "would fail again. Report the time of the call to Lev support.",
        details={"tool": tool},  # sizes and the budget stay in the log: no internals in answers
    ).as_dict()


def _shrunk_error(payload: dict[str, Any], size: int) -> dict[str, Any]:
    logger.warning("Error answer of %d bytes is over the %d byte budget: its details were shortened",
                   size, budget.limit())
    details = payload.get("details") if isinstance(payload.get("details"), dict) else {}
    fields = details.get("fields") if isinstance(details.get("fields"), dict) else {}
    kept = {str(name)[:ERROR_NAME_KEPT]: [str(m)[:ERROR_NAME_KEPT] for m in messages[:3]]
            if isinstance(messages, list) else messages
            for name, messages in list(fields.items())[:ERROR_FIELDS_KEPT]}
    shrunk = {key: (value[:ERROR_TEXT_KEPT] if isinstance(value, str) else value)
              for key, value in payload.items() if key != "details"}
    shrunk["details"] = {"fields": kept, "omitted_fields": len(fields) - len(kept), "truncated": True}
    return shrunk


def run_tool(spec: ToolSpec, arguments: dict[str, Any], request: Any) -> ToolResult:
    """Run one tool call synchronously; always returns a ToolResult."""
    client = LevClient(
        authorization=request.META.get("HTTP_AUTHORIZATION") if request is not None else None,
        transport=default_transport(
            host=request.get_host() if request is not None else "localhost",
            scheme=request.scheme if request is not None else "http",
            # The endpoint already authenticated this key: in-process calls need not look it up again.
            authenticated=(request.user, request.auth) if getattr(request, "auth", None) else None,
        ),
    )
    # The call's request id goes on every log line of the call, here and in the API.
    id_token = set_request_id(client.request_id)
    client_token = bind_client(client)
    try:
        payload = spec.fn(**arguments)
        return _result(payload, is_error=False, tool=spec.name)
    except ToolFailure as failure:
        if failure.code != ErrorCode.UPSTREAM_UNAVAILABLE:  # an outage is logged once per interval, not per call
            logger.info("Tool %s failed: %s %s", spec.name, failure.code, failure.message)
        return _result(failure.as_dict(), is_error=True)
    except Exception as exc:
        if is_dependency_outage(exc):
            # e.g. the breaker's shared state could not be read: an outage, not a bug.
            report_outage(exc, f"tool {spec.name}")
            return _result(upstream_unavailable().as_dict(), is_error=True)
        logger.exception("Unexpected error in tool %s", spec.name)
        return _result(internal_error().as_dict(), is_error=True)
    finally:
        unbind_client(client_token)
        reset_request_id(id_token)


class LevMCP(DjangoMCP):
    def __init__(self) -> None:
        super().__init__(name="lev", instructions=INSTRUCTIONS, stateless=True)
        # serverInfo names Lev's version (as /health does), not the `mcp` library's, the SDK's default.
        self._mcp_server.version = lev.__version__
        for spec in TOOLS.values():
            tool = self._tool_manager.add_tool(
                spec.fn,
                name=spec.name,
                title=spec.annotations.title,
                description=spec.fn.__doc__,
                annotations=spec.annotations,
                structured_output=False,
            )
            # Unknown arguments are refused (call_tool_sync): the schema says so too.
            tool.parameters["additionalProperties"] = False
            # What tools/list publishes, on both paths (handle_fast and the SDK's): compacted.
            catalogue.compact_tool(tool)
        # tools/list in a deterministic order, by name, on both paths (ours and the SDK's, which lists the
        # tool manager's dict in insertion order): the same catalogue is always the same bytes.
        self._tool_manager._tools = dict(sorted(self._tool_manager._tools.items()))
        # The SDK answers an exception escaping a request handler with JSON-RPC code 0 and the
        # exception's text; every handler it runs for us answers a real code instead.
        handlers = self._mcp_server.request_handlers
        for request_type, handler in list(handlers.items()):
            handlers[request_type] = _json_rpc_errors(handler)

    async def read_resource(self, uri: Any) -> Any:
        """A URI that names no resource of this server is the MCP specification's "Resource not
        found" (-32002, the URI in `data`), not an exception's text with code 0."""
        text = str(uri)
        if not (any(str(resource.uri) == text for resource in self._resource_manager.list_resources())
                or any(template.matches(text) for template in self._resource_manager.list_templates())):
            raise McpError(ErrorData(code=RESOURCE_NOT_FOUND, message="Resource not found",
                                     data={"uri": text[:URI_ECHO_MAX]}))
        return await super().read_resource(uri)

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """An unknown prompt name is invalid params (-32602), as the specification's prompts say."""
        if self._prompt_manager.get_prompt(name) is None:
            raise McpError(ErrorData(code=INVALID_PARAMS, message="Invalid params: name is not a prompt of this server "
                                                                  "(prompts/list lists them)",
                                     data={"name": name[:URI_ECHO_MAX]}))
        return await super().get_prompt(name, arguments)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:  # type: ignore[override]
        request = django_request_ctx.get(None)
        result = await sync_to_async(self.call_tool_sync, thread_sensitive=True)(name, arguments, request)
        return result.as_sdk()  # (an InputRequired comes back only for a 2026-07-28 request: never here)

    def call_tool_sync(self, name: str, arguments: dict[str, Any] | None,
                       request: Any) -> ToolResult | confirmations.InputRequired:
        """Validate the arguments against the tool's schema, then run it; counted in the metrics by
        tool, code and category (both transports' paths come here). Never raises, but for a bad retry
        of a confirmation (`confirmations.InvalidInput`), which only a 2026-07-28 request can make.
        An `InputRequired` comes back only for a request `handle_modern` marked (`mcp_ask`)."""
        started = time.perf_counter()
        try:
            result = self._call_tool(name, arguments, request)
        except confirmations.InvalidInput:
            raise  # the retry of a confirmation carried a bad state or answer: handle_modern's -32602
        except Exception:
            # A bug in validating the arguments (run_tool already guards the tool itself): still a
            # tool result, so the caller gets a JSON-RPC answer and not the endpoint's HTTP 500.
            logger.exception("Unexpected error validating the arguments of tool %s", _printable(str(name))[:100])
            result = _result(internal_error().as_dict(), is_error=True)
        if isinstance(result, confirmations.InputRequired):
            record_tool_call(name, {}, is_error=False, seconds=time.perf_counter() - started, outcome="input_required")
        else:
            record_tool_call(name, result.structuredContent or {}, is_error=bool(result.isError),
                             seconds=time.perf_counter() - started)
        return result

    def _call_tool(self, name: str, arguments: dict[str, Any] | None,
                   request: Any) -> ToolResult | confirmations.InputRequired:
        spec = TOOLS.get(name)
        tool = self._tool_manager.get_tool(name)
        if spec is None or tool is None:
            failure = validation_failure(
                {"name": [f"is not a tool of this server: {name!r}"]},
                message=f"Validation failed: unknown tool {name!r}; call tools/list for the available tools",
            )
            return _result(failure.as_dict(), is_error=True)
        granted = credential_scopes(request)
        if granted is not None and (spec.scope is None or spec.scope not in granted):
            return _result(scope_failure(spec).as_dict(), is_error=True)
        selection = getattr(request, "mcp_selection", EVERYTHING)
        if not selection.allows(spec):
            return _result(selection_failure(spec, selection).as_dict(), is_error=True)
        arguments = arguments or {}
        unknown = sorted(set(arguments) - set(tool.fn_metadata.arg_model.model_fields))
        if unknown:
            failure = validation_failure({_printable(arg): ["is not a known argument"] for arg in unknown})
            return _result(failure.as_dict(), is_error=True)
        # Arguments mean what the schema says: validated as the JSON they are, in strict mode (no
        # true for 1, no 0 for a date, no "18500000" for a number), and never pre-parsed (FastMCP's
        # pre_parse_json would turn the string "[1]" into a list).
        text, unreadable = _arguments_json(arguments)
        if text is None:
            return _result(validation_failure(unreadable).as_dict(), is_error=True)
        try:
            parsed = tool.fn_metadata.arg_model.model_validate_json(text, strict=True)
            kwargs = parsed.model_dump_one_level()
        except pydantic.ValidationError as exc:
            return _result(validation_failure(_arg_errors(exc)).as_dict(), is_error=True)
        asked = getattr(request, "mcp_ask", None)
        found = confirmations.gate(name, kwargs) if asked is not None else None
        if found is not None:
            return self._confirmed(spec, kwargs, request, asked, found)
        return run_tool(spec, kwargs, request)

    @staticmethod
    def _confirmed(spec: ToolSpec, kwargs: dict[str, Any], request: Any, asked: confirmations.Ask,
                   found: confirmations.Gate) -> ToolResult | confirmations.InputRequired:
        """A call the person confirms first (`mcp_tools.confirmations`): run it, answer that it was
        declined, or ask, describing the record as the API reads it (its error result if it cannot)."""
        who = confirmations.principal(request)
        decided = confirmations.verdict(spec.name, kwargs, who, asked)
        if decided.action == "run":
            return run_tool(spec, kwargs, request)
        if decided.action == "declined":
            return _result(decided.payload or {}, is_error=False, tool=spec.name)
        described = run_tool(dataclasses.replace(spec, fn=lambda: found.describe(kwargs)), {}, request)
        if described.isError:
            return described
        return confirmations.ask(spec.name, kwargs, who, described.structuredContent or {})

    @functools.cached_property
    def tools_list_result(self) -> dict[str, Any]:
        """tools/list never changes while the process runs: build it once."""
        tools = self._tool_manager.list_tools()  # sorted by name (__init__)
        listed = ListToolsResult(tools=[
            Tool(name=t.name, title=t.title, description=t.description, inputSchema=t.parameters,
                 outputSchema=t.output_schema, annotations=t.annotations)
            for t in tools
        ])
        return listed.model_dump(by_alias=True, mode="json", exclude_none=True)

    def tools_list_for(self, granted: frozenset[str] | None, selection: Selection = EVERYTHING) -> dict[str, Any]:
        """tools/list as a credential sees it on this connection: only the tools its scopes let it call
        (all of them when the caller is not an authenticated request of the endpoint) in the toolsets
        the request selected (mcp_tools.toolsets). One cached answer per scope set and selection."""
        if granted is None and selection == EVERYTHING:
            return self.tools_list_result
        key = (granted, selection)
        cached = self._tools_by_scopes.get(key)
        if cached is None:
            tools = [t for t in self.tools_list_result["tools"]
                     if (spec := TOOLS.get(t["name"])) is not None and (granted is None or spec.scope in granted)
                     and selection.allows(spec)]
            cached = self._tools_by_scopes[key] = {**self.tools_list_result, "tools": tools}
        return cached

    @functools.cached_property
    def _tools_by_scopes(self) -> dict[tuple[frozenset[str] | None, Selection], dict[str, Any]]:
        return {}

    @functools.cached_property
    def request_models(self) -> dict[str, type[pydantic.BaseModel]]:
        """method -> the SDK's request model, for every request method this server answers."""
        return jsonrpc.request_types(self._mcp_server.request_handlers)

    def handle_fast(self, request: Any) -> HttpResponse | None:
        """Check the JSON-RPC message, and answer what needs none of the SDK's machinery.

        `request.data` is the parsed body (the view parsed it). Every protocol error is answered
        here (see `mcp_tools.jsonrpc`), so the SDK only ever sees valid requests for methods it
        has. `tools/call`, `tools/list`, `ping`, notifications and responses are answered here
        too: the SDK path builds a transport, an event loop and a task group, and hops threads,
        for every request, and in stateless JSON mode these need none of it. Anything else
        (initialize, resources/list, ...) returns None and goes the SDK's way. A request of MCP
        2026-07-28 (`mcp_tools.modern.is_modern`) is answered whole by `handle_modern`: the SDK
        (mcp 1.x) does not speak that revision.
        """
        message = request.data
        try:
            kind = jsonrpc.kind(message)
            if kind != "response" and modern.is_modern(message, request.headers.get("MCP-Protocol-Version")):
                # 2026-07-28 defines no client notification over HTTP; one is accepted and ignored,
                # as in 2025-11-25.
                return self.handle_modern(request, message) if kind == "request" else \
                    HttpResponse(status=202, content_type="application/json")
            jsonrpc.check_protocol_version(request.headers.get("MCP-Protocol-Version"), message)
            if kind != "request":
                # Stateless: no session to initialise, no request of ours a response could answer,
                # and nothing running on another HTTP request that a cancellation could stop.
                return HttpResponse(status=202, content_type="application/json")
            jsonrpc.check_request(message, self.request_models)
        except jsonrpc.JsonRpcError as error:
            return error.response()
        method, params = message["method"], message.get("params") or {}
        challenge = None
        if method == "tools/list":
            result: dict[str, Any] | str = conformance_fixture.listed(
                self.tools_list_for(credential_scopes(request), getattr(request, "mcp_selection", EVERYTHING)),
                modern_era=False)
        elif method == "tools/call" and conformance_fixture.owns(params["name"], modern_era=False):
            result = conformance_fixture.call_legacy(params["name"])
        elif method == "tools/call":
            called = self.call_tool_sync(params["name"], params.get("arguments"), request)
            challenge = step_up_challenge(request, called)
            # Every result is `_result`'s: one text block holding the payload's JSON, which is written
            # into the body as it is (neither dumped through pydantic nor serialized a second time).
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
        return _answer(body, challenge)

    def handle_modern(self, request: Any, message: dict[str, Any]) -> HttpResponse:
        """Answer a request of MCP 2026-07-28 (`mcp_tools.modern`): every method it may name is
        answered here, none goes the SDK's way."""
        refused = modern.check(message, request.headers)
        if refused is not None:
            return refused
        method, params, request_id = message["method"], message.get("params") or {}, message["id"]
        challenge = None
        if method == "tools/call" and conformance_fixture.owns(params["name"], modern_era=True):
            return conformance_fixture.call_modern(request, message, self.server_info)
        if method == "tools/call":
            # A client that can show a form is asked to confirm what cannot be undone (confirmations).
            request.mcp_ask = confirmations.Ask.of(params)
            try:
                called = self.call_tool_sync(params["name"], params.get("arguments"), request)
            except confirmations.InvalidInput as exc:
                return modern.invalid_params(request_id, f"Invalid params: {exc}")
            if isinstance(called, confirmations.InputRequired):
                return _answer(modern.result_body(request_id, budget.dumps(
                    modern.interim(called.as_result(), self.server_info))), None)
            if params["name"] not in TOOLS:
                # 2026-07-28 (server/tools, "Error Handling"): an unknown tool is a protocol error, -32602;
                # the contract's VALIDATION_ERROR object (counted in the metrics as in 2025-11-25) is its data.
                return modern.unknown_tool(request_id, params["name"], called.structuredContent or {})
            challenge = step_up_challenge(request, called)
            result = modern.tool_result_json(called.text, self.server_info, is_error=bool(called.isError))
        elif method == "tools/list":
            listed = conformance_fixture.listed(
                self.tools_list_for(credential_scopes(request), getattr(request, "mcp_selection", EVERYTHING)),
                modern_era=True)
            result = budget.dumps(modern.complete(listed, self.server_info, ttlMs=modern.TOOLS_TTL_MS,
                                                  cacheScope="private"))
        elif method == "server/discover":
            result = budget.dumps(self.discover_result)
        elif method == "resources/read":
            # This server has no resources (resources/list is empty): every URI names none.
            return modern.resource_not_found(request_id, params["uri"])
        else:
            listed = {"resources/list": {"resources": []}, "resources/templates/list": {"resourceTemplates": []},
                      "prompts/list": {"prompts": []}}[method]
            result = budget.dumps(modern.complete(listed, self.server_info, ttlMs=modern.PUBLIC_TTL_MS,
                                                  cacheScope="public"))
        return _answer(modern.result_body(request_id, result), challenge)

    @functools.cached_property
    def server_info(self) -> dict[str, str]:
        """The name and version initialize answers in `serverInfo` (2026-07-28 puts them in `_meta`)."""
        options = self._mcp_server.create_initialization_options()
        return {"name": options.server_name, "version": options.server_version}

    @functools.cached_property
    def discover_result(self) -> dict[str, Any]:
        """server/discover: the versions, capabilities and instructions, the same for every caller."""
        options = self._mcp_server.create_initialization_options()
        capabilities = options.capabilities.model_dump(by_alias=True, mode="json", exclude_none=True)
        # Nothing is delivered on subscriptions/listen: no list-changed or subscribe promises.
        capabilities = {name: {} for name in ("tools", "resources", "prompts") if name in capabilities}
        return modern.complete(
            {"supportedVersions": modern.SUPPORTED_VERSIONS, "capabilities": capabilities,
             "instructions": INSTRUCTIONS},
            self.server_info, ttlMs=modern.PUBLIC_TTL_MS, cacheScope="public")


def _answer(body: str, challenge: str | None) -> HttpResponse:
    # The body as UTF-8 bytes, the encoding mcp_tools.budget counts (`dumps` escapes what UTF-8 cannot
    # carry): handed text, Django would encode it in the response's charset, which it works out with a lazy
    # regular expression over the Content-Type (8 us of an MCP get_deal, issue 24).
    content = body.encode("utf-8")
    if challenge:
        # An OAuth client may ask the person for the missing scope and retry (the MCP specification's
        # step-up); one that does not still reads the FORBIDDEN tool result in the body.
        return HttpResponse(content, status=403, content_type="application/json",
                            headers={"WWW-Authenticate": challenge})
    return HttpResponse(content, content_type="application/json")


def credential_scopes(request: Any) -> frozenset[str] | None:
    """The scopes of the credential /mcp authenticated; None for a request the endpoint did not
    authenticate (a direct in-process call): the API behind the tools checks every request's scope."""
    if request is None or not hasattr(request, "successful_authenticator"):
        return None
    return scopes.granted(request.auth) if request.successful_authenticator is not None else frozenset()


def scope_failure(spec: ToolSpec) -> ToolFailure:
    if spec.scope is None:
        return ToolFailure(ErrorCode.FORBIDDEN, f"Forbidden: {spec.name} is not available to any credential",
                           details={"tool": spec.name})
    return ToolFailure(
        ErrorCode.FORBIDDEN,
        f"Forbidden: {spec.name} needs the scope {spec.scope}, which this credential was not granted",
        hint=f"Tell the user this needs the '{spec.scope}' permission: they can reconnect Lev and allow it "
             "(or use an API key that has it). tools/list shows only the tools this connection may call.",
        details={"required_scope": spec.scope, "tool": spec.name},
    )


def selection_failure(spec: ToolSpec, selection: Selection) -> ToolFailure:
    """A tool the connection's toolsets or read-only mode leave out: the catalogue it listed has no such tool."""
    if selection.read_only and not spec.annotations.readOnlyHint:
        return ToolFailure(
            ErrorCode.FORBIDDEN,
            f"Forbidden: {spec.name} changes data, and this connection is read-only",
            hint="Tell the user this connection was set up read-only (X-MCP-Readonly or a /readonly address); "
                 "changing data needs a connection without it. tools/list shows what this one may call.",
            details={"tool": spec.name, "read_only": True},
        )
    return validation_failure(
        {"name": [f"is not in this connection's toolsets ({selection.describe()})"]},
        message=f"Validation failed: {spec.name} is not in this connection's toolsets ({selection.describe()}); "
                "call tools/list for the tools this connection offers",
    )


def step_up_challenge(request: Any, called: ToolResult) -> str | None:
    """The `insufficient_scope` challenge for a tool refused for a scope an OAuth token lacks (HTTP 403,
    RFC 6750 §3.1, the MCP specification's scope challenge); None when there is nothing to step up to."""
    from lev.oauth.authentication import OAuthCredential

    if not (called.isError and settings.LEV_OAUTH_STEP_UP_CHALLENGE):
        return None
    payload = called.structuredContent or {}
    scope = (payload.get("details") or {}).get("required_scope")
    credential = getattr(request, "auth", None) if hasattr(request, "successful_authenticator") else None
    if payload.get("code") != ErrorCode.FORBIDDEN or scope not in scopes.ALL_SCOPES or \
            not isinstance(credential, OAuthCredential):
        return None
    return bearer_challenge(request, error="insufficient_scope", scopes=credential.scope_set | {scope},
                            description=f"{scope} is needed for this tool")


# MCP specification 2025-11-25, "Resources", error handling: a resource that does not exist.
RESOURCE_NOT_FOUND = -32002
# How much of a URI or name an error echoes back.
URI_ECHO_MAX = 200


def _json_rpc_errors(handler: Callable[[Any], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
    """A request handler of the SDK's server whose unexpected exceptions are a JSON-RPC internal error
    (-32603, logged with the traceback, nothing of the exception in the answer); errors it raises
    on purpose (McpError, with their code) pass unchanged."""

    @functools.wraps(handler)
    async def answer(request: Any) -> Any:
        try:
            return await handler(request)
        except McpError:
            raise
        except Exception:
            logger.exception("Unexpected error answering %s", getattr(request, "method", "a request"))
            raise McpError(ErrorData(code=INTERNAL_ERROR, message="Internal error: an unexpected error occurred.")) \
                from None

    return answer


_server: LevMCP | None = None


def get_server() -> LevMCP:
    global _server
    if _server is None:
        _server = LevMCP()
    return _server
