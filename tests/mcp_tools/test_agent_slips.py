"""Agents' common slips get a message saying what to send instead, through MCP and REST alike
(issue #11): "bridge" for a loan type, "Value-Add" for value_add, "Texas" for TX, "18.5M" for
18500000, and 18.5 meant as $18.5 million. The real endpoint's answers are checked end to end in
test_deal_setup_tools.py; here every door and argument that takes these values is covered."""

from __future__ import annotations

from decimal import Decimal

import pytest

from deals.models import Deal, DealProperty
from lev.limits import LOAN_AMOUNT_MIN
from lev.vocabulary import BRIDGE_MESSAGE
from mcp_tools.server import get_server
from tests.factories import DealFactory, DealPropertyFactory, LenderFactory
from tests.mcp_helpers import value_schema
from tests.mcp_tools.test_tool_arguments import Caller

pytestmark = pytest.mark.django_db

SMALL_LOAN = (f"must be at least {LOAN_AMOUNT_MIN} US dollars (no commercial real estate loan is smaller; send "
              "whole dollars, not thousands or millions); did you mean 18500000 ($18.5 million)?")


@pytest.fixture
def tools(api_key) -> Caller:
    return Caller(api_key)


def rest_message(response, status: int = 400) -> str:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["code"] == "VALIDATION_ERROR"
    return body["message"]


def mcp_message(tools: Caller, name: str, arguments: dict) -> str:
    is_error, payload = tools.call(name, arguments)
    assert is_error and payload["code"] == "VALIDATION_ERROR" and payload["isRetryable"] is False, payload
    return payload["message"]


# --- "bridge" ---------------------------------------------------------------------------------------
def test_bridge_is_explained_with_both_exact_values_on_every_door(api, tools, account):
    expected = f"Validation failed: loan_type {BRIDGE_MESSAGE}"
    deal = DealFactory(account=account)
    assert rest_message(api.post("/api/v1/deals/", {"title": "T", "loan_type": "bridge"}, format="json")) == expected
    assert rest_message(api.patch(f"/api/v1/deals/{deal.pk}/", {"loan_type": "Bridge"}, format="json")) == expected
    assert rest_message(api.get("/api/v1/deals/", {"loan_type": "bridge"})) == expected
    assert rest_message(api.get("/api/v1/lenders/", {"loan_type": "bridge loan"})) == expected
    assert mcp_message(tools, "create_deal", {"title": "T", "loan_type": "bridge"}) == expected
    assert mcp_message(tools, "update_deal", {"deal_id": deal.pk, "loan_type": "BRIDGE"}) == expected
    assert mcp_message(tools, "list_deals", {"loan_type": "bridge"}) == expected
    assert mcp_message(tools, "search_lender_directory", {"loan_type": "bridge"}) == expected
    assert "light_bridge (" in expected and "heavy_bridge (" in expected
    assert Deal.objects.get(pk=deal.pk).loan_type == "permanent"


# --- separators and case ------------------------------------------------------------------------------
@pytest.mark.parametrize("sent", ["Value-Add", "value add", "VALUE_ADD"])
def test_enum_separators_and_case_are_normalised_on_every_door(api, tools, sent):
    rest = api.post("/api/v1/deals/", {"title": "T", "business_plan": sent, "loan_type": "Heavy Bridge",
                                       "properties": [{"name": "P", "asset_type": "Self-Storage"}]}, format="json")
    assert rest.status_code == 201, rest.content
    assert (rest.json()["business_plan"], rest.json()["loan_type"]) == ("value_add", "heavy_bridge")
    deal = tools.ok("create_deal", {"title": "T", "business_plan": sent, "transaction_type": "New Construction",
                                    "properties": [{"name": "P", "asset_type": "mixed use"}]})["deal"]
    assert (deal["business_plan"], deal["transaction_type"]) == ("value_add", "new_construction")
    assert deal["properties"][0]["asset_type"] == "mixed_use"
    assert tools.ok("list_deals", {"business_plan": sent})["total"] == 2
    assert api.get("/api/v1/deals/", {"business_plan": sent}).json()["count"] == 2


# --- state names --------------------------------------------------------------------------------------
def test_full_state_names_are_accepted_as_their_codes_wherever_a_state_is_taken(api, tools, account):
    deal = DealFactory(account=account)
    prop = DealPropertyFactory(deal=deal, state="CA")
    added = api.post(f"/api/v1/deals/{deal.pk}/properties/", {"name": "A", "state": "Texas"}, format="json")
    assert added.status_code == 201 and added.json()["state"] == "TX"
    patched = api.patch(f"/api/v1/deals/{deal.pk}/properties/{prop.pk}/", {"state": "new york"}, format="json")
    assert patched.json()["state"] == "NY"
    assert tools.ok("add_deal_property", {"deal_id": deal.pk, "name": "B", "state": "North Carolina"})[
        "property"]["state"] == "NC"
    assert tools.ok("update_deal_property", {"deal_id": deal.pk, "property_id": prop.pk, "state": "texas"})[
        "property"]["state"] == "TX"
    created = tools.ok("create_deal", {"title": "T", "properties": [{"name": "C", "state": "Washington, D.C."}]})
    assert created["deal"]["properties"][0]["state"] == "DC"
    assert sorted(DealProperty.objects.filter(deal=deal).values_list("state", flat=True)) == ["NC", "TX", "TX"]

    LenderFactory(name="Lone Star Bank", state="TX")
    LenderFactory(name="Empire Bank", state="NY")
    assert [x["name"] for x in api.get("/api/v1/lenders/", {"state": "Texas"}).json()["results"]] == ["Lone Star Bank"]
    assert [x["name"] for x in tools.ok("search_lender_directory", {"state": "new york"})["lenders"]] == [
        "Empire Bank"]
    # A name that is no state is refused as before, listing the codes.
    assert mcp_message(tools, "add_deal_property", {"deal_id": deal.pk, "name": "D", "state": "Texass"}).startswith(
        "Validation failed: state must be one of: AL, AK")


