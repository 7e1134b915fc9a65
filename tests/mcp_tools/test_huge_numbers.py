"""Numbers no float holds, in every numeric argument of every tool (issue #19, item 1).

JSON numbers have no size limit. An integer of 310 digits or more (>= 1e309) has no float value, and
a literal such as 1e400 reads as infinity; a money argument given one once raised OverflowError in a
validator and /mcp answered HTTP 500 with the REST error body. Every such value must be a
VALIDATION_ERROR tool result naming the argument, over real HTTP, for every integer and number
property of every tool that tools/list publishes (nested ones too: `properties.0.units`).

The values are written as raw JSON text, so they reach the server exactly as an agent sends them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from mcp_tools.registry import TOOLS
from tests.fuzz.strategies import dotted, numeric_paths, put
from tests.mcp_tools.test_catalogue_budget import NO_ARGUMENTS

# Tools whose arguments are all text and choices (a company: kind, name, website, location, notes; a lender:
# name, website, city, state, about, types).
NO_NUMBERS = {"create_company", "create_lender"}

pytestmark = pytest.mark.django_db(transaction=True)

# JSON texts of numbers out of every argument's range: 400-digit integers (Python writes 10**400 as
# this text), float-overflowing literals, and one just past a float's range (1.8e308 < 10**309).
HUGE = {
    "10**400": str(10**400),
    "-10**400": str(-(10**400)),
    "10**309": str(10**309),
    "1e400": "1e400",
    "-1e400": "-1e400",
    "1.5e999": "1.5e999",
}
PLACEHOLDER = "\u2063NUMBER\u2063"
# What the agent reads for such a value: the bound it breaks, or (for infinity) that it is not finite.
RANGE_MESSAGES = ("must be at most ", "must be at least ", "must be greater than ", "must be a finite number")


def arguments_with(path: tuple[str | int, ...]) -> dict[str, Any]:
    """An argument object holding PLACEHOLDER at `path` (and nothing else)."""
    arguments: dict[str, Any] = {}
    put(arguments, path, PLACEHOLDER)
    return arguments


class RawRpc:
    def __init__(self, base_url: str, api_key: str):
        self.url = f"{base_url}/mcp"
        self.headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream", "Connection": "close"}
        self.sent = 0

    def post(self, body: str) -> requests.Response:
        self.sent += 1
        return requests.post(self.url, data=body.encode(), headers=self.headers, timeout=30)

    def tools(self) -> list[dict[str, Any]]:
        response = self.post('{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
        assert response.status_code == 200, response.text
        return response.json()["result"]["tools"]


@pytest.fixture
def rpc(live_server, api_key) -> RawRpc:
    return RawRpc(live_server.url, api_key)


def test_every_numeric_argument_of_every_tool_refuses_numbers_no_float_holds(rpc):
    tools = rpc.tools()
    assert sorted(t["name"] for t in tools) == sorted(TOOLS)  # every tool: the key sees them all
    cases = [(tool["name"], path) for tool in tools for path in numeric_paths(tool["inputSchema"])]
    # Every tool that takes arguments has one (ids, limits, money); a schema that hid its numbers would
    # shrink this.
    assert {name for name, _path in cases} == set(TOOLS) - NO_ARGUMENTS - NO_NUMBERS
    failures = []
    request_id = 100
    for name, path in cases:
        argument = dotted(path)
        for label, literal in HUGE.items():
            request_id += 1
            body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                               "params": {"name": name, "arguments": arguments_with(path)}})
            body = body.replace(json.dumps(PLACEHOLDER), literal)
            assert literal in body
            response = rpc.post(body)
            where = f"{name}({argument}={label})"
            if response.status_code != 200 or response.headers.get("Content-Type") != "application/json":
                failures.append(f"{where}: HTTP {response.status_code} {response.text[:200]}")
                continue
            answer = response.json()
            result = answer.get("result") or {}
            payload = result.get("structuredContent") or {}
            fields = (payload.get("details") or {}).get("fields") or {}
            if answer.get("id") != request_id or not result.get("isError"):
                failures.append(f"{where}: not a tool error: {response.text[:200]}")
            elif payload.get("code") != "VALIDATION_ERROR" or argument not in fields:
                failures.append(f"{where}: {payload.get('code')} without naming {argument}: {payload}")
            elif not all(message.startswith(RANGE_MESSAGES) for message in fields[argument]):
                failures.append(f"{where}: says {fields[argument]}, not the range it breaks")
            elif payload["errorCategory"] != "validation" or payload["isRetryable"] is not False:
                failures.append(f"{where}: wrong category {payload}")
            elif json.loads(result["content"][0]["text"]) != payload:
                failures.append(f"{where}: text content differs from structuredContent")
    assert not failures, f"{len(failures)} of {len(cases) * len(HUGE)} calls:\n" + "\n".join(failures)


@pytest.mark.parametrize(("tool", "argument", "literal", "message"), [
    # Money: the bound the API enforces, as for any other amount too large.
    ("create_deal", "loan_amount", str(10**400), "must be at most 999999999999.99"),
    ("update_deal_financials", "purchase_price", str(10**400), "must be at most 999999999999.99"),
    ("search_lender_directory", "loan_amount", str(-(10**400)), "must be greater than 0"),
    ("list_deals", "min_loan_amount", str(-(10**400)), "must be at least 0"),
    ("add_term_sheet", "max_ltv", "1e400", "must be a finite number"),
    ("add_term_sheet", "fixed_rate", str(10**400), "must be at most 30"),
    ("add_term_sheet", "max_ltv", str(10**309), "must be at most 100"),
    # Integers: compared exactly, whatever their size.
    ("get_deal", "deal_id", str(10**400), "must be at most 9223372036854775807"),
    ("list_deals", "limit", str(-(10**400)), "must be at least 1"),
    ("get_deal", "deal_id", "1e400", "must be a finite number"),
    ("update_deal_financials", "purchase_price", "-1e400", "must be a finite number"),
])
def test_the_message_names_the_bound_the_number_breaks(rpc, tool, argument, literal, message):
    body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                       "params": {"name": tool, "arguments": {argument: PLACEHOLDER}}})
    body = body.replace(json.dumps(PLACEHOLDER), literal)
    response = rpc.post(body)
    assert response.status_code == 200, response.text
    payload = response.json()["result"]["structuredContent"]
    assert payload["code"] == "VALIDATION_ERROR"
    assert payload["details"]["fields"][argument] == [message], payload


def test_an_integer_longer_than_python_reads_is_a_parse_error_saying_so(rpc):
    # Past sys.get_int_max_str_digits() (4300) Python reads no integer; the body is refused whole.
    body = ('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_deal","arguments":'
            '{"deal_id":' + "9" * 5000 + "}}}")
    response = rpc.post(body)
    assert response.status_code == 400
    assert response.json() == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32700, "message": "Parse error: the body holds an integer of more than 4300 digits"}}
