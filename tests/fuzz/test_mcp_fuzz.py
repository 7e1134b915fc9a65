"""Fuzz /mcp over real HTTP (the live test server) with raw JSON-RPC, from the tools' own schemas.

For every tool of `tools/list`: arguments its inputSchema allows must never be refused as
VALIDATION_ERROR; hostile arguments (wrong types, huge and non-finite numbers, long and unicode
strings with NUL and lone surrogates, nested garbage, unknown keys, 3,000 levels of nesting) must get
HTTP 200 and a tool error that carries the whole contract, never INTERNAL_ERROR, never internals;
arguments the schema refuses must be refused. Then JSON-RPC envelopes and bodies of every shape.

Runs are reproducible (derandomized) and bounded (no shrinking: each test collects every distinct
failure with one input that produced it, and fails at the end listing them all). The counts are
printed at the end of the pytest run. `make fuzz` runs the fuzz suites alone; LEV_FUZZ_SCALE scales
the number of examples.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from deals.placements.serializers import CREATE_TARGET_MESSAGE
from deals.placements.services import RATE_TERMS_MESSAGE
from mcp_tools import resilience
from mcp_tools.registry import TOOLS
from tests.fuzz.conftest import MODERN_META, RawMcp, World, budget
from tests.fuzz.contract import Outcome, judge
from tests.fuzz.stats import STATS
from tests.fuzz.strategies import (
    DEEP_LEVELS,
    as_sent,
    contains_deep,
    contains_non_finite,
    encode,
    hostile_arguments,
    huge_number_arguments,
    json_scalars,
    nested_garbage,
    numeric_paths,
    strict_schema,
    valid_arguments,
    validator,
)

pytestmark = [pytest.mark.fuzz, pytest.mark.django_db(transaction=True)]

TOOL_NAMES = sorted(TOOLS)
FUZZ = {
    "deadline": None,
    "derandomize": True,  # the same examples on every run: CI is reproducible
    "database": None,
    "phases": [Phase.explicit, Phase.generate],  # failures are collected, not shrunk
    # One live server and one world of data serve all examples of a test, on purpose.
    "suppress_health_check": list(HealthCheck),
}
# Examples per tool and test; 10 tools x (70 + 100) + protocol + breaker tests > 2,000 MCP calls.
VALID_EXAMPLES = 70
HOSTILE_EXAMPLES = 100
PROTOCOL_EXAMPLES = 300


class Findings:
    """The distinct failures of one test (one input each); the test fails at the end with all."""

    def __init__(self) -> None:
        self.failures: dict[str, tuple[str, str]] = {}

    def record(self, where: str, outcome: Outcome, sent: str, extra: list[str]) -> None:
        problems = outcome.problems + extra
        if outcome.tool_payload is not None:
            STATS.by_code[outcome.code or ("error" if outcome.is_error else "ok")] += 1
        elif outcome.rpc_error is not None:
            STATS.by_code[f"jsonrpc {outcome.rpc_error.get('code')}"] += 1
        if not problems:
            return
        STATS.mcp_violations += 1
        for problem in problems:
            key = f"{where}: {problem}"
            STATS.record_failure(key, sent, outcome.text)
            self.failures.setdefault(key, (sent[:300], outcome.text[:300]))

    def assert_none(self) -> None:
        report = [f"{key}\n    sent: {sent}\n    got:  {got}" for key, (sent, got) in sorted(self.failures.items())]
        assert not self.failures, f"{len(self.failures)} distinct failures:\n" + "\n".join(report)


def schemas(raw_mcp: RawMcp) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool["inputSchema"] for tool in raw_mcp.tools()}


def test_tools_list_publishes_every_tool_with_a_schema_that_refuses_unknown_arguments(raw_mcp):
    published = schemas(raw_mcp)
    assert sorted(published) == TOOL_NAMES
    # The server refuses unknown arguments, so the schema must say so, or a schema-valid argument
    # set (one with an extra key) would be refused.
    loose = [name for name, schema in published.items() if schema.get("additionalProperties") is not False]
    assert not loose, f"inputSchema without additionalProperties: false: {loose}"


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_schema_valid_arguments_are_never_refused(raw_mcp, world: World, tool: str):
    schema = schemas(raw_mcp)[tool]
    strict = validator(strict_schema(schema))
    findings = Findings()

    @settings(max_examples=budget(VALID_EXAMPLES), **FUZZ)
    @given(arguments=valid_arguments(schema, world))
    def call(arguments: dict[str, Any]) -> None:
        assert strict.is_valid(arguments), f"the generator made invalid arguments: {arguments!r}"
        status, text, sent, request_id = raw_mcp.call(tool, arguments)
        outcome = judge(status, text, sent, well_formed=True, request_id=request_id)
        extra = []
        if outcome.code == "VALIDATION_ERROR" and not cross_argument_rule(tool, outcome):
            extra.append(f"schema-valid arguments refused: {outcome.tool_payload.get('message')}")
        findings.record(tool, outcome, sent, extra)

    call()
    findings.assert_none()


# Rules over two arguments, which JSON Schema cannot state; each tool's description says them.
CROSS_ARGUMENT_RULES = {
    "list_deals": "Validation failed: min_loan_amount must not exceed max_loan_amount",
    "update_deal": "Validation failed: pass at least one field to change",
    "update_deal_property": "Validation failed: pass at least one field to change",
    "update_deal_financials": "Validation failed: pass at least one figure to change",
    "create_placements": f"Validation failed: {CREATE_TARGET_MESSAGE}",
    "update_placement": "Validation failed: pass at least one field to change",
    "add_term_sheet": RATE_TERMS_MESSAGE,
}


def cross_argument_rule(tool: str, outcome: Outcome) -> bool:
    return (outcome.tool_payload or {}).get("message") == CROSS_ARGUMENT_RULES.get(tool)


def contains_lone_surrogate(value: Any) -> bool:
    """A lone surrogate is a JSON string but not Unicode text: the tools refuse it by name (no
    schema keyword can say so), so it is hostile input, not a schema-valid argument."""
    if isinstance(value, str):
        return any(0xD800 <= ord(char) <= 0xDFFF for char in value)
    if isinstance(value, dict):
        return any(contains_lone_surrogate(k) or contains_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(contains_lone_surrogate(item) for item in value)
    return False


def judge_hostile(tool: str, arguments: Any, strict, status: int, text: str, sent: str,
                  request_id: int) -> tuple[Outcome, list[str]]:
    non_finite, deep = contains_non_finite(arguments), contains_deep(arguments)
    # A body with NaN/Infinity tokens is not JSON; one nested 3,000 deep may be refused as unparseable.
    outcome = judge(status, text, sent, well_formed=not (non_finite or deep),
                    request_id=None if (non_finite or deep) else request_id)
    extra: list[str] = []
    if outcome.tool_payload is None and outcome.rpc_error is None:
        return outcome, extra  # already a problem: no JSON-RPC answer at all
    if non_finite:
        if not (outcome.rpc_error and outcome.rpc_error.get("code") == -32700):
            extra.append("raw NaN/Infinity in the body not answered as a JSON-RPC parse error (-32700)")
        return outcome, extra
    if deep:
        if outcome.tool_payload is not None and not outcome.is_error:
            extra.append(f"arguments nested {DEEP_LEVELS} deep accepted")
        return outcome, extra
    refused = outcome.rpc_error is not None or outcome.code == "VALIDATION_ERROR"
    as_object = {} if arguments is None else as_sent(arguments)
    if not isinstance(as_object, dict):
        if not refused:
            extra.append("arguments that are not an object not refused")
        return outcome, extra
    errors = sorted(strict.iter_errors(as_object), key=lambda e: list(e.absolute_path))
    if (not errors and outcome.code == "VALIDATION_ERROR" and not cross_argument_rule(tool, outcome)
            and not contains_lone_surrogate(as_object)):
        extra.append(f"schema-valid arguments refused: {outcome.tool_payload.get('message')}")
    if errors and not refused:
        where = ".".join(str(p) for p in errors[0].absolute_path) or "arguments"
        got = outcome.code or "success"
        extra.append(f"schema-invalid {where} ({errors[0].validator}) not refused: {got}")
    return outcome, extra


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_hostile_arguments_get_the_error_contract(raw_mcp, world: World, tool: str):
    schema = schemas(raw_mcp)[tool]
    strict = validator(strict_schema(schema))
    findings = Findings()

    @settings(max_examples=budget(HOSTILE_EXAMPLES), **FUZZ)
    @given(arguments=hostile_arguments(schema, world))
    def call(arguments: Any) -> None:
        request_id = raw_mcp.next_id()
        sent = encode({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments}})
        status, text = raw_mcp.post(sent)
        outcome, extra = judge_hostile(tool, arguments, strict, status, text, sent, request_id)
        findings.record(tool, outcome, sent, extra)

    call()
    findings.assert_none()


HUGE_EXAMPLES = 20


def test_numbers_no_float_holds_are_refused_naming_the_argument(raw_mcp, world: World):
    """Issue #19: integers of 310 to 4,300 digits and literals such as 1e400 in any numeric argument
    of any tool (nested ones too) are a VALIDATION_ERROR naming it, never HTTP 500 or INTERNAL_ERROR.
    One test for all tools (one world of data): the examples are cheap, the set-up is not."""
    published = schemas(raw_mcp)
    findings = Findings()

    def run(tool: str) -> None:
        strict = validator(strict_schema(published[tool]))

        @settings(max_examples=budget(HUGE_EXAMPLES), **FUZZ)
        @given(drawn=huge_number_arguments(published[tool], world))
        def call(drawn: tuple[dict[str, Any], list[str]]) -> None:
            arguments, names = drawn
            request_id = raw_mcp.next_id()
            sent = encode({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                           "params": {"name": tool, "arguments": arguments}})
            status, text = raw_mcp.post(sent)
            outcome, extra = judge_hostile(tool, arguments, strict, status, text, sent, request_id)
            fields = ((outcome.tool_payload or {}).get("details") or {}).get("fields") or {}
            if outcome.code == "VALIDATION_ERROR":
                extra += [f"{name} not named among {sorted(fields)}" for name in names if name not in fields]
            elif not outcome.problems:
                extra.append(f"not a VALIDATION_ERROR: {outcome.code or 'success'}")
            findings.record(tool, outcome, sent, extra)

        call()

    for tool in TOOL_NAMES:
        if numeric_paths(published[tool]):  # a tool without numbers (get_account: no arguments) has none to break
            run(tool)
    findings.assert_none()


ids = st.one_of(st.integers(), st.text(max_size=12), st.none(), st.booleans(),
                st.floats(allow_nan=False, allow_infinity=False), st.lists(st.integers(), max_size=2), st.just({}))
methods = st.one_of(
    st.sampled_from(["tools/call", "tools/list", "initialize", "ping", "resources/list", "prompts/list",
                     "resources/read", "prompts/get", "resources/templates/list",
                     "notifications/initialized", "logging/setLevel", "rpc.discover", "", "TOOLS/LIST"]),
    st.text(max_size=20), st.integers(), st.none(),
)
params = st.one_of(
    nested_garbage,
    st.fixed_dictionaries({"uri": st.one_of(st.sampled_from(["lev://deals/1", "file:///etc/passwd", "x:y", ""]),
                                            st.text(max_size=30))}),
    st.fixed_dictionaries({"name": st.one_of(st.sampled_from(TOOL_NAMES), st.text(max_size=10))},
                          optional={"arguments": nested_garbage}),
    st.fixed_dictionaries({"name": st.sampled_from([*TOOL_NAMES, "nope", "", "x" * 500]), "arguments": nested_garbage}),
    st.fixed_dictionaries({"protocolVersion": st.sampled_from(["2025-06-18", "2099-01-01", "", "1"]),
                           "capabilities": nested_garbage,
                           "clientInfo": st.fixed_dictionaries({"name": st.text(max_size=5),
                                                                "version": json_scalars})}),
)
envelopes = st.fixed_dictionaries({}, optional={
    "jsonrpc": st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2.0, None, ""]),
    "id": ids, "method": methods, "params": params,
})
# Well-formed requests for the methods the SDK answers (not answered in mcp_tools.server.handle_fast):
# their errors must carry a real code, never the SDK's 0 for an exception.
sdk_requests = st.fixed_dictionaries({
    "jsonrpc": st.just("2.0"), "id": st.integers(min_value=0, max_value=10**6),
    "method": st.sampled_from(["resources/read", "resources/list", "resources/templates/list", "prompts/get",
                               "prompts/list"]),
    "params": params,
})
RAW_BODIES = [
    "", " ", "{", "[", "{]", "nul", "\x00", '{"jsonrpc":"2.0","id":1,"method":"tools/list",}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_deals","arguments":{"min_loan_amount":NaN}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_deal","arguments":{"title":"x","loan_amount":Infinity}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":' + "[" * DEEP_LEVELS + "]" * DEEP_LEVELS + "}",
    "[" * DEEP_LEVELS + "]" * DEEP_LEVELS,
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' * 2,
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_deals","arguments":{"search":"\\ud800"}}}',
]


def well_formed(message: Any) -> bool:
    """A JSON-RPC 2.0 request (not a notification) whose params, if any, are an object."""
    return (
        isinstance(message, dict)
        and message.get("jsonrpc") == "2.0"
        and isinstance(message.get("id"), int | str) and not isinstance(message.get("id"), bool)
        and isinstance(message.get("method"), str)
        and isinstance(message.get("params", {}), dict)
    )


def test_any_json_rpc_message_gets_a_json_rpc_answer(raw_mcp, world: World):
    findings = Findings()

    def send(sent: str | bytes, message: Any = None) -> None:
        status, text = raw_mcp.post(sent)
        ok = well_formed(message)
        outcome = judge(status, text, sent if isinstance(sent, str) else sent.decode("utf-8", "replace"),
                        well_formed=ok and not str(message.get("method")).startswith("notifications/"),
                        request_id=message.get("id") if ok else None)
        extra = []
        raw_non_finite = isinstance(sent, str) and ("NaN" in sent or "Infinity" in sent) and message is None
        if raw_non_finite and outcome.rpc_error is not None and outcome.rpc_error.get("code") != -32700:
            extra.append("raw NaN/Infinity body not answered as a JSON-RPC parse error (-32700)")
        findings.record("protocol", outcome, sent if isinstance(sent, str) else repr(sent), extra)

    for body in RAW_BODIES:
        send(body)
    send(b'{"jsonrpc":"2.0","id":1,"method":"tools/list","x":"\xff\xfe"}')  # not UTF-8

    @settings(max_examples=budget(PROTOCOL_EXAMPLES), **FUZZ)
    @given(message=st.one_of(envelopes, envelopes, sdk_requests, st.lists(envelopes, max_size=3), nested_garbage))
    def call(message: Any) -> None:
        send(json.dumps(message), message)

    call()
    findings.assert_none()


META_VERSION = "io.modelcontextprotocol/protocolVersion"
MODERN_METHODS = ["tools/call", "tools/list", "server/discover", "resources/read", "resources/list", "prompts/list",
                  "initialize", "ping", "subscriptions/listen", "logging/setLevel"]
# MCP 2026-07-28 requests: a valid `_meta` or a damaged one, the mirrored headers right, missing or wrong.
modern_metas = st.one_of(
    st.just(MODERN_META), st.just(MODERN_META), nested_garbage,
    st.fixed_dictionaries({"io.modelcontextprotocol/protocolVersion": st.sampled_from(["2026-07-28", "2099-01-01", ""]),
                           "io.modelcontextprotocol/clientCapabilities": nested_garbage}),
)
modern_requests = st.fixed_dictionaries({
    "jsonrpc": st.just("2.0"), "id": st.integers(min_value=0, max_value=10**6),
    "method": st.sampled_from(MODERN_METHODS),
    "params": st.fixed_dictionaries({"_meta": modern_metas},
                                    optional={"name": st.sampled_from([*TOOL_NAMES, "nope"]),
                                              "uri": st.sampled_from(["lev://deals/1", "x"]),
                                              "arguments": nested_garbage}),
})
header_damage = st.sampled_from(["none", "none", "no-method", "wrong-method", "wrong-version", "wrong-name"])


def modern_headers(message: dict[str, Any], damage: str) -> dict[str, str]:
    params = message["params"]
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": message["method"]}
    named = params.get("uri") if message["method"] == "resources/read" else params.get("name")
    if isinstance(named, str):
        headers["Mcp-Name"] = named
    if damage == "no-method":
        del headers["Mcp-Method"]
    elif damage == "wrong-method":
        headers["Mcp-Method"] = "tools/list" if message["method"] != "tools/list" else "tools/call"
    elif damage == "wrong-version":
        headers["MCP-Protocol-Version"] = "2025-11-25"
    elif damage == "wrong-name":
        headers["Mcp-Name"] = "something-else"
    return headers


def test_any_2026_07_28_request_gets_a_json_rpc_answer(raw_mcp, world: World):
    """The same contract in the modern envelope: never 5xx, always JSON-RPC with the request's id; 404
    exactly for -32601, 400 for the envelope's errors, 200 for results (tool errors included)."""
    findings = Findings()

    @settings(max_examples=budget(PROTOCOL_EXAMPLES // 2), **FUZZ)
    @given(message=modern_requests, damage=header_damage)
    def call(message: dict[str, Any], damage: str) -> None:
        sent = json.dumps(message)
        status, text = raw_mcp.post(sent, modern_headers(message, damage))
        outcome = judge(status, text, sent, well_formed=False, request_id=message["id"])
        extra = []
        code = (outcome.rpc_error or {}).get("code")
        meta = message["params"]["_meta"]
        if damage == "wrong-version" and not (isinstance(meta, dict) and META_VERSION in meta):
            # Nothing of 2026-07-28 left (a 2025-11-25 header, no protocol version in _meta): a legacy
            # request, judged as the legacy tests judge it.
            findings.record("modern", outcome, sent, extra)
            return
        if outcome.rpc_error is None and isinstance(outcome.body, dict) and "result" in outcome.body:
            if status not in (200, 403) or outcome.body["result"].get("resultType") != "complete":
                extra.append(f"result with HTTP {status} or without resultType")
        elif (status == 404) != (code == -32601) or (code is not None and status not in (400, 404)):
            extra.append(f"JSON-RPC error {code} with HTTP {status}")
        findings.record("modern", outcome, sent, extra)

    call()
    findings.assert_none()


# The reproducers: inputs that made the API answer 500 (and so, once, opened the breaker).
def reproducers(world: World) -> list[tuple[str, dict[str, Any]]]:
    full = world.deal_ids[1]
    return [
        ("create_deal", {"title": "nul key", "idempotency_key": "a\x00b"}),
        ("update_deal", {"deal_id": full, "loan_amount": 1}),
        ("get_deal", {"deal_id": full, "include": ["financials"]}),
        ("list_deals", {"search": "[" * DEEP_LEVELS}),
        ("list_deals", {"cursor": "eyJwIjoxZTk5OSwibCI6MjB9"}),
        ("get_deal", {"deal_id": True}),
        ("create_deal", {"title": "x", "estimated_close_date": 0}),
    ]


def test_fifty_hostile_calls_of_one_account_leave_the_breaker_closed_for_others(raw_mcp, world, live_server):
    published = schemas(raw_mcp)
    calls = []

    def send(name: str, arguments: Any) -> None:
        status, _text = raw_mcp.post(encode({"jsonrpc": "2.0", "id": raw_mcp.next_id(), "method": "tools/call",
                                             "params": {"name": name, "arguments": arguments}}))
        calls.append(status)

    for name, arguments in reproducers(world):
        send(name, arguments)

    @settings(max_examples=50 - len(calls), **FUZZ)
    @given(call=st.sampled_from(TOOL_NAMES).flatmap(
        lambda name: st.tuples(st.just(name), hostile_arguments(published[name], world))))
    def hostile(call: tuple[str, Any]) -> None:
        send(*call)

    hostile()
    assert len(calls) >= 50
    assert resilience.breaker_state() == "closed"
    # Another account, right after: served as usual.
    other = RawMcp(live_server.url, world.other_api_key)
    status, text, sent, request_id = other.call("list_deals", {})
    outcome = judge(status, text, sent, well_formed=True, request_id=request_id)
    assert not outcome.problems and not outcome.is_error, text
    assert outcome.tool_payload["deals"] == []
