"""The conformance fixture (mcp_tools.conformance): the MCP suite's diagnostic tools exist on /mcp
only with LEV_MCP_CONFORMANCE_FIXTURE on, behave as the suite's scenarios expect, and the production
profile refuses the setting. Raw HTTP through the whole Django stack with a real API key."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import jsonschema
import pytest
from django.test import Client

from lev.accounts.services import api_key_create
from mcp_tools.conformance.fixture import LEGACY_TOOLS, MODERN_TOOLS
from tests.factories import MembershipFactory, UserFactory
from tests.lev.test_settings import STRONG_KEY, run_manage

pytestmark = pytest.mark.django_db

MODERN = "2026-07-28"
ALL_CAPABILITIES = {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}
SCHEMA = json.loads((Path(__file__).parent / "data" / "mcp-schema-2026-07-28.json").read_text())


def send(key: str, method: str, params: dict | None = None, *, capabilities: dict | None = None,
         request_id: int = 1):
    """A 2026-07-28 request (its `_meta` and mirrored headers), declaring `capabilities` (default: all)."""
    params = {**(params or {}), "_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": ALL_CAPABILITIES if capabilities is None else capabilities}}
    headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {key}",
               "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if method == "tools/call":
        headers["Mcp-Name"] = params["name"]
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    return Client().generic("POST", "/mcp", body, content_type="application/json", headers=headers)


def legacy(key: str, method: str, params: dict | None = None):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}})
    return Client().generic("POST", "/mcp", body, content_type="application/json",
                            headers={"Accept": "application/json, text/event-stream",
                                     "Authorization": f"Bearer {key}", "MCP-Protocol-Version": "2025-11-25"})


def call(key: str, name: str, **params):
    capabilities = params.pop("capabilities", None)
    return send(key, "tools/call", {"name": name, "arguments": {}, **params}, capabilities=capabilities)


def result_of(response) -> dict:
    assert response.status_code == 200, response.content
    answer = response.json()
    validator = jsonschema.Draft202012Validator({"$ref": "#/$defs/CallToolResultResponse", "$defs": SCHEMA["$defs"]})
    assert not [error.message for error in validator.iter_errors(answer)]
    return answer["result"]


def error_of(response, status: int, code: int) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["id"] == 1 and "result" not in body and body["error"]["code"] == code, body
    return body["error"]


def text_of(result: dict) -> str:
    assert result["resultType"] == "complete" and result["isError"] is False, result
    return result["content"][0]["text"]


@pytest.fixture
def fixture_on(settings):
    settings.LEV_MCP_CONFORMANCE_FIXTURE = True


def names(response) -> set[str]:
    assert response.status_code == 200, response.content
    return {tool["name"] for tool in response.json()["result"]["tools"]}


# --- off: no trace of it ---------------------------------------------------------------------------
def test_off_by_default_nothing_is_listed_and_every_name_is_an_unknown_tool(api_key, settings):
    assert settings.LEV_MCP_CONFORMANCE_FIXTURE is False
    for listed in (names(send(api_key, "tools/list")), names(legacy(api_key, "tools/list"))):
        assert listed and not {name for name in listed if name.startswith("test_")}
    for name in ("test_error_handling", "test_missing_capability", "test_input_required_result_elicitation"):
        error = error_of(call(api_key, name, capabilities={}), 400, -32602)
        assert error["message"].startswith(f"Unknown tool: {name}") and error["data"]["code"] == "VALIDATION_ERROR"
        legacy_result = legacy(api_key, "tools/call", {"name": name, "arguments": {}}).json()["result"]
        assert legacy_result["isError"] is True and legacy_result["structuredContent"]["code"] == "VALIDATION_ERROR"


# --- on: what each revision lists --------------------------------------------------------------------
def test_on_each_revision_lists_its_fixture_tools_after_the_servers_own(api_key, fixture_on):
    modern = send(api_key, "tools/list").json()["result"]["tools"]
    assert [tool["name"] for tool in modern][-len(MODERN_TOOLS):] == list(MODERN_TOOLS)
    assert "list_deals" in {tool["name"] for tool in modern}
    assert names(legacy(api_key, "tools/list")) >= set(LEGACY_TOOLS)
    assert not names(legacy(api_key, "tools/list")) & (set(MODERN_TOOLS) - set(LEGACY_TOOLS))
    # 2025-11-25 has no InputRequiredResult: its modern-only tools stay unknown there.
    unknown = legacy(api_key, "tools/call", {"name": "test_missing_capability", "arguments": {}}).json()["result"]
    assert unknown["structuredContent"]["code"] == "VALIDATION_ERROR"
    validator = jsonschema.Draft202012Validator({"$ref": "#/$defs/ListToolsResultResponse", "$defs": SCHEMA["$defs"]})
    assert not [error.message for error in validator.iter_errors(send(api_key, "tools/list").json())]


def test_the_error_tool_is_an_error_result_in_the_contract_in_both_eras(api_key, fixture_on):
    modern = result_of(call(api_key, "test_error_handling"))
    old = legacy(api_key, "tools/call", {"name": "test_error_handling", "arguments": {}}).json()["result"]
    for result in (modern, old):
        assert result["isError"] is True
        payload = json.loads(result["content"][0]["text"])
        assert payload == result["structuredContent"]
        assert payload["code"] == "BUSINESS_RULE" and payload["errorCategory"] == "business"
    assert modern["resultType"] == "complete"


def test_the_content_tools_return_each_kind_of_content(api_key, fixture_on):
    image = result_of(call(api_key, "test_image_content"))["content"][0]
    assert image["mimeType"] == "image/png" and base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")
    audio = legacy(api_key, "tools/call", {"name": "test_audio_content"}).json()["result"]["content"][0]
    assert audio["mimeType"] == "audio/wav" and base64.b64decode(audio["data"])[:4] == b"RIFF"
    kinds = [block["type"] for block in result_of(call(api_key, "test_multiple_content_types"))["content"]]
    assert kinds == ["text", "image", "resource"]


# --- 2026-07-28: the stateless checks' tools ---------------------------------------------------------
def test_missing_capability_is_32021_naming_sampling_unless_the_request_declares_it(api_key, fixture_on):
    response = call(api_key, "test_missing_capability", capabilities={"elicitation": {}})
    error = error_of(response, 400, -32021)
    assert error["data"]["requiredCapabilities"] == {"sampling": {}}
    validator = jsonschema.Draft202012Validator({"$ref": "#/$defs/MissingRequiredClientCapabilityError",
                                                 "$defs": SCHEMA["$defs"]})
    assert not [e.message for e in validator.iter_errors(response.json())]
    asked = result_of(call(api_key, "test_missing_capability", capabilities={"sampling": {}}))
    assert asked["resultType"] == "input_required"
    assert [r["method"] for r in asked["inputRequests"].values()] == ["sampling/createMessage"]


def test_the_logging_tool_answers_plain_json_with_no_log_notification(api_key, fixture_on):
    response = call(api_key, "test_logging_tool", capabilities={})
    assert response["Content-Type"] == "application/json"
    assert "notifications/message" not in response.content.decode()
    assert text_of(result_of(response))


def test_streaming_elicitation_asks_through_an_input_required_result(api_key, fixture_on):
    asked = result_of(call(api_key, "test_streaming_elicitation", capabilities={"elicitation": {}}))
    assert asked["inputRequests"]["user_name"]["method"] == "elicitation/create"
    error = error_of(call(api_key, "test_streaming_elicitation", capabilities={}), 400, -32021)
    assert error["data"]["requiredCapabilities"] == {"elicitation": {}}


# --- 2026-07-28: input-required round trips -----------------------------------------------------------
ALICE = {"action": "accept", "content": {"name": "Alice"}}


def test_elicitation_round_trip_and_what_the_retry_may_get_wrong(api_key, fixture_on):
    tool = "test_input_required_result_elicitation"
    asked = result_of(call(api_key, tool))
    assert asked["resultType"] == "input_required" and "requestState" not in asked
    assert asked["inputRequests"]["user_name"]["params"]["requestedSchema"]["required"] == ["name"]
    extra = {"other": {"action": "accept", "content": {"x": 1}}}
    assert text_of(result_of(call(api_key, tool, inputResponses={"user_name": ALICE, **extra}))) == "Hello, Alice!"
    # A key never asked for is no answer: asked again, not an error.
    again = result_of(call(api_key, tool, inputResponses={"wrong_key": ALICE}))
    assert again["resultType"] == "input_required" and list(again["inputRequests"]) == ["user_name"]
    assert text_of(result_of(call(api_key, tool, inputResponses={"user_name": {"action": "decline"}}))) == \
        "Hello, (declined)!"
    for bad in (None, [], {"user_name": 12345}, {"user_name": {"action": "maybe"}}):
        error = error_of(call(api_key, tool, inputResponses=bad), 400, -32602)
        assert error["message"].startswith("Invalid params: inputResponses")


def test_multi_round_state_evolves_and_is_checked(api_key, fixture_on, other_account):
    tool = "test_input_required_result_multi_round"
    first = result_of(call(api_key, tool))
    second = result_of(call(api_key, tool, inputResponses={"step1": ALICE}, requestState=first["requestState"]))
    assert list(second["inputRequests"]) == ["step2"] and second["requestState"] != first["requestState"]
    blue = {"step2": {"action": "accept", "content": {"color": "blue"}}}
    done = result_of(call(api_key, tool, inputResponses=blue, requestState=second["requestState"]))
    assert text_of(done) == "Hello, Alice! Your favorite color is blue."
    # Round 2's answer without its state is no answer to round 1: asked again.
    assert list(result_of(call(api_key, tool, inputResponses=blue))["inputRequests"]) == ["step1"]
    # Tampered, another tool's, another caller's: refused.
    mallory = MembershipFactory(account=other_account, user=UserFactory(username="mallory")).user
    _key, mallory_key = api_key_create(user=mallory, account=other_account, name="test")
    elsewhere = result_of(call(api_key, "test_input_required_result_request_state"))["requestState"]
    for key, state in ((api_key, second["requestState"] + "-TAMPERED"), (api_key, elsewhere),
                       (mallory_key, second["requestState"]), (api_key, 7)):
        error = error_of(call(key, tool, inputResponses=blue, requestState=state), 400, -32602)
        assert "requestState" in error["message"]


def test_request_state_and_multiple_inputs_complete_with_every_answer(api_key, fixture_on):
    state = result_of(call(api_key, "test_input_required_result_request_state"))["requestState"]
    ok = {"confirm": {"action": "accept", "content": {"ok": True}}}
    assert "state-ok" in text_of(result_of(call(api_key, "test_input_required_result_request_state",
                                                inputResponses=ok, requestState=state)))
    tool = "test_input_required_result_multiple_inputs"
    asked = result_of(call(api_key, tool))
    assert sorted(r["method"] for r in asked["inputRequests"].values()) == \
        ["elicitation/create", "roots/list", "sampling/createMessage"]
    greeting = {"role": "assistant", "content": {"type": "text", "text": "Hi"}, "model": "m"}
    roots = {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}
    # Two of three answered: the third is asked again, the two kept in the new state.
    partial = result_of(call(api_key, tool, inputResponses={"user_name": ALICE, "greeting": greeting},
                             requestState=asked["requestState"]))
    assert list(partial["inputRequests"]) == ["client_roots"]
    done = result_of(call(api_key, tool, inputResponses={"client_roots": roots}, requestState=partial["requestState"]))
    assert text_of(done) == "Hi, Alice! Roots: file:///test/root"


def test_only_declared_capabilities_are_asked_for(api_key, fixture_on):
    tool = "test_input_required_result_capabilities"
    asked = result_of(call(api_key, tool, capabilities={"sampling": {}}))
    assert [r["method"] for r in asked["inputRequests"].values()] == ["sampling/createMessage"]
    assert text_of(result_of(call(api_key, tool, capabilities={}))).endswith("nothing could be asked")
    error = error_of(call(api_key, "test_input_required_result_multiple_inputs", capabilities={"sampling": {}}),
                     400, -32021)
    assert error["data"]["requiredCapabilities"] == {"elicitation": {}, "roots": {}}


# --- production ------------------------------------------------------------------------------------
def test_the_production_profile_refuses_the_fixture():
    production = {"LEV_ENV": "production", "SECRET_KEY": STRONG_KEY, "ALLOWED_HOSTS": "lev.example.com"}
    refused = run_manage("check", LEV_MCP_CONFORMANCE_FIXTURE="1", **production)
    assert refused.returncode != 0
    assert "LEV_MCP_CONFORMANCE_FIXTURE is for the conformance suite and tests only" in refused.stderr
    assert run_manage("check", LEV_MCP_CONFORMANCE_FIXTURE="0", **production).returncode == 0
