"""The same tools/call in MCP 2025-11-25 and 2026-07-28 gives the same tool result (issue 21).

Only the envelope may differ: a 2026-07-28 result adds `resultType: "complete"` and the server's
`_meta` after the bytes the byte budget counts, and an unknown tool is a JSON-RPC -32602 carrying the
same VALIDATION_ERROR object (docs/mcp-clients.md). Everything behind the envelope is one code path
(`LevMCP.call_tool_sync`), and these tests hold it so with real parts: the error contract, the byte
budget's cut pages, scopes (API keys and OAuth's step-up 403), rate limits counted in one window
through the cache (Redis when REDIS_URL is set), the breaker opened by a real backend answering 504,
the metrics, and the request id echoed on every answer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from django.test import Client

from lev.accounts import scopes
from lev.accounts.services import api_key_create
from mcp_tools import resilience
from mcp_tools.metrics import TOOL_CALLS
from mcp_tools.server import get_server
from tests.backend_stub import BackendStub, Reply
from tests.factories import DealFactory, DealPropertyFactory
from tests.oauth.flow import Flow, public_client

pytestmark = pytest.mark.django_db

MODERN, LEGACY = "2026-07-28", "2025-11-25"
ERAS = (LEGACY, MODERN)
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
BASE_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
SERVER_META = {"io.modelcontextprotocol/serverInfo": {"name": "lev", "version": get_server().server_info["version"]}}


def post(era: str, credential: str, method: str, params: dict[str, Any], *, path: str = "/mcp", request_id=1,
         **headers: str):
    """One request of `era`: 2026-07-28 with `_meta` and the headers mirroring the body."""
    params = dict(params)
    standard = {"MCP-Protocol-Version": era}
    if era == MODERN:
        params["_meta"] = META
        standard["Mcp-Method"] = method
        if isinstance(params.get("name"), str):
            standard["Mcp-Name"] = params["name"]
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    return Client().generic("POST", path, body, content_type="application/json",
                            headers={**BASE_HEADERS, "Authorization": f"Bearer {credential}", **standard, **headers})


def call(era: str, credential: str, name: str, arguments: Any = None, **kwargs):
    return post(era, credential, "tools/call", {"name": name, "arguments": arguments or {}}, **kwargs)


def tool_result(era: str, response) -> dict[str, Any]:
    """The result of a tools/call, without what only 2026-07-28 adds (checked here)."""
    result = response.json()["result"]
    if era == MODERN:
        assert result.pop("resultType") == "complete" and result.pop("_meta") == SERVER_META, result
    else:
        assert "resultType" not in result and "_meta" not in result, result
    assert result["structuredContent"] == json.loads(result["content"][0]["text"])
    return result


def both(credential: str, name: str, arguments: Any = None, **kwargs) -> tuple[int, dict[str, Any]]:
    """The status and tool result of the same call in both eras, asserted equal."""
    answers = {era: call(era, credential, name, arguments, **kwargs) for era in ERAS}
    statuses = {era: response.status_code for era, response in answers.items()}
    assert statuses[LEGACY] == statuses[MODERN], statuses
    results = {era: tool_result(era, response) for era, response in answers.items()}
    assert results[LEGACY] == results[MODERN]
    return statuses[LEGACY], results[LEGACY]


def counted(name: str, code: str, category: str) -> float:
    return TOOL_CALLS.labels(name, code, category)._value.get()


# --- the error contract ----------------------------------------------------------------------------

@pytest.fixture
def deals(account):
    live = DealFactory(account=account, title="Live deal")
    DealPropertyFactory(deal=live, state="TX", asset_type="multifamily")
    archived = DealFactory(account=account, title="Archived deal", archived=True)
    return live, archived


@pytest.mark.parametrize(("name", "arguments", "code"), [
    ("list_deals", {}, None),
    ("get_deal", "live", None),
    ("list_deal_properties", "live", None),
    ("get_deal", {"deal_id": 987654}, "NOT_FOUND"),
    ("get_deal", {"deal_id": "1"}, "VALIDATION_ERROR"),
    ("get_deal", {}, "VALIDATION_ERROR"),
    ("list_deals", {"limit": 0, "nope": 1}, "VALIDATION_ERROR"),
    ("list_deals", {"search": "a\x00b"}, "VALIDATION_ERROR"),
    ("update_deal", "archived", "BUSINESS_RULE"),
    ("create_deal", {"title": "x", "idempotency_key": "k1", "loan_amount": "18.5M"}, "VALIDATION_ERROR"),
])
def test_the_same_call_gives_the_same_result_and_error_contract(api_key, deals, name, arguments, code):
    live, archived = deals
    if arguments == "live":
        arguments = {"deal_id": live.pk}
    elif arguments == "archived":
        arguments = {"deal_id": archived.pk, "title": "Renamed"}
    status, result = both(api_key, name, arguments)
    assert status == 200
    payload = result["structuredContent"]
    if code is None:
        assert result["isError"] is False, payload
    else:
        assert result["isError"] is True and payload["code"] == code
        assert {"errorCategory", "isRetryable", "code", "message"} <= set(payload)


def test_an_unknown_tool_is_the_same_validation_error_in_either_envelope(api_key):
    legacy = tool_result(LEGACY, call(LEGACY, api_key, "no_such_tool"))
    modern = call(MODERN, api_key, "no_such_tool")
    assert modern.status_code == 400
    error = modern.json()["error"]
    assert error["code"] == -32602 and legacy["isError"] is True
    assert error["data"] == legacy["structuredContent"] and error["data"]["code"] == "VALIDATION_ERROR"


def test_a_tool_left_out_of_the_connection_is_refused_alike(api_key, deals):
    live, _archived = deals
    status, result = both(api_key, "get_deal", {"deal_id": live.pk}, path="/mcp/x/placements")
    assert status == 200 and result["structuredContent"]["code"] == "VALIDATION_ERROR"
    status, result = both(api_key, "update_deal", {"deal_id": live.pk, "title": "No"}, path="/mcp/readonly")
    assert status == 200 and result["structuredContent"]["code"] == "FORBIDDEN"


# --- the byte budget -------------------------------------------------------------------------------

def result_member(body: bytes) -> bytes:
    """The `result` member of a JSON-RPC answer to id 1, as written."""
    prefix = b'{"jsonrpc":"2.0","id":1,"result":'
    assert body.startswith(prefix) and body.endswith(b"}"), body[:100]
    return body[len(prefix):-1]


def test_the_budget_cuts_the_same_page_and_counts_the_same_bytes_in_both_eras(api_key, account, settings):
    deal = DealFactory(account=account)
    for number in range(30):
        DealPropertyFactory(deal=deal, name=f"Property {number:02d} " + "é" * 150, address="Ö" * 200)
    settings.LEV_MCP_MAX_RESPONSE_BYTES = 6000
    status, result = both(api_key, "list_deal_properties", {"deal_id": deal.pk, "limit": 30})
    page = result["structuredContent"]
    assert status == 200 and not result["isError"]
    assert page["truncated"] is True and 0 < len(page["properties"]) < 30 and page["next_cursor"]
    legacy = result_member(call(LEGACY, api_key, "list_deal_properties", {"deal_id": deal.pk, "limit": 30}).content)
    modern = result_member(call(MODERN, api_key, "list_deal_properties", {"deal_id": deal.pk, "limit": 30}).content)
    # The bytes the budget counts are the same, and within it; 2026-07-28 appends its two members after them.
    assert len(legacy) <= 6000 and modern.startswith(legacy[:-1] + b',"resultType":"complete","_meta":')
    # The rest of the list, by the cursor, is the same too.
    both(api_key, "list_deal_properties", {"deal_id": deal.pk, "cursor": page["next_cursor"]})


def test_an_answer_over_the_budget_is_the_same_internal_error(api_key, deals, settings):
    settings.LEV_MCP_MAX_RESPONSE_BYTES = 120
    status, result = both(api_key, "list_deals", {})
    assert status == 200 and result["structuredContent"]["code"] == "INTERNAL_ERROR"


# --- scopes ------------------------------------------------------------------------------------------

def test_an_api_key_without_the_scope_gets_the_same_forbidden_result(user, account, deals):
    _key, reader = api_key_create(user=user, account=account, name="reader", scopes=scopes.READ_ONLY_SCOPES)
    live, _archived = deals
    status, result = both(reader, "update_deal", {"deal_id": live.pk, "title": "No"})
    assert status == 200 and result["structuredContent"]["code"] == "FORBIDDEN"
    live.refresh_from_db()
    assert live.title == "Live deal"


def test_an_oauth_token_without_the_scope_gets_the_same_step_up_403(user, deals):
    flow = Flow(user=user, client_id=public_client().client_id)
    token = flow.tokens(scope=" ".join(sorted(scopes.READ_ONLY_SCOPES)))["access_token"]
    live, _archived = deals
    answers = {era: call(era, token, "update_deal", {"deal_id": live.pk, "title": "No"}) for era in ERAS}
    challenges = {era: response["WWW-Authenticate"] for era, response in answers.items()}
    assert {response.status_code for response in answers.values()} == {403}
    assert challenges[LEGACY] == challenges[MODERN] and 'error="insufficient_scope"' in challenges[LEGACY]
    assert 'scope="deals:write"' in challenges[LEGACY] or "deals:write" in challenges[LEGACY]
    results = {era: tool_result(era, response) for era, response in answers.items()}
    assert results[LEGACY] == results[MODERN] and results[LEGACY]["structuredContent"]["code"] == "FORBIDDEN"


# --- rate limits: one window for both eras --------------------------------------------------------

def test_both_eras_count_in_the_same_rate_limit_window(api_key, user, deals, settings, frozen_window):
    settings.LEV_RATE_LIMIT_READS = "4/day"
    live, _archived = deals
    for era in (LEGACY, MODERN, MODERN, LEGACY):  # four reads of the day, alternating: all served
        assert not tool_result(era, call(era, api_key, "get_deal", {"deal_id": live.pk}))["isError"]
    if django_settings.REDIS_URL:  # the window is one key in Redis, counted by both
        window = int(frozen_window // 86400)
        client = cache._cache.get_client(write=True)
        assert int(client.get(cache.make_key(f"throttle:user_read:{user.pk}:{window}"))) == 4
    status, result = both(api_key, "get_deal", {"deal_id": live.pk})  # the 5th and 6th: refused alike
    payload = result["structuredContent"]
    assert status == 200 and payload["code"] == "RATE_LIMITED" and payload["isRetryable"] is True
    assert payload["retryAfterMs"] > 0 and payload["message"].startswith("Rate limit exceeded: ")


# --- the breaker: a real backend failing ------------------------------------------------------------

def test_outages_of_either_era_open_the_one_breaker_and_both_are_refused_alike(api_key, settings):
    settings.LEV_RETRY_TOTAL = 0
    fail_max = settings.LEV_BREAKER_FAIL_MAX
    with BackendStub(*[Reply(504, None)] * (fail_max + 4)) as backend:
        settings.LEV_API_BASE_URL = backend.url
        for attempt in range(fail_max):
            era = ERAS[attempt % 2]
            payload = tool_result(era, call(era, api_key, "get_deal", {"deal_id": 1}))["structuredContent"]
            assert payload["code"] == "UPSTREAM_UNAVAILABLE" and payload["isRetryable"] is True
        assert resilience.breaker_state() == "open" and backend.count() == fail_max
        # Open: neither era reaches the backend, and both get the same refusal (retryAfterMs aside,
        # which counts down between the two calls).
        results = {era: tool_result(era, call(era, api_key, "get_deal", {"deal_id": 1})) for era in ERAS}
        assert backend.count() == fail_max
    payloads = {}
    for era, result in results.items():
        payload = result["structuredContent"]
        assert result["isError"] is True and payload["code"] == "UPSTREAM_UNAVAILABLE"
        assert isinstance(payload.pop("retryAfterMs"), int)
        payloads[era] = payload
    assert payloads[LEGACY] == payloads[MODERN]


# --- metrics --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "arguments", "code", "category"), [
    ("list_deals", {}, "ok", "none"),
    ("list_deals", {"limit": "x"}, "VALIDATION_ERROR", "validation"),
    ("no_such_tool", {}, "VALIDATION_ERROR", "validation"),  # a -32602 in 2026-07-28, counted the same
    ("get_deal", {"deal_id": 987654}, "NOT_FOUND", "validation"),
])
def test_each_era_counts_a_call_the_same_way(api_key, name, arguments, code, category):
    label = "unknown" if name == "no_such_tool" else name  # a made-up name is one series
    for era in ERAS:
        before = counted(label, code, category)
        call(era, api_key, name, arguments)
        assert counted(label, code, category) == before + 1, era


# --- request ids ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("method", "params", "headers", "path"), [
    ("tools/call", {"name": "list_deals", "arguments": {}}, {}, "/mcp"),
    ("tools/call", {"name": "list_deals", "arguments": {"limit": "x"}}, {}, "/mcp"),
    ("tools/list", {}, {}, "/mcp/x/deals/readonly"),
    ("tools/call", {"name": "list_deals", "arguments": {}}, {"Mcp-Name": "get_deal"}, "/mcp"),  # -32020 in 2026
    ("nope/nope", {}, {}, "/mcp"),  # -32601 (404 in 2026-07-28)
    ("tools/list", {}, {}, "/mcp/x/nope"),  # the unknown toolset's 400
])
def test_the_request_id_is_echoed_in_both_eras(api_key, method, params, headers, path):
    for era in ERAS:
        request_id = f"parity-{era}-{method.replace('/', '.')}"
        response = post(era, api_key, method, params, path=path, **{"X-Request-ID": request_id, **headers})
        assert response["X-Request-ID"] == request_id, (era, response.status_code, response.content[:200])
