"""Finishing a deal's set-up through MCP (official client, live server): correct or remove a
property, set and read the financials with their derived ratios; tenancy and the archived rule
hold on each new tool, and the REST API behind them deletes a property and says so. The whole
workflow of issue #11, from an agent's slips to ranked lenders whose insights assess leverage."""

from __future__ import annotations

from decimal import Decimal

import pytest

from deals.models import Deal, DealProperty
from tests.conftest import client_with_key
from tests.deals.fixtures import eager_jobs
from tests.deals.searches.factories import LenderFactory, LenderProgramFactory, lender_with
from tests.mcp_helpers import McpCaller

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["eager_jobs"]


def guided(mcp: McpCaller, name: str, arguments: dict, *expected: str) -> dict:
    """A VALIDATION_ERROR of the contract whose message says each of `expected`."""
    payload = mcp.error(name, arguments)
    assert payload["code"] == "VALIDATION_ERROR" and payload["isRetryable"] is False, payload
    assert payload["message"].startswith("Validation failed: "), payload
    for text in expected:
        assert text in payload["message"], (text, payload["message"])
    return payload


def test_an_agent_goes_from_its_slips_to_ranked_lenders_whose_insights_assess_leverage(mcp, eager_jobs):
    lender_with("Lone Star Multifamily Bank", loan_types=["light_bridge"], sponsor_states=["TX"],
                max_ltv=Decimal("75"), min_dscr=Decimal("1.20"))
    LenderProgramFactory(lender=LenderFactory(name="Empire State Bank", state="NY", city="New York"),
                         loan_types=["light_bridge"], sponsor_states=["NY"])

    # The slips an agent makes describing "an $18.5M value-add bridge loan in Texas", each answered
    # with what to send instead.
    deal_args = {"title": "Pine Court", "loan_type": "light_bridge", "business_plan": "Value-Add"}
    guided(mcp, "create_deal", {**deal_args, "loan_type": "bridge"}, 'loan_type "bridge" is two loan types here',
           "light_bridge (", "heavy_bridge (")
    for text in ("18.5M", "$18,500,000"):
        guided(mcp, "create_deal", {**deal_args, "loan_amount": text},
               "loan_amount must be a number of US dollars, e.g. 18500000", f'send 18500000 for "{text}"')
    guided(mcp, "create_deal", {**deal_args, "loan_amount": 18.5}, "loan_amount must be at least 100000",
           "did you mean 18500000 ($18.5 million)?")
    assert not Deal.objects.exists()

    deal = mcp.ok("create_deal", {**deal_args, "loan_amount": 18_500_000})["deal"]
    assert (deal["loan_type"], deal["business_plan"]) == ("light_bridge", "value_add")  # "Value-Add" normalised
    (listed,) = mcp.ok("list_deals", {"business_plan": "value add"})["deals"]
    assert (listed["property_count"], listed["ready_for_search"], listed["missing_for_search"]) == (
        0, False, ["at least one property"])

    # The property goes in with a wrong state (a full name is accepted as its code) and is corrected.
    wrong = mcp.ok("add_deal_property", {"deal_id": deal["id"], "name": "Pine Court", "state": "new york",
                                         "asset_type": "Multifamily", "units": 212})["property"]
    assert wrong["state"] == "NY"
    fixed = mcp.ok("update_deal_property", {"deal_id": deal["id"], "property_id": wrong["id"],
                                            "state": "Texas"})["property"]
    assert (fixed["state"], fixed["asset_type"]) == ("TX", "multifamily")
    guided(mcp, "update_deal_financials", {"deal_id": deal["id"], "estimated_value": "28.5M"},
           "estimated_value must be a number of US dollars, e.g. 18500000", 'send 28500000 for "28.5M"')
    financials = mcp.ok("update_deal_financials", {
        "deal_id": deal["id"], "estimated_value": 28_461_538.46, "in_place_noi": 1_650_000, "interest_rate": 6.25,
    })["financials"]
    assert financials["ltv"] == 65.0 and financials["dscr"] == 1.21 and financials["debt_yield"] == 8.92
    (listed,) = mcp.ok("list_deals", {})["deals"]
    assert (listed["property_count"], listed["ready_for_search"], listed["missing_for_search"]) == (1, True, [])

    # A search now uses the financials: leverage and coverage are assessed against each program.
    started = mcp.ok("search_lenders_for_deal", {"deal_id": deal["id"]})
    results = mcp.ok("get_lender_search_results", {"search_id": started["search_id"]})
    assert results["status"] == "completed"
    assert [r["lender_name"] for r in results["results"]] == ["Lone Star Multifamily Bank"]  # TX, not NY
    insights = results["results"][0]["match_insights"]
    assert "Leverage: 65% LTV, 8.9% debt yield, within this program's 75% max" in insights
    assert "Coverage: 1.21x DSCR, above this program's 1.20x min" in insights
    assert not any("not assessed" in line for line in insights)

    # The directory takes the same slips.
    texas = mcp.ok("search_lender_directory", {"state": "Texas", "loan_type": "Light Bridge"})["lenders"]
    assert [x["name"] for x in texas] == ["Lone Star Multifamily Bank"]
    guided(mcp, "search_lender_directory", {"loan_amount": 18.5}, "did you mean 18500000")
    guided(mcp, "search_lender_directory", {"loan_type": "BRIDGE"}, "light_bridge", "heavy_bridge")

    # A property added by mistake is removed, and the deal is ready as before.
    extra = mcp.ok("add_deal_property", {"deal_id": deal["id"], "name": "Duplicate"})["property"]
    (listed,) = mcp.ok("list_deals", {})["deals"]
    assert listed["ready_for_search"] is False
    assert listed["missing_for_search"] == [f"state and asset type of property 'Duplicate' (id {extra['id']})"]
    mcp.ok("remove_deal_property", {"deal_id": deal["id"], "property_id": extra["id"]})
    (listed,) = mcp.ok("list_deals", {})["deals"]
    assert (listed["property_count"], listed["ready_for_search"]) == (1, True)


