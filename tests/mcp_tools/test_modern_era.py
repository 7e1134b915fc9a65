"""/mcp speaks MCP 2026-07-28 beside 2025-11-25 (issue 21): raw HTTP through the whole Django stack,
API keys and OAuth tokens, each rule of `mcp_tools.protocol_2026_07_28` and the same tools behaviour in both eras."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import jsonschema
import pytest
from django.test import Client

import lev
from lev.accounts import scopes
from lev.accounts.services import api_key_create
from mcp_tools.metrics import TOOL_CALLS
from mcp_tools.registry import TOOLS
from mcp_tools.server import get_server
from tests.oauth.flow import Flow, public_client

pytestmark = pytest.mark.django_db

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}}
BASE_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
SERVER_INFO = {"name": "lev", "version": get_server().server_info["version"]}
NAME_FIELD = {"tools/call": "name", "resources/read": "uri", "prompts/get": "name"}


def send(credential: str, method: str, params: dict | None = None, *, meta: dict | None = META,
         request_id=1, **headers: str):
    """A 2026-07-28 request: `_meta` in the params and the mirrored headers (unless overridden)."""
    params = dict(params or {})
    if meta is not None:
        params["_meta"] = meta
    standard = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if isinstance(params.get(NAME_FIELD.get(method, "")), str):
        standard["Mcp-Name"] = params[NAME_FIELD[method]]
    all_headers = {**BASE_HEADERS, "Authorization": f"Bearer {credential}", **standard, **headers}
    all_headers = {k: v for k, v in all_headers.items() if v is not None}
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    return Client().generic("POST", "/mcp", body, content_type="application/json", headers=all_headers)


def legacy(credential: str, method: str, params: dict | None = None, request_id=1):
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
    return Client().generic("POST", "/mcp", body, content_type="application/json",
                            headers={**BASE_HEADERS, "Authorization": f"Bearer {credential}",
                                     "MCP-Protocol-Version": "2025-11-25"})


def error_of(response, status: int, code: int, request_id=1) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] == request_id and "result" not in body, body
    assert body["error"]["code"] == code, body
    return body["error"]


def oauth_token(user, granted) -> str:
    flow = Flow(user=user, client_id=public_client().client_id)
    return flow.tokens(scope=" ".join(sorted(granted)))["access_token"]


# --- server/discover ---------------------------------------------------------------------------------

def test_discover_names_versions_capabilities_and_the_server(api_key):
    response = send(api_key, "server/discover")
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"][0] == MODERN
    assert {"2025-11-25", "2025-06-18", "2025-03-26"} <= set(result["supportedVersions"])
    assert "tools" in result["capabilities"]
    # Nothing is delivered on subscriptions/listen: no listChanged / subscribe promises.
    assert all(not value for value in result["capabilities"].values())
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "lev"
    # Lev's own version, as /health reports it (not the `mcp` library's, the SDK's default).
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"] == lev.__version__
    assert result["instructions"].startswith("Lev:")
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0 and result["cacheScope"] == "public"


def test_client_info_is_optional(api_key):
    meta = {k: v for k, v in META.items() if k != "io.modelcontextprotocol/clientInfo"}
    assert send(api_key, "server/discover", meta=meta).status_code == 200


# --- _meta is required ---------------------------------------------------------------------------------

@pytest.mark.parametrize("meta", [
    None,
    {"io.modelcontextprotocol/clientCapabilities": {}},
    {"io.modelcontextprotocol/protocolVersion": MODERN},
    {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": []},
])
@pytest.mark.parametrize("method", ["server/discover", "tools/list"])
def test_missing_meta_is_400_invalid_params(api_key, meta, method):
    error = error_of(send(api_key, method, meta=meta, request_id=101), 400, -32602, 101)
    assert error["message"].startswith("Invalid params: _meta")


# --- headers mirror the body ------------------------------------------------------------------------------

@pytest.mark.parametrize("headers", [
    {"MCP-Protocol-Version": "2025-11-25"},
    {"Mcp-Method": None},
    {"Mcp-Method": "tools/list"},
    {"Mcp-Name": None},
    {"Mcp-Name": "get_deal"},
    {"Mcp-Name": "=?base64?not base64?="},
])
def test_headers_that_do_not_match_the_body_are_400_header_mismatch(api_key, headers):
    response = send(api_key, "tools/call", {"name": "list_deals", "arguments": {}}, request_id=7, **headers)
    assert error_of(response, 400, -32020, 7)["message"].startswith("Header mismatch: ")


def test_header_version_differs_from_meta_version_is_header_mismatch(api_key):
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    error_of(send(api_key, "server/discover", meta=meta, request_id=302), 400, -32020, 302)


def test_a_base64_mcp_name_is_decoded_before_comparing(api_key):
    encoded = "=?base64?" + base64.b64encode(b"list_deals").decode() + "?="
    response = send(api_key, "tools/call", {"name": "list_deals", "arguments": {}}, **{"Mcp-Name": encoded})
    assert response.status_code == 200 and response.json()["result"]["isError"] is False


# --- versions -----------------------------------------------------------------------------------------------

def test_an_unsupported_version_of_a_modern_client_is_400_unsupported_protocol_version(api_key):
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    response = send(api_key, "server/discover", meta=meta, request_id=301, **{"MCP-Protocol-Version": "v999.0.0"})
    error = error_of(response, 400, -32022, 301)
    discovered = send(api_key, "server/discover").json()["result"]["supportedVersions"]
    assert error["data"] == {"supported": discovered, "requested": "v999.0.0"}


def test_a_legacy_client_with_an_unknown_header_keeps_the_legacy_answer(api_key):
    body = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    response = Client().generic("POST", "/mcp", body, content_type="application/json",
                                headers={**BASE_HEADERS, "Authorization": f"Bearer {api_key}",
                                         "MCP-Protocol-Version": "2099-01-01"})
    error_of(response, 400, -32600, 3)


def test_a_legacy_version_in_meta_is_served_as_legacy(api_key):
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
    response = send(api_key, "tools/list", meta=meta, **{"MCP-Protocol-Version": "2025-11-25"})
    assert response.status_code == 200 and "resultType" not in response.json()["result"]


# --- methods --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel", "resources/subscribe",
                                    "resources/unsubscribe", "completion/complete", "subscriptions/listen",
                                    "unknown/method", "prompts/get"])
def test_removed_and_unknown_methods_are_404_method_not_found(api_key, method):
    params = {"notifications": {"toolsListChanged": True}} if method == "subscriptions/listen" else {}
    error = error_of(send(api_key, method, params, request_id=500), 404, -32601, 500)
    assert error["message"] == f"Method not found: {method}"


def test_a_modern_notification_is_accepted(api_key):
    body = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"_meta": META}})
    response = Client().generic("POST", "/mcp", body, content_type="application/json",
                                headers={**BASE_HEADERS, "Authorization": f"Bearer {api_key}",
                                         "MCP-Protocol-Version": MODERN, "Mcp-Method": "notifications/cancelled"})
    assert response.status_code == 202 and response.content == b""


def test_params_that_do_not_fit_are_invalid_params_with_http_400(api_key):
    # The official SDK 2.x maps -32602 to 400 in this era, whatever produced it.
    error = error_of(send(api_key, "tools/call", {"arguments": {}}, request_id=4), 400, -32602, 4)
    assert error["message"] == "Invalid params: name is required"


def test_resources_read_is_resource_not_found_with_the_uri(api_key):
    uri = "test://nonexistent-resource-for-conformance-testing"
    error = error_of(send(api_key, "resources/read", {"uri": uri}), 400, -32602)
    assert error == {"code": -32602, "message": "Resource not found", "data": {"uri": uri}}


@pytest.mark.parametrize(("method", "key"), [("resources/list", "resources"),
                                             ("resources/templates/list", "resourceTemplates"),
                                             ("prompts/list", "prompts")])
def test_empty_lists_carry_caching_hints(api_key, method, key):
    result = send(api_key, method).json()["result"]
    assert result == {key: [], "resultType": "complete", "ttlMs": result["ttlMs"], "cacheScope": "public",
                      "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}}


# --- tools, both eras --------------------------------------------------------------------------------------------

def test_tools_list_is_sorted_cached_privately_and_the_same_catalogue_as_2025_11_25(api_key):
    result = send(api_key, "tools/list").json()["result"]
    names = [tool["name"] for tool in result["tools"]]
    assert names == sorted(TOOLS)
    assert result["resultType"] == "complete" and result["cacheScope"] == "private"
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] > 0
    old = legacy(api_key, "tools/list").json()["result"]
    assert [tool["name"] for tool in old["tools"]] == names  # deterministic in both eras
    assert old["tools"] == result["tools"]


@pytest.mark.parametrize("kind", ["api_key", "oauth"])
def test_tools_list_follows_the_credential_scopes_in_both_eras(user, account, kind):
    credential = (api_key_create(user=user, account=account, name="ro", scopes=scopes.READ_ONLY_SCOPES)[1]
                  if kind == "api_key" else oauth_token(user, scopes.READ_ONLY_SCOPES))
    expected = sorted(spec.name for spec in TOOLS.values() if spec.annotations.readOnlyHint)
    assert [t["name"] for t in send(credential, "tools/list").json()["result"]["tools"]] == expected
    assert [t["name"] for t in legacy(credential, "tools/list").json()["result"]["tools"]] == expected


def test_tool_results_and_errors_are_the_same_in_both_eras(api_key):
    for arguments in ({}, {"limit": "x"}, {"nope": 1}):
        modern = send(api_key, "tools/call", {"name": "list_deals", "arguments": arguments}).json()["result"]
        old = legacy(api_key, "tools/call", {"name": "list_deals", "arguments": arguments}).json()["result"]
        assert modern.pop("resultType") == "complete"
        assert modern.pop("_meta") == {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
        assert modern == old
    refused = send(api_key, "tools/call", {"name": "list_deals", "arguments": {"limit": "x"}}).json()["result"]
    assert refused["isError"] is True and refused["structuredContent"]["code"] == "VALIDATION_ERROR"
    assert refused["structuredContent"]["details"]["fields"]["limit"]


def test_tool_calls_are_counted_in_both_eras(api_key):
    counter = TOOL_CALLS.labels("list_deals", "ok", "none")
    before = counter._value.get()
    send(api_key, "tools/call", {"name": "list_deals", "arguments": {}})
    legacy(api_key, "tools/call", {"name": "list_deals", "arguments": {}})
    assert counter._value.get() == before + 2


def test_an_oauth_token_gets_the_step_up_challenge_in_the_modern_era(user):
    token = oauth_token(user, scopes.READ_ONLY_SCOPES)
    response = send(token, "tools/call", {"name": "update_deal", "arguments": {"deal_id": 1, "title": "Nope"}})
    assert response.status_code == 403 and 'error="insufficient_scope"' in response["WWW-Authenticate"]
    result = response.json()["result"]
    assert result["resultType"] == "complete" and result["structuredContent"]["code"] == "FORBIDDEN"


def test_no_credential_is_401_with_the_discovery_challenge_in_the_modern_era():
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}})
    response = Client().generic("POST", "/mcp", body, content_type="application/json",
                                headers={**BASE_HEADERS, "MCP-Protocol-Version": MODERN,
                                         "Mcp-Method": "server/discover"})
    assert response.status_code == 401 and "resource_metadata=" in response["WWW-Authenticate"]


def test_the_byte_budget_guards_modern_results_too(api_key, settings):
    settings.LEV_MCP_MAX_RESPONSE_BYTES = 120
    modern = send(api_key, "tools/call", {"name": "search_lender_directory", "arguments": {}}).json()["result"]
    old = legacy(api_key, "tools/call", {"name": "search_lender_directory", "arguments": {}}).json()["result"]
    modern.pop("resultType"), modern.pop("_meta")
    assert modern == old and old["isError"] is True  # over budget: the same INTERNAL_ERROR in both eras


def test_an_outage_answer_to_a_modern_tool_call_is_a_complete_result():
    from mcp_tools.unavailable import unavailable_response

    body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                       "params": {"name": "list_deals", "_meta": META}}).encode()
    answer = json.loads(unavailable_response(body, 1000, MODERN).content)
    assert answer["id"] == 5 and answer["result"]["resultType"] == "complete"
    assert answer["result"]["structuredContent"]["code"] == "UPSTREAM_UNAVAILABLE"
    legacy_body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "x"}}).encode()
    assert "resultType" not in json.loads(unavailable_response(legacy_body, 1000, None).content)["result"]


SCHEMA = json.loads((Path(__file__).parent / "data" / "mcp-schema-2026-07-28.json").read_text())
V999 = {"io.modelcontextprotocol/protocolVersion": "v999", "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.mark.parametrize(("definition", "method", "params", "extra"), [
    ("DiscoverResultResponse", "server/discover", None, {}),
    ("ListToolsResultResponse", "tools/list", None, {}),
    ("CallToolResultResponse", "tools/call", {"name": "list_deals", "arguments": {}}, {}),
    ("CallToolResultResponse", "tools/call", {"name": "list_deals", "arguments": {"nope": 1}}, {}),
    ("ListResourcesResultResponse", "resources/list", None, {}),
    ("ListResourceTemplatesResultResponse", "resources/templates/list", None, {}),
    ("ListPromptsResultResponse", "prompts/list", None, {}),
    ("JSONRPCErrorResponse", "ping", None, {}),
    ("JSONRPCErrorResponse", "resources/read", {"uri": "test://none"}, {}),
    ("HeaderMismatchError", "server/discover", None, {"Mcp-Method": "tools/list"}),
])
def test_answers_follow_the_2026_07_28_schema(api_key, definition, method, params, extra):
    validator = jsonschema.Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": SCHEMA["$defs"]})
    answer = send(api_key, method, params, **extra).json()
    assert not [error.message for error in validator.iter_errors(answer)]


def test_the_unsupported_version_error_follows_the_schema(api_key):
    validator = jsonschema.Draft202012Validator({"$ref": "#/$defs/UnsupportedProtocolVersionError",
                                                 "$defs": SCHEMA["$defs"]})
    answer = send(api_key, "server/discover", meta=V999, **{"MCP-Protocol-Version": "v999"}).json()
    assert not [error.message for error in validator.iter_errors(answer)]


def test_an_unknown_tool_is_a_protocol_error_carrying_the_contract(api_key):
    """2026-07-28 server/tools: "Unknown tool" is a JSON-RPC -32602 (2025-11-25 keeps its tool result)."""
    error = error_of(send(api_key, "tools/call", {"name": "test_missing_capability", "arguments": {}}, request_id=401),
                     400, -32602, 401)
    assert error["message"].startswith("Unknown tool: test_missing_capability")
    assert error["data"]["code"] == "VALIDATION_ERROR" and error["data"]["details"]["fields"]["name"]
    old = legacy(api_key, "tools/call", {"name": "test_missing_capability", "arguments": {}}).json()["result"]
    assert old["isError"] is True and old["structuredContent"] == error["data"]


def test_toolsets_and_read_only_mode_select_the_modern_catalogue_too(api_key):
    def names(path: str = "/mcp", **headers: str) -> list[str]:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}})
        response = Client().generic("POST", path, body, content_type="application/json",
                                    headers={**BASE_HEADERS, "Authorization": f"Bearer {api_key}",
                                             "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list", **headers})
        assert response.status_code == 200, response.content
        return [tool["name"] for tool in response.json()["result"]["tools"]]

    readers = sorted(spec.name for spec in TOOLS.values() if spec.annotations.readOnlyHint)
    assert names("/mcp/readonly") == readers
    assert names(**{"X-MCP-Readonly": "true"}) == readers
    deals = names("/mcp/x/deals")
    assert deals and deals == sorted(deals) and set(deals) < set(TOOLS)


# --- the official SDK 2.x client, both eras ----------------------------------------------------------------
# In the mcp 2.x venv test_sdk2_client.py makes (.tools/sdk2): this project pins 1.x for django-mcp-server.

@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("how", "version"), [("discover", MODERN), ("initialize", "2025-11-25")])
def test_the_official_sdk_2_client_negotiates_each_era(live_server, api_key, how, version):
    from tests.mcp_tools.test_sdk2_client import sdk2_python

    done = subprocess.run([str(sdk2_python()), str(Path(__file__).parent / "sdk2_eras_client.py"),
                           f"{live_server.url}/mcp", api_key, how], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen["version"] == version
    assert seen["tools"] == sorted(TOOLS)
    assert seen["ok"] == {"deals": [], "total": 0, "has_more": False, "next_cursor": None}
    assert seen["bad_is_error"] is True and seen["bad"]["code"] == "VALIDATION_ERROR"
