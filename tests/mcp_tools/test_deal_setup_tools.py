"""Finishing a deal's set-up through MCP (official client, live server): correct or remove a
property, set and read the financials with their derived ratios; tenancy and the archived rule
hold on each new tool, and the REST API behind them deletes a property and says so."""

from __future__ import annotations

import pytest

from deals.models import Deal, DealProperty
from tests.conftest import client_with_key
from tests.mcp_helpers import McpCaller

pytestmark = pytest.mark.django_db(transaction=True)


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