# --- money as text ------------------------------------------------------------------------------------
@pytest.mark.parametrize("sent", ["18.5M", "$18,500,000"])
def test_money_text_says_a_number_of_us_dollars_and_the_number_meant(api, tools, account, sent):
    rest = rest_message(api.post("/api/v1/deals/", {"title": "T", "loan_amount": sent}, format="json"))
    assert rest == ("Validation failed: loan_amount must be a number of US dollars, e.g. 18500000; "
                    f'send 18500000 for "{sent}"')
    tool = mcp_message(tools, "create_deal", {"title": "T", "loan_amount": sent})
    assert tool == ("Validation failed: loan_amount must be a number of US dollars, e.g. 18500000, not a string; "
                    f'send 18500000 for "{sent}"')
    deal = DealFactory(account=account)
    financials = mcp_message(tools, "update_deal_financials", {"deal_id": deal.pk, "estimated_value": sent})
    assert financials.startswith("Validation failed: estimated_value must be a number of US dollars, e.g. 18500000")
    assert rest_message(api.patch(f"/api/v1/deals/{deal.pk}/financials/", {"estimated_value": sent},
                                  format="json")).startswith(
        "Validation failed: estimated_value must be a number of US dollars, e.g. 18500000; send 18500000")
    assert not Deal.objects.filter(title="T").exists()


def test_a_numeric_string_stays_accepted_by_rest_where_json_clients_send_one(api):
    # REST has always taken "18500000" (query strings can only send text); MCP's schema says number.
    assert api.post("/api/v1/deals/", {"title": "T", "loan_amount": "18500000"}, format="json").status_code == 201


# --- implausibly small loan amounts ---------------------------------------------------------------------
def test_a_loan_amount_meant_in_millions_is_refused_with_the_likely_amount(api, tools, account):
    deal = DealFactory(account=account)
    expected = f"Validation failed: loan_amount {SMALL_LOAN}"
    assert rest_message(api.post("/api/v1/deals/", {"title": "T", "loan_amount": 18.5}, format="json")) == expected
    assert rest_message(api.patch(f"/api/v1/deals/{deal.pk}/", {"loan_amount": 18500}, format="json")) == expected
    assert mcp_message(tools, "create_deal", {"title": "T", "loan_amount": 18.5}) == expected
    assert mcp_message(tools, "update_deal", {"deal_id": deal.pk, "loan_amount": 18500}) == expected
    assert mcp_message(tools, "search_lender_directory", {"loan_amount": 18.5}) == expected
    assert rest_message(api.get("/api/v1/lenders/", {"loan_amount": "18.5"})) == expected
    # 0 and below keep the reference's wording; the minimum itself is a loan.
    assert mcp_message(tools, "create_deal", {"title": "T", "loan_amount": 0}) == (
        "Validation failed: loan_amount must be greater than 0")
    assert tools.ok("update_deal", {"deal_id": deal.pk, "loan_amount": float(LOAN_AMOUNT_MIN)})["deal"][
        "loan_amount"] == float(LOAN_AMOUNT_MIN)
    assert Deal.objects.get(pk=deal.pk).loan_amount == LOAN_AMOUNT_MIN
    assert not Deal.objects.filter(title="T").exists()


def test_the_threshold_is_stated_in_schemas_descriptions_and_hints(api, tools):
    schemas = {t["name"]: t for t in get_server().tools_list_result["tools"]}
    for name in ("create_deal", "update_deal", "search_lender_directory"):
        prop = value_schema(schemas[name]["inputSchema"]["properties"]["loan_amount"])
        assert prop["minimum"] == float(LOAN_AMOUNT_MIN), name
        assert f"at least {LOAN_AMOUNT_MIN}" in schemas[name]["inputSchema"]["properties"]["loan_amount"][
            "description"], name
    for name in ("create_deal", "update_deal"):
        assert f"at least {LOAN_AMOUNT_MIN}" in schemas[name]["description"], name
    _is_error, payload = tools.call("create_deal", {"title": "T", "loan_amount": 18.5})
    assert f"at least {LOAN_AMOUNT_MIN}" in payload["hint"]

    spec = api.get("/api/v1/schema/?format=json").json()["components"]["schemas"]
    for component in ("DealInput", "PatchedDealUpdate"):
        amount = spec[component]["properties"]["loan_amount"]
        assert Decimal(str(amount["minimum"])) == LOAN_AMOUNT_MIN, component
        assert "did you mean 18500000?" in amount["description"], component
    assert "full name" in spec["PropertyInput"]["properties"]["state"]["description"]
