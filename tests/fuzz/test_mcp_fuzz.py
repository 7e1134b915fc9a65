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

import base64
import json
from typing import Any
from urllib.parse import quote, unquote_to_bytes

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from deals.outreach.serializers import TARGET_RULES as OUTREACH_TARGET_RULES
from deals.placements.serializers import CREATE_TARGET_MESSAGE
from deals.placements.services import QUOTED_AFTER_TODAY, QUOTED_BEFORE_SENT, RATE_TERMS_MESSAGE
from mcp_tools import resilience
from mcp_tools.registry import TOOLS
from mcp_tools.tools.deals import GIVEN_AND_CLEARED
from mcp_tools.tools.lenders import HISTORY_NEEDS_INDEX
from mcp_tools.toolsets import toolset_of
from tests.fuzz.conftest import MODERN_META, PROGRAM_PAIR_RULES, RawMcp, World, budget
from tests.fuzz.contract import Outcome, judge, leaks
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
TOOLSET_EXAMPLES = 200  # plus each listed toolset segment once, at both addresses
MODERN = "2026-07-28"


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


def judge_in_era(status: int, text: str, sent: str, *, modern: bool, well_formed: bool,
                 request_id: Any = None) -> Outcome:
    """`judge`, with the HTTP statuses of the request's era: 2025-11-25 answers a well-formed request
    with HTTP 200 whatever its JSON-RPC error; 2026-07-28 answers a result with 200 (403 for the OAuth
    step-up), -32601 with 404 and its other errors with 400, and every result has resultType "complete"."""
    if not modern:
        return judge(status, text, sent, well_formed=well_formed, request_id=request_id)
    outcome = judge(status, text, sent, well_formed=False, request_id=request_id)
    code = (outcome.rpc_error or {}).get("code")
    if outcome.rpc_error is None and isinstance(outcome.body, dict) and "result" in outcome.body:
        result = outcome.body["result"]
        if status not in (200, 403) or not isinstance(result, dict) or result.get("resultType") != "complete":
            outcome.problems.append(f"2026-07-28 result with HTTP {status} or without resultType complete")
    elif outcome.rpc_error is not None and ((status == 404) != (code == -32601) or status not in (400, 404)):
        outcome.problems.append(f"2026-07-28 JSON-RPC error {code} with HTTP {status}")
    return outcome


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


# Rules over two arguments (or over an argument and today), which JSON Schema cannot state; each
# tool's description says them. A message starting with one of a tool's rules is that rule.
CROSS_ARGUMENT_RULES = {
    "list_deals": "Validation failed: min_loan_amount must not exceed max_loan_amount",
    "update_deal": ("Validation failed: pass at least one field to change", f"Validation failed: {GIVEN_AND_CLEARED}"),
    "update_deal_property": "Validation failed: pass at least one field to change",
    "update_deal_financials": "Validation failed: pass at least one figure to change",
    "create_placements": f"Validation failed: {CREATE_TARGET_MESSAGE}",
    "update_placement": "Validation failed: pass at least one field to change",
    "add_term_sheet": (RATE_TERMS_MESSAGE, *(f"Validation failed: {rule}" for rule in (QUOTED_AFTER_TODAY,
                                                                                       QUOTED_BEFORE_SENT))),
    "update_company": "Validation failed: pass at least one field to change",
    "update_contact": "Validation failed: pass at least one field to change",
    "list_contacts": "Validation failed: pass company_id or lender_id (one of them)",
    "add_contact": "Validation failed: pass company_id or lender_id (one of them)",
    "get_market_rates": f"Validation failed: {HISTORY_NEEDS_INDEX}",
    "add_note": "Validation failed: pass one of deal_id, placement_id, company_id or contact_id",
    "add_lender_program": PROGRAM_PAIR_RULES,
    "send_placements_email": OUTREACH_TARGET_RULES,
}


def cross_argument_rule(tool: str, outcome: Outcome) -> bool:
    rules = CROSS_ARGUMENT_RULES.get(tool, ())
    message = (outcome.tool_payload or {}).get("message") or ""
    return any(message.startswith(rule) for rule in ((rules,) if isinstance(rules, str) else rules))


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


