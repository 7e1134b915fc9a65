"""Deal lists say how many properties each deal has and whether a lender search can rank it now
(and if not, what is missing), in the REST list and in list_deals (issue #11), without a query per
deal and within the tool's byte budget."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from deals.models import DealProperty
from tests.factories import DealFactory, DealPropertyFactory
from tests.mcp_tools.test_tool_arguments import Caller

pytestmark = pytest.mark.django_db


def listed(api, **query) -> dict[str, dict]:
    body = api.get("/api/v1/deals/", query)
    assert body.status_code == 200, body.content
    return {deal["title"]: deal for deal in body.json()["results"]}


def test_each_listed_deal_says_its_property_count_and_what_a_search_still_needs(api, account):
    DealPropertyFactory(deal=DealFactory(account=account, title="Ready"))
    DealFactory(account=account, title="No property")
    DealPropertyFactory(deal=DealFactory(account=account, title="No amount", loan_amount=None))
    incomplete = DealFactory(account=account, title="Incomplete")
    DealPropertyFactory(deal=incomplete)
    blank = DealPropertyFactory(deal=incomplete, name="Pine Court", state="", asset_type="")
    DealPropertyFactory(deal=DealFactory(account=account, title="Archived", archived=True))

    deals = listed(api)
    assert set(deals) == {"Ready", "No property", "No amount", "Incomplete"}
    summary = {title: (d["property_count"], d["ready_for_search"], d["missing_for_search"])
               for title, d in deals.items()}
    assert summary == {
        "Ready": (1, True, []),
        "No property": (0, False, ["at least one property"]),
        "No amount": (1, False, ["a loan amount"]),
        "Incomplete": (2, False, [f"state and asset type of property 'Pine Court' (id {blank.pk})"]),
    }
    # An archived deal cannot be searched at all, whatever it has.
    archived = listed(api, archived="true")["Archived"]
    assert (archived["property_count"], archived["ready_for_search"], archived["missing_for_search"]) == (1, False, [])


def test_what_is_missing_is_what_the_search_start_refuses_with(api, account):
    deal = DealFactory(account=account)
    for n in range(5):
        DealPropertyFactory(deal=deal, name=f"Lot {n}", state="" if n % 2 else "TX", asset_type="")
    missing = listed(api)[deal.title]["missing_for_search"]
    refused = api.post(f"/api/v1/deals/{deal.pk}/lender-searches/", {}, format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "BUSINESS_RULE"
    assert refused.json()["details"]["missing"] == missing
    # Many incomplete properties: the first three named, the rest counted, so both stay short.
    assert len(missing) == 4 and missing[-1] == "state or asset type of 2 more properties"


def test_a_page_of_deals_takes_the_same_queries_whatever_its_size(api, account):
    def queries(page_size: int) -> int:
        with CaptureQueriesContext(connection) as captured:
            body = api.get("/api/v1/deals/", {"page_size": page_size}).json()
        assert len(body["results"]) == page_size
        assert all(deal["property_count"] == 3 for deal in body["results"])
        return len(captured)

    for n in range(25):
        deal = DealFactory(account=account)
        for k in range(3):
            DealPropertyFactory(deal=deal, state="" if k == n % 3 else "TX")
    queries(1)  # the key's first use of the run is recorded once (last_used_at): not the list's cost
    one, twenty_five = queries(1), queries(25)
    assert one == twenty_five, f"{twenty_five} queries for 25 deals, {one} for 1: a query per deal crept in"


def test_list_deals_tool_shows_readiness_and_stays_within_the_byte_budget(api_key, account):
    tools = Caller(api_key)
    long_title = "Résidences du Lac — " * 10  # 200 characters, each non-ASCII one 6 bytes escaped
    for n in range(100):
        deal = DealFactory(account=account, title=f"{long_title[:196]} {n:03d}", loan_amount=Decimal("9000000"))
        DealProperty.objects.bulk_create([
            DealProperty(deal=deal, name=f"{long_title[:190]} {k}", state="", asset_type="") for k in range(6)
        ])
    result = tools.ok("list_deals", {"limit": 100})
    size = len(json.dumps(result, separators=(",", ":")).encode())
    assert size <= settings.LEV_MCP_MAX_RESPONSE_BYTES
    assert len(result["deals"]) == 100 and result["total"] == 100 and result["compacted"] is True
    assert all(d["property_count"] == 6 and d["ready_for_search"] is False for d in result["deals"])

    small = tools.ok("list_deals", {"limit": 2})
    assert "compacted" not in small
    first = small["deals"][0]
    assert len(first["missing_for_search"]) == 4 and first["missing_for_search"][-1].endswith("3 more properties")
    assert first["title"].endswith("099")  # whole, newest first
