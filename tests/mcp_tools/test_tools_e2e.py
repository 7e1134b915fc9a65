"""The MCP endpoint end to end: the official client over streamable HTTP against a live server."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal

import httpx
import pytest
from django.utils import timezone
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from deals.errors import ARCHIVED_CUSTOMER_MESSAGE
from deals.models import Deal
from lev.accounts.models import ApiKey
from tests.backend_stub import BackendStub, Reply
from tests.factories import DealFactory, DealFinancialsFactory, DealPropertyFactory, LenderFactory, LenderProgramFactory
from tests.mcp_helpers import McpCaller, value_schema

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = {"list_deals", "get_deal", "create_deal", "update_deal", "archive_deal", "add_deal_property", "get_lender"}
UPSTREAM = "Upstream service is temporarily unavailable. Please retry in a few seconds."


def contract(payload: dict, code: str, category: str, retryable: bool, prefix: str) -> dict:
    assert payload["code"] == code, payload
    assert payload["errorCategory"] == category
    assert payload["isRetryable"] is retryable
    assert payload["message"].startswith(prefix), payload["message"]
    assert ("retryAfterMs" in payload) is retryable
    assert "Traceback" not in str(payload)
    return payload


# --- discovery ------------------------------------------------------------------------------------
def test_tools_list_has_schemas_enums_and_truthful_annotations(mcp):
    tools = {t.name: t for t in mcp.list_tools()}
    assert set(tools) >= TOOLS
    for name in TOOLS:
        tool = tools[name]
        assert len(tool.description) > 60, name  # written for an agent (capped by test_catalogue_budget)
        assert tool.inputSchema["type"] == "object"
    reads = {"list_deals", "get_deal", "get_lender"}
    for name in reads:
        assert tools[name].annotations.readOnlyHint is True
    for name in TOOLS - reads:
        assert tools[name].annotations.readOnlyHint is False
    assert tools["archive_deal"].annotations.destructiveHint is True
    assert tools["create_deal"].annotations.destructiveHint is False
    assert tools["add_deal_property"].annotations.idempotentHint is False
    schema = tools["create_deal"].inputSchema
    assert schema["required"] == ["title"]
    loan_type = value_schema(schema["properties"]["loan_type"])
    assert loan_type["enum"] == ["construction", "heavy_bridge", "light_bridge", "permanent", "land",
                                 "predevelopment", "tbd"]
    assert tools["list_deals"].inputSchema["properties"]["limit"]["maximum"] == 100


def test_the_1x_client_negotiates_2025_11_25(live_server, api_key):
    """The pinned 1.x SDK speaks the handshake era only (2.x: test_sdk2_client.py; OAuth: tests/oauth)."""
    async def connect():
        async with (
            httpx.AsyncClient(headers={"Authorization": f"Bearer {api_key}"}, timeout=30) as http,
            streamable_http_client(f"{live_server.url}/mcp", http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            return init, await session.list_tools()

    init, tools = asyncio.run(connect())
    assert init.protocolVersion == "2025-11-25" and init.serverInfo.name == "lev"
    assert {tool.name for tool in tools.tools} >= TOOLS


# --- success paths --------------------------------------------------------------------------------
def test_deal_lifecycle_through_tools(mcp, account):
    created = mcp.ok("create_deal", {
        "title": "Pine Court", "loan_amount": 7_500_000, "loan_type": "Light_Bridge",
        "business_plan": "value_add", "estimated_close_date": "2027-02-01",
        "properties": [{"name": "Pine Court", "state": "co", "asset_type": "multifamily", "units": 80}],
    })["deal"]
    assert created["loan_type"] == "light_bridge" and created["properties"][0]["state"] == "CO"
    deal_id = created["id"]
    assert Deal.objects.get(pk=deal_id).account == account

    prop = mcp.ok("add_deal_property", {"deal_id": deal_id, "name": "Pine Annex", "state": "CO",
                                        "asset_type": "retail"})["property"]
    assert prop["name"] == "Pine Annex"

    got = mcp.ok("get_deal", {"deal_id": deal_id, "include": ["properties", "financials"]})["deal"]
    assert [p["name"] for p in got["properties"]] == ["Pine Court", "Pine Annex"]
    assert got["financials"]["ltv"] is None

    updated = mcp.ok("update_deal", {"deal_id": deal_id, "loan_amount": 8_000_000})["deal"]
    assert updated["loan_amount"] == 8_000_000 and updated["title"] == "Pine Court"

    listed = mcp.ok("list_deals", {"loan_type": "light_bridge"})
    assert listed["total"] == 1 and listed["deals"][0]["property_count"] == 2

    archived = mcp.ok("archive_deal", {"deal_id": deal_id})["deal"]
    assert archived["archived"] is True
    assert mcp.ok("list_deals")["total"] == 0
    assert mcp.ok("list_deals", {"archived": True})["total"] == 1


def test_list_deals_pages_with_cursors_without_gaps_or_duplicates(mcp, account):
    ids = {DealFactory(account=account).id for _ in range(7)}
    seen, cursor, pages = [], None, 0
    while True:
        page = mcp.ok("list_deals", {"limit": 3, **({"cursor": cursor} if cursor else {})})
        assert page["total"] == 7
        seen += [d["id"] for d in page["deals"]]
        pages += 1
        if not page["has_more"]:
            assert page["next_cursor"] is None
            break
        cursor = page["next_cursor"]
    assert pages == 3 and len(seen) == 7 and set(seen) == ids


def test_empty_results_are_success_not_errors(mcp):
    assert mcp.ok("list_deals", {"loan_type": "land"}) == {
        "deals": [], "total": 0, "has_more": False, "next_cursor": None}


def test_get_lender_with_programs(mcp):
    program = LenderProgramFactory(lender=LenderFactory(name="Granite Bank"))
    lender = mcp.ok("get_lender", {"lender_id": program.lender_id})["lender"]
    assert lender["name"] == "Granite Bank" and lender["programs"][0]["id"] == program.id


# --- every error code, produced for real ----------------------------------------------------------
def test_changing_another_accounts_deal_is_not_found(mcp):
    payload = mcp.error("update_deal", {"deal_id": DealFactory().id, "title": "x"})  # other account
    contract(payload, "NOT_FOUND", "validation", False, "Deal not found: ")


@pytest.mark.parametrize(
    ("arguments", "argument", "message"),
    [
        ({"title": "T", "loan_amount": -1}, "loan_amount", "Validation failed: loan_amount must be greater than 0"),
        ({"title": "T", "loan_amount": "a lot"}, "loan_amount", "Validation failed: loan_amount must be a number"),
        ({"loan_amount": 5_000_000}, "title", "Validation failed: title is required"),
        ({"title": "T", "loan_type": "mezz"}, "loan_type", "Validation failed: loan_type must be one of: construction"),
        ({"title": "T", "estimated_close_date": "next week"}, "estimated_close_date",
         "Validation failed: estimated_close_date must be a date"),
        ({"title": "T", "properties": [{"name": "P", "state": "XX"}]}, "properties.0.state",
         "Validation failed: properties.0.state must be one of: AL"),
        ({"title": "T", "colour": "red"}, "colour", "Validation failed: colour is not a known argument"),
    ],
)
def test_schema_violations_are_validation_errors_naming_the_argument(mcp, arguments, argument, message):
    payload = contract(mcp.error("create_deal", arguments), "VALIDATION_ERROR", "validation", False, message)
    assert argument in payload["details"]["fields"]
    assert payload["hint"]
    assert not Deal.objects.exists()


def test_backend_validation_error_is_mapped(mcp, account):
    deal = DealFactory(account=account)
    payload = mcp.error("add_deal_property", {"deal_id": deal.id, "name": "P", "zip": "12345", "units": 5,
                                              "year_built": 1990, "address": "x" * 255, "city": "y" * 101})
    contract(payload, "VALIDATION_ERROR", "validation", False, "Validation failed: city")


@pytest.mark.parametrize("include", [None, ["financials"], ["properties"], ["financials", "properties"]])
def test_missing_and_other_accounts_deal_look_the_same(mcp, other_account, include):
    rival = DealFactory(account=other_account)
    DealFinancialsFactory(deal=rival)
    DealPropertyFactory(deal=rival)
    for deal_id in (rival.id, rival.id + 999):
        arguments = {"deal_id": deal_id} | ({"include": include} if include else {})
        payload = contract(mcp.error("get_deal", arguments), "NOT_FOUND", "validation", False,
                           f"Deal not found: {deal_id}")
        assert payload["details"] == {"resource": "deal", "id": str(deal_id)}
    contract(mcp.error("get_lender", {"lender_id": 424242}), "NOT_FOUND", "validation", False,
             "Lender not found: 424242")


def test_archived_deal_is_a_business_rule_with_customer_message(mcp, account):
    deal = DealFactory(account=account, archived=True, archived_at=timezone.now())
    payload = contract(mcp.error("update_deal", {"deal_id": deal.id, "title": "New"}), "BUSINESS_RULE",
                       "business", False, "Not allowed: ")
    assert payload["customerMessage"] == ARCHIVED_CUSTOMER_MESSAGE
    assert "customer_message" not in payload.get("details", {})


def test_rate_limit_becomes_rate_limited_with_retry_after(mcp, account, settings, frozen_window):
    settings.LEV_RATE_LIMIT_READS = "2/day"  # in a frozen window: the test never straddles two
    mcp.ok("list_deals")
    mcp.ok("list_deals")
    payload = contract(mcp.error("list_deals"), "RATE_LIMITED", "transient", True, "Rate limit exceeded: ")
    assert payload["retryAfterMs"] == 43_200_000  # the rest of the frozen day window
    assert "jitter" in payload["message"] and "tight loop" in payload["message"]


def test_expired_key_is_refused_at_the_endpoint_with_bearer_challenge(live_server, api_key):
    ApiKey.objects.update(expires_at=timezone.now() - dt.timedelta(minutes=1))
    response = httpx.post(f"{live_server.url}/mcp", headers={"Authorization": f"Bearer {api_key}"},
                          json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert response.json()["message"] == "Unauthorized: your session has expired. Please sign in again."


def test_missing_key_is_401(live_server):
    response = httpx.post(f"{live_server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 401 and response.headers["WWW-Authenticate"].startswith("Bearer")


def test_forbidden_origin_is_403_and_get_is_405(live_server, api_key):
    auth = {"Authorization": f"Bearer {api_key}"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = httpx.post(f"{live_server.url}/mcp", headers={**auth, "Origin": "https://evil.example"}, json=body)
    assert response.status_code == 403
    assert httpx.get(f"{live_server.url}/mcp", headers=auth).status_code == 405


def test_oversized_body_is_413(live_server, api_key, settings):
    settings.LEV_MCP_MAX_BODY_BYTES = 1000
    response = httpx.post(f"{live_server.url}/mcp", headers={"Authorization": f"Bearer {api_key}"},
                          json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": "y" * 2000}})
    assert response.status_code == 413


# --- through the HTTP transport, against a real (scripted) backend -------------------------------
@pytest.mark.parametrize(
    ("reply", "code", "category", "prefix"),
    [
        (Reply(401, {"code": "AUTH_ERROR", "message": "Unauthorized: your session has expired. Please sign in again.",
                     "details": {}}), "AUTH_ERROR", "permission",
         "Unauthorized: your session has expired. Please sign in again."),
        (Reply(403, {"code": "FORBIDDEN", "message": "Forbidden: nope", "details": {}}), "FORBIDDEN", "permission",
         "Forbidden: "),
        (Reply(409, {"code": "CONFLICT", "message": "Conflict: key reused", "details": {}}), "CONFLICT", "business",
         "Conflict: "),
        (Reply(422, None), "VALIDATION_ERROR", "validation", "Validation failed"),
        (Reply(404, None), "NOT_FOUND", "validation", "Resource not found"),
    ],
)
def test_backend_statuses_map_to_the_contract(mcp, settings, reply, code, category, prefix):
    with BackendStub(reply) as backend:
        settings.LEV_API_BASE_URL = backend.url
        contract(mcp.error("get_deal", {"deal_id": 1}), code, category, False, prefix)
        assert backend.count() == 1  # never retried


def test_backend_5xx_is_upstream_unavailable_after_local_retries(mcp, settings):
    with BackendStub(Reply(503, {"detail": "db down: SELECT * FROM secrets"})) as backend:
        settings.LEV_API_BASE_URL = backend.url
        payload = contract(mcp.error("get_deal", {"deal_id": 1}), "UPSTREAM_UNAVAILABLE", "transient", True,
                           UPSTREAM)
        assert payload["message"] == UPSTREAM and "SELECT" not in str(payload)
        assert backend.count() == 3  # the call and 2 local retries


def test_unexpected_tool_exception_is_internal_error_without_internals(mcp, monkeypatch, caplog):
    caplog.set_level("ERROR", logger="mcp_tools.calls")  # whatever LOG_LEVEL the run has

    def explode(*args, **kwargs):
        raise KeyError("secret_column")

    monkeypatch.setattr("mcp_tools.tools.deals.list_page_result", explode)
    DealPropertyFactory(deal=DealFactory())
    payload = contract(mcp.error("list_deals"), "INTERNAL_ERROR", "internal", False, "Internal error: ")
    assert "secret_column" not in str(payload)
    assert any("Unexpected error in tool list_deals" in r.message and r.exc_info for r in caplog.records)


def test_unknown_tool_is_a_validation_error(mcp):
    contract(mcp.error("drop_all_tables"), "VALIDATION_ERROR", "validation", False, "Validation failed: unknown tool")


def test_separate_clients_cannot_see_each_others_deals(live_server, mcp, other_api, account):
    DealFactory(account=account, loan_amount=Decimal(1))
    assert mcp.ok("list_deals")["total"] == 1
    other_key = other_api._credentials["HTTP_AUTHORIZATION"].split()[1]
    assert McpCaller(live_server.url, other_key).ok("list_deals")["total"] == 0


def test_allowed_origin_is_served(live_server, api_key, settings):
    settings.LEV_MCP_ALLOWED_ORIGINS = ["http://localhost:6274"]
    response = httpx.post(f"{live_server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                          headers={"Authorization": f"Bearer {api_key}", "Origin": "http://localhost:6274",
                                   "Accept": "application/json, text/event-stream"})
    assert response.status_code == 200 and response.json()["result"]["tools"]