def hostile_call(raw_mcp: RawMcp, tool: str, arguments: Any) -> tuple[int, str, str, int, bool]:
    """(status, text, body sent, request id, modern) of one tools/call with `arguments` as they are, every
    other one in MCP 2026-07-28's envelope (valid `_meta`, the mirrored headers)."""
    request_id = raw_mcp.next_id()
    modern = request_id % 2 == 0
    params = {"name": tool, "arguments": arguments, **({"_meta": MODERN_META} if modern else {})}
    sent = encode({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": tool} if modern else None
    status, text = raw_mcp.post(sent, headers)
    return status, text, sent, request_id, modern


def judge_hostile(tool: str, arguments: Any, strict, status: int, text: str, sent: str,
                  request_id: int, modern: bool = False) -> tuple[Outcome, list[str]]:
    non_finite, deep = contains_non_finite(arguments), contains_deep(arguments)
    # A body with NaN/Infinity tokens is not JSON; one nested 3,000 deep may be refused as unparseable.
    outcome = judge_in_era(status, text, sent, modern=modern, well_formed=not (non_finite or deep),
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
        status, text, sent, request_id, modern = hostile_call(raw_mcp, tool, arguments)
        outcome, extra = judge_hostile(tool, arguments, strict, status, text, sent, request_id, modern)
        findings.record(f"{tool} ({MODERN if modern else 'legacy'})", outcome, sent, extra)

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
            status, text, sent, request_id, modern = hostile_call(raw_mcp, tool, arguments)
            outcome, extra = judge_hostile(tool, arguments, strict, status, text, sent, request_id, modern)
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
# Well-formed requests for the methods the SDK answers (not answered in mcp_tools.protocol_2025_11_25.answer):
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
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
# The revisions of the handshake era (docs/mcp-clients.md): a `_meta` naming one of them is a legacy request.
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# What 2026-07-28 answers on /mcp (docs/mcp-clients.md, "How /mcp answers"); any other method is 404/-32601.
MODERN_ANSWERED = {"server/discover", "tools/list", "tools/call", "resources/list", "resources/templates/list",
                   "resources/read", "prompts/list"}
MODERN_METHODS = [*sorted(MODERN_ANSWERED), "initialize", "ping", "subscriptions/listen", "logging/setLevel",
                  "prompts/get", "notifications/cancelled", "nope/nope"]
NAME_FIELD = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
MISSING = object()  # a key left out of the request (a sentinel: hypothesis draws it like a value)
# MCP 2026-07-28 requests: a valid `_meta`, none, garbage, or one with a wrong, unknown, legacy or
# non-string version or capabilities that are no object.
modern_metas = st.one_of(
    st.just(MODERN_META), st.just(MODERN_META), st.just(MODERN_META), st.just(MISSING), nested_garbage,
    st.sampled_from(["2099-01-01", "v999", "", "2025-11-25"]).map(lambda v: {META_VERSION: v, META_CAPABILITIES: {}}),
    st.fixed_dictionaries({}, optional={
        META_VERSION: st.one_of(
            st.sampled_from([MODERN, MODERN, MODERN, "2099-01-01", "v999", "", "2025-11-25", "2026-07-28 "]),
            json_scalars, st.lists(st.just(MODERN), max_size=1)),
        META_CAPABILITIES: st.one_of(st.just({}), nested_garbage),
        "io.modelcontextprotocol/clientInfo": nested_garbage,
    }),
)


def with_meta(params: dict[str, Any], meta: Any) -> dict[str, Any]:
    return params if meta is MISSING else {**params, "_meta": meta}


modern_requests = st.builds(
    lambda head, request_id, params, meta: {**head, **({} if request_id is MISSING else {"id": request_id}),
                                            "params": with_meta(params, meta)},
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "method": st.sampled_from(MODERN_METHODS)}),
    st.one_of(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=10**6),
              st.integers(min_value=0, max_value=10**6), st.text(max_size=8), st.just(MISSING)),
    st.fixed_dictionaries({}, optional={"name": st.sampled_from([*TOOL_NAMES, "nope", ""]),
                                        "uri": st.sampled_from(["lev://deals/1", "x"]),
                                        "arguments": st.one_of(st.just({}), nested_garbage),
                                        "cursor": st.one_of(st.none(), st.text(max_size=8))}),
    modern_metas,
)
HEADER_DAMAGE = ["none", "none", "none", "no-version", "unknown-version", "legacy-version", "no-method",
                 "wrong-method", "no-name", "wrong-name", "base64-name", "bad-base64-name"]