def test_an_agent_corrects_a_property_sets_financials_and_removes_a_property(mcp):
    deal = mcp.ok("create_deal", {"title": "Pine Court", "loan_amount": 9_000_000, "loan_type": "permanent"})["deal"]
    wrong = mcp.ok("add_deal_property", {"deal_id": deal["id"], "name": "Pine Court", "state": "TN",
                                         "asset_type": "office"})["property"]
    version = Deal.objects.get(pk=deal["id"]).version

    fixed = mcp.ok("update_deal_property", {"deal_id": deal["id"], "property_id": wrong["id"], "state": "tx",
                                            "asset_type": "Multifamily"})["property"]
    assert (fixed["state"], fixed["asset_type"], fixed["name"]) == ("TX", "multifamily", "Pine Court")
    assert Deal.objects.get(pk=deal["id"]).version == version + 1  # a search of the old description is stale

    empty = mcp.ok("get_deal_financials", {"deal_id": deal["id"]})["financials"]
    assert empty["estimated_value"] is None and empty["ltv"] is None and empty["dscr"] is None
    financials = mcp.ok("update_deal_financials", {
        "deal_id": deal["id"], "estimated_value": 12_000_000, "in_place_noi": 900_000, "interest_rate": 6.2555,
        "amortization_years": 30,
    })["financials"]
    assert financials["ltv"] == 75.0 and financials["interest_rate"] == 6.256  # kept to 3 decimals
    assert financials["dscr"] is not None and financials["dscr"] > 1
    assert mcp.ok("get_deal_financials", {"deal_id": deal["id"]})["financials"] == financials

    extra = mcp.ok("add_deal_property", {"deal_id": deal["id"], "name": "Added by mistake"})["property"]
    removed = mcp.ok("remove_deal_property", {"deal_id": deal["id"], "property_id": extra["id"]})
    assert removed == {"removed": {"deal_id": deal["id"], "property_id": extra["id"]}}
    assert not DealProperty.objects.filter(pk=extra["id"]).exists()
    again = mcp.error("remove_deal_property", {"deal_id": deal["id"], "property_id": extra["id"]})
    assert again["code"] == "NOT_FOUND"
    props = mcp.ok("get_deal", {"deal_id": deal["id"], "include": ["properties"]})["deal"]["properties"]
    assert [p["id"] for p in props] == [wrong["id"]]


def test_the_new_tools_answer_not_found_for_another_accounts_deal_and_refuse_an_archived_one(mcp, live_server,
                                                                                          other_api):
    deal = mcp.ok("create_deal", {"title": "Mine", "properties": [{"name": "P"}]})["deal"]
    prop_id = deal["properties"][0]["id"]
    other = McpCaller(live_server.url, other_api._credentials["HTTP_AUTHORIZATION"].split()[1])
    for name, arguments in (
        ("get_deal_financials", {"deal_id": deal["id"]}),
        ("update_deal_financials", {"deal_id": deal["id"], "cash_out": 1}),
        ("update_deal_property", {"deal_id": deal["id"], "property_id": prop_id, "name": "Theirs"}),
        ("remove_deal_property", {"deal_id": deal["id"], "property_id": prop_id}),
    ):
        payload = other.error(name, arguments)
        assert payload["code"] == "NOT_FOUND" and payload["message"] == f"Deal not found: {deal['id']}", name
    assert DealProperty.objects.filter(pk=prop_id, name="P").exists()

    mcp.ok("archive_deal", {"deal_id": deal["id"]})
    for name, arguments in (
        ("update_deal_financials", {"deal_id": deal["id"], "cash_out": 1}),
        ("update_deal_property", {"deal_id": deal["id"], "property_id": prop_id, "name": "Late"}),
        ("remove_deal_property", {"deal_id": deal["id"], "property_id": prop_id}),
    ):
        payload = mcp.error(name, arguments)
        assert payload["code"] == "BUSINESS_RULE", name
        # Archiving is final, and the message says what to do instead of looking for a restore.
        assert "cannot be restored: create a new deal" in payload["customerMessage"], name
    assert DealProperty.objects.filter(pk=prop_id).exists()


def test_update_tools_need_one_field_and_name_it(mcp):
    deal = mcp.ok("create_deal", {"title": "T", "properties": [{"name": "P"}]})["deal"]
    payload = mcp.error("update_deal_financials", {"deal_id": deal["id"]})
    assert payload["message"] == "Validation failed: pass at least one figure to change"
    payload = mcp.error("update_deal_property", {"deal_id": deal["id"], "property_id": deal["properties"][0]["id"]})
    assert payload["message"] == "Validation failed: pass at least one field to change"


def test_rest_delete_of_a_property_is_204_and_then_404(api_key, account):
    api = client_with_key(api_key)
    deal = api.post("/api/v1/deals/", {"title": "T", "properties": [{"name": "P"}]}, format="json").json()
    path = f"/api/v1/deals/{deal['id']}/properties/{deal['properties'][0]['id']}/"
    assert api.delete(path).status_code == 204
    gone = api.delete(path)
    assert gone.status_code == 404 and gone.json()["code"] == "NOT_FOUND"