def modern_headers(message: dict[str, Any], damage: str) -> dict[str, str]:
    """The headers mirroring the body (MCP-Protocol-Version, Mcp-Method, Mcp-Name), then `damage` done."""
    params = message["params"]
    version = params["_meta"].get(META_VERSION) if isinstance(params.get("_meta"), dict) else None
    # A version an HTTP header cannot carry as it is (not printable ASCII, or with surrounding whitespace
    # HTTP strips) is mirrored as 2026-07-28: a mismatch.
    mirrored = isinstance(version, str) and version.isascii() and version.isprintable() and version == version.strip()
    headers = {"MCP-Protocol-Version": version if mirrored else MODERN, "Mcp-Method": message["method"]}
    named = params.get(NAME_FIELD.get(message["method"], ""))
    if isinstance(named, str):
        headers["Mcp-Name"] = named
    if damage == "no-version":
        headers.pop("MCP-Protocol-Version")
    elif damage == "unknown-version":
        headers["MCP-Protocol-Version"] = "2099-01-01"
    elif damage == "legacy-version":
        headers["MCP-Protocol-Version"] = "2025-11-25"
    elif damage == "no-method":
        del headers["Mcp-Method"]
    elif damage == "wrong-method":
        headers["Mcp-Method"] = "tools/list" if message["method"] != "tools/list" else "tools/call"
    elif damage == "no-name":
        headers.pop("Mcp-Name", None)
    elif damage == "wrong-name":
        headers["Mcp-Name"] = "something-else"
    elif damage == "base64-name" and "Mcp-Name" in headers:
        headers["Mcp-Name"] = "=?base64?" + base64.b64encode(headers["Mcp-Name"].encode()).decode() + "?="
    elif damage == "bad-base64-name" and "Mcp-Name" in headers:
        headers["Mcp-Name"] = "=?base64?not base64!?="
    return headers


def _header_name(value: str) -> str | None:
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode()
        except (ValueError, UnicodeDecodeError):
            return None
    return value


def expected_answer(message: dict[str, Any], headers: dict[str, str]) -> tuple[str, int | None, int | None]:
    """(era, HTTP status, JSON-RPC error code) that docs/mcp-clients.md promises for one request sent with
    `headers` (None, None: a result with HTTP 200, a tool error included). Written from the documentation's
    tables, not from mcp_tools/protocol_2026_07_28.py, so the two are checked against each other."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    header_version = headers.get("MCP-Protocol-Version")
    if isinstance(meta, dict) and META_VERSION in meta:
        modern = meta[META_VERSION] not in LEGACY_VERSIONS
    else:
        modern = header_version == MODERN
    method, notification = message["method"], "id" not in message
    if not modern:
        if header_version is not None and header_version not in LEGACY_VERSIONS and method != "initialize":
            return "legacy", 400, -32600
        return "legacy", 202 if notification else 200, None
    if notification:
        return "modern", 202, None
    if not (isinstance(meta, dict) and isinstance(meta.get(META_VERSION), str)
            and isinstance(meta.get(META_CAPABILITIES), dict)):
        return "modern", 400, -32602
    version = meta[META_VERSION]
    mirrored = [("MCP-Protocol-Version", version), ("Mcp-Method", method)]
    if isinstance(params.get(NAME_FIELD.get(method, "")), str):
        mirrored.append(("Mcp-Name", params[NAME_FIELD[method]]))
    for header, value in mirrored:
        sent = headers.get(header)
        if sent is None or (_header_name(sent) if header == "Mcp-Name" else sent) != value:
            return "modern", 400, -32020
    if version != MODERN:
        return "modern", 400, -32022
    if method not in MODERN_ANSWERED:
        return "modern", 404, -32601
    if method == "resources/read":
        return "modern", 400, -32602  # no resource: "Resource not found" (or no uri at all)
    if method == "tools/call" and (params.get("name") not in TOOLS or not isinstance(params.get("arguments", {}),
                                                                                       dict | None)):
        return "modern", 400, -32602  # an unknown tool, or arguments that are no object
    return "modern", 200, None


def test_any_2026_07_28_request_gets_the_answer_the_documentation_promises(raw_mcp, world: World):
    """MCP 2026-07-28 envelopes, valid and hostile (no, garbled, legacy or unknown `_meta` versions, headers
    missing, mismatched or base64-encoded, notifications): never 5xx, always JSON-RPC with the request's id,
    and exactly the HTTP status and JSON-RPC code docs/mcp-clients.md gives (`expected_answer`); results
    carry `resultType: "complete"`, tool errors the same contract as in 2025-11-25."""
    findings = Findings()

    @settings(max_examples=budget(PROTOCOL_EXAMPLES), **FUZZ)
    @given(message=modern_requests, damage=st.sampled_from(HEADER_DAMAGE))
    def call(message: dict[str, Any], damage: str) -> None:
        headers = modern_headers(message, damage)
        sent = json.dumps(message)
        # None removes RawMcp's default MCP-Protocol-Version header (2025-06-18) from the request.
        status, text = raw_mcp.post(sent, {"MCP-Protocol-Version": None, **headers})
        era, expected_status, expected_code = expected_answer(message, headers)
        outcome = judge_in_era(status, text, sent, modern=era == "modern", well_formed=False,
                               request_id=message.get("id"))
        STATS.by_code[f"{era} HTTP {expected_status}/{expected_code}"] += 1
        code = (outcome.rpc_error or {}).get("code")
        extra = []
        if expected_status == 202:
            if status != 202:
                extra.append(f"{era} notification answered HTTP {status}")
        elif era == "legacy" and expected_code is None:
            if status != 200:
                extra.append(f"well-formed legacy request answered HTTP {status} ({code})")
        elif (status, code) != (expected_status, expected_code) and not (
                # params of a listing its model refuses (a cursor that is no string...) are -32602
                era == "modern" and expected_code is None and message["method"] != "tools/call"
                and (status, code) == (400, -32602)):
            extra.append(f"{era}: HTTP {status} / {code}, documented: HTTP {expected_status} / {expected_code}")
        findings.record(f"{era} envelope", outcome, sent, extra)

    call()
    findings.assert_none()


# Toolset addresses (mcp_tools.toolsets, docs/mcp-clients.md): /mcp/x/<toolsets>[/readonly] and /mcp/readonly.
# The toolsets are the modules the tools are written in (the rule mcp_tools.toolsets documents), sorted.
TOOLSETS = tuple(sorted({toolset_of(spec) for spec in TOOLS.values()}))
LISTING = object()  # tools/list rather than a tools/call
# (A literal ".." is not among them: the HTTP client resolves it before sending, RFC 3986 5.2.4; "%2e%2e"
# reaches the server.)
TOOLSET_SEGMENTS = ["deals", "lenders", "placements", "deals,placements", "Deals,%20lenders", "deals,,lenders",
                    "placements,", "DEALS", "nope", "deal", ",", "%20", "deals,nope", "x" * 300, "%00", "%ff",
                    "%C3%A9", "%2e%2e", "deals%2Freadonly", "deals%2Fnope", "readonly", "deals;x", "*",
                    "deals%0a", "%E2%80%AE"]
toolset_segments = st.one_of(
    st.sampled_from(TOOLSET_SEGMENTS),
    st.sampled_from([*TOOLSETS, "deals,placements", "lenders,deals"]),
    st.lists(st.sampled_from(TOOLSETS), min_size=1, max_size=3).map(",".join),
    st.lists(st.sampled_from([*TOOLSETS, "nope", " ", ""]), min_size=1, max_size=3).map(",".join),
    st.text(max_size=12).filter(lambda text: text not in (".", "..")).map(lambda text: quote(text, safe="")),
)
addresses = st.one_of(
    st.just("/mcp/readonly"),
    toolset_segments.map(lambda segment: f"/mcp/x/{segment}"),
    toolset_segments.map(lambda segment: f"/mcp/x/{segment}/readonly"),
    st.sampled_from(["/mcp/x", "/mcp/x/", "/mcp/readonly/", "/mcp/readonly/x", "/mcp/x/deals/readonly/x",
                     "/mcp/x/deals/nope", "/mcp/x//readonly"]),
)
selection_headers = st.fixed_dictionaries({}, optional={
    "X-MCP-Toolsets": st.sampled_from(["deals", "lenders,placements", "Deals , lenders ,", "", "nope", "deals,x"]),
    "X-MCP-Readonly": st.sampled_from(["true", "1", "Off", "no", "", "maybe"]),
})


def _toolset_names(text: str) -> frozenset[str] | None:
    """The toolsets a comma-separated list names (case and whitespace ignored); None when it names an
    unknown one or none at all (the documented 400)."""
    names = frozenset(part.strip().lower() for part in text.split(",") if part.strip())
    return names if names and names <= set(TOOLSETS) else None


def expected_selection(path: str, headers: dict[str, str]) -> tuple[int, frozenset[str], bool] | tuple[int, str]:
    """(200, toolsets, read-only) for an address and headers that select part of the catalogue, or
    (404, "") for a path that is no address of /mcp and (400, field) for an unknown toolset: derived from
    docs/mcp-clients.md and mcp_tools.toolsets' documentation, not from its code."""
    # The server sees the path percent-decoded (PEP 3333), bytes that are not UTF-8 kept as %XX.
    raw = unquote_to_bytes(path)
    try:
        decoded = raw.decode()
    except UnicodeDecodeError:
        decoded = None
    parts = (decoded or path).split("/")[1:]
    if parts == ["mcp", "readonly"]:
        url_names, read_only = None, True
    elif len(parts) in (3, 4) and parts[:2] == ["mcp", "x"] and parts[2] and parts[3:] in ([], ["readonly"]):
        url_names = _toolset_names(parts[2]) if decoded is not None else None
        if url_names is None:
            return 400, "url"
        read_only = len(parts) == 4
    else:
        return 404, ""
    names = url_names if url_names is not None else frozenset(TOOLSETS)
    header = headers.get("X-MCP-Toolsets", "")
    if header.strip():
        chosen = _toolset_names(header)
        if chosen is None:
            return 400, "X-MCP-Toolsets"
        names &= chosen
    read_only = read_only or headers.get("X-MCP-Readonly", "").strip().lower() not in {
        "", "false", "f", "no", "n", "0", "off"}
    return 200, names, read_only


def test_toolset_addresses_in_both_eras(raw_mcp, world: World):
    """tools/list and tools/call, in either era, at /mcp/x/<toolsets>[/readonly] and /mcp/readonly with
    toolset names valid and hostile (unknown, empty, percent-encoded, not UTF-8, NUL, slashes) and the
    selection headers: never 5xx; an unknown toolset is the documented 400 VALIDATION_ERROR naming the
    known ones, a path that is no address the JSON 404; otherwise the era's JSON-RPC answer, tools/list
    lists only the selected tools and a tool left out is refused (VALIDATION_ERROR, or FORBIDDEN for a
    tool that writes on a read-only address), never run."""
    published = schemas(raw_mcp)
    findings = Findings()

    def check(path: str, selection: dict[str, str], modern: bool, tool: str, arguments: Any) -> None:
        """One tools/call of `tool` (tools/list when `arguments` is LISTING) at `path`, judged."""
        listing = arguments is LISTING
        request_id = raw_mcp.next_id()
        method = "tools/list" if listing else "tools/call"
        params: dict[str, Any] = {} if listing else {"name": tool, "arguments": arguments}
        headers = dict(selection)
        if modern:
            params["_meta"] = MODERN_META
            headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": method})
            if not listing:
                headers["Mcp-Name"] = tool
        sent = encode({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        status, text = raw_mcp.post(sent, headers, path=path)
        expected = expected_selection(path, selection)
        STATS.by_code[f"toolset address HTTP {expected[0]}"] += 1
        where = f"{path[:40]} ({MODERN if modern else 'legacy'})"
        if expected[0] != 200:
            outcome = Outcome(status=status, text=text)
            extra = refusal_problems(status, text, sent, expected)
            findings.record(where, outcome, sent, extra)
            return
        _status, names, read_only = expected
        hostile = not listing and (contains_non_finite(arguments) or contains_deep(arguments))
        outcome = judge_in_era(status, text, sent, modern=modern, well_formed=not hostile,
                               request_id=None if hostile else request_id)
        extra: list[str] = []
        allowed = {name for name, spec in TOOLS.items()
                   if toolset_of(spec) in names and (not read_only or spec.annotations.readOnlyHint)}
        result = outcome.body.get("result") if isinstance(outcome.body, dict) else None
        if listing and isinstance(result, dict):
            listed = {t.get("name") for t in result.get("tools", [])}
            if listed != allowed:
                extra.append(f"tools/list at {sorted(names)} read-only={read_only} listed {sorted(listed)}")
        elif not listing and tool not in allowed and outcome.tool_payload is not None:
            code = outcome.code
            # A tool that writes, on a read-only connection, is refused as such whatever its toolset.
            writes = not TOOLS[tool].annotations.readOnlyHint
            expected_code = "FORBIDDEN" if read_only and writes else "VALIDATION_ERROR"
            if code != expected_code:
                extra.append(f"{tool} outside the selection answered {code or 'success'}, not {expected_code}")
        findings.record(where, outcome, sent, extra)

    # Every listed segment once, at both addresses, whichever else the examples draw.
    for index, segment in enumerate(TOOLSET_SEGMENTS):
        for suffix in ("", "/readonly"):
            check(f"/mcp/x/{segment}{suffix}", {}, index % 2 == 0, "list_deals", LISTING)

    @settings(max_examples=budget(TOOLSET_EXAMPLES), **FUZZ)
    @given(path=addresses, selection=selection_headers, modern=st.booleans(), data=st.data())
    def call(path: str, selection: dict[str, str], modern: bool, data: st.DataObject) -> None:
        tool = data.draw(st.sampled_from(TOOL_NAMES), label="tool")
        arguments = data.draw(st.one_of(st.just(LISTING), valid_arguments(published[tool], world),
                                        hostile_arguments(published[tool], world)), label="arguments")
        check(path, selection, modern, tool, arguments)

    call()
    findings.assert_none()


def refusal_problems(status: int, text: str, sent: str, expected: tuple[Any, ...]) -> list[str]:
    """The documented refusal of an address: 404 or 400, the API's error body, nothing internal."""
    problems = [f"response leaks {leak}" for leak in leaks(text, sent)]
    if status != expected[0]:
        return [*problems, f"HTTP {status}, documented {expected[0]}"]
    try:
        body = json.loads(text)
    except ValueError:
        return [*problems, f"HTTP {status} with a body that is not JSON"]
    if not isinstance(body, dict):
        return [*problems, "refusal is not a JSON object"]
    code, message = body.get("code"), body.get("message")
    if status == 404:
        if code != "NOT_FOUND" or not isinstance(message, str):
            problems.append(f"404 without the NOT_FOUND error body: {text[:80]}")
        return problems
    fields = (body.get("details") or {}).get("fields") or {}
    if code != "VALIDATION_ERROR" or not str(message).startswith("Validation failed: "):
        problems.append(f"unknown toolset answered {code!r}: {str(message)[:80]}")
    elif f"the toolsets are: {', '.join(TOOLSETS)}" not in " ".join(fields.get(expected[1], [])):
        problems.append(f"unknown toolset refusal does not name the known ones under {expected[1]}: {fields}")
    return problems


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
