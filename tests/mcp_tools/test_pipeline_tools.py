"""The pipeline through MCP (official client, live server): the stages with their deals, moving a deal
by name, key or id with the history it leaves, the stage on the deal tools and list_deals' stage
filter, the automatic moves of a search started and a winner chosen by tools, and the contract's
refusals (unknown stage, archived deal, another account's deal)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from deals.models import Stage
from tests.deals.fixtures import eager_jobs
from tests.deals.placements.helpers import place, quote
from tests.deals.searches.factories import lender_with, make_deal
from tests.factories import DealFactory

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["eager_jobs"]


def test_an_agent_reads_the_pipeline_and_moves_a_deal_through_it(mcp, account, user):
    deal = DealFactory(account=account, loan_amount=Decimal("12000000"))
    DealFactory(account=account, loan_amount=Decimal("3000000"), stage=Stage.objects.get(account=account,
                                                                                          key="closing"))
    pipeline = mcp.ok("get_pipeline")
    assert [s["key"] for s in pipeline["stages"]] == ["intake", "underwriting", "in_market", "term_sheets",
                                                      "closing", "closed", "dead"]
    assert pipeline["stages"][0] == {"id": pipeline["stages"][0]["id"], "key": "intake", "name": "Intake",
                                     "kind": "open", "deal_count": 1, "loan_total": 12000000}
    assert (pipeline["deal_count"], pipeline["loan_total"]) == (2, 15000000)

    moved = mcp.ok("move_deal_stage", {"deal_id": deal.pk, "stage": "Underwriting", "reason": "Rent roll in"})
    assert moved["changed"] and moved["stage"]["key"] == "underwriting"
    assert moved["change"]["from_stage"]["name"] == "Intake" and moved["change"]["by"]["id"] == user.pk
    assert not mcp.ok("move_deal_stage", {"deal_id": deal.pk, "stage": "underwriting"})["changed"]
    closing = pipeline["stages"][4]["id"]
    assert mcp.ok("move_deal_stage", {"deal_id": deal.pk, "stage": str(closing)})["stage"]["name"] == "Closing"

    history = mcp.ok("get_deal_stage_history", {"deal_id": deal.pk})
    assert history["total"] == 2 and not history["has_more"]
    assert [(c["from_stage"]["name"], c["to_stage"]["name"]) for c in history["changes"]] == [
        ("Intake", "Underwriting"), ("Underwriting", "Closing")]
    assert history["changes"][0]["reason"] == "Rent roll in"

    assert mcp.ok("get_deal", {"deal_id": deal.pk})["deal"]["stage"]["key"] == "closing"
    listed = mcp.ok("list_deals", {"stage": "closing"})
    assert {d["id"] for d in listed["deals"]} >= {deal.pk} and all(d["stage"] == "Closing" for d in listed["deals"])
    assert mcp.ok("list_deals", {"stage": "intake"})["deals"] == []


def test_the_automatic_moves_show_in_the_history_when_tools_start_a_search_and_choose_a_winner(mcp, account):
    lender = lender_with("Lone Star Bank").lender
    deal = make_deal(account)
    mcp.ok("search_lenders_for_deal", {"deal_id": deal.pk})
    assert mcp.ok("get_deal", {"deal_id": deal.pk})["deal"]["stage"]["key"] == "in_market"
    term_sheet = quote(place(deal, lender))
    mcp.ok("select_winning_term_sheet", {"term_sheet_id": term_sheet.pk})
    changes = mcp.ok("get_deal_stage_history", {"deal_id": deal.pk})["changes"]
    assert [(c["to_stage"]["name"], c["automatic"]) for c in changes] == [("In market", True), ("Closing", True)]
    assert changes[1]["reason"].startswith(f"Term sheet {term_sheet.pk} from Lone Star Bank")


def test_the_pipeline_tools_refuse_in_the_contract(mcp, account, other_account):
    deal = DealFactory(account=account)
    unknown = mcp.error("move_deal_stage", {"deal_id": deal.pk, "stage": "Signed"})
    assert unknown["code"] == "NOT_FOUND" and "the stages: Intake, Underwriting" in unknown["message"]
    archived = mcp.error("move_deal_stage", {"deal_id": DealFactory(account=account, archived=True).pk,
                                             "stage": "dead"})
    assert archived["code"] == "BUSINESS_RULE" and "archived" in archived["message"]
    foreign = DealFactory(account=other_account)
    for name, arguments in (("move_deal_stage", {"deal_id": foreign.pk, "stage": "dead"}),
                            ("get_deal_stage_history", {"deal_id": foreign.pk})):
        payload = mcp.error(name, arguments)
        assert (payload["code"], payload["message"]) == ("NOT_FOUND", f"Deal not found: {foreign.pk}"), name
    blank = mcp.error("move_deal_stage", {"deal_id": deal.pk, "stage": "  "})
    assert blank["code"] == "VALIDATION_ERROR"
    assert Stage.objects.get(account=other_account, key="intake").deals.get() == foreign


def test_get_pipeline_and_list_deals_agree_on_active_deals_and_count_a_winner_s_amount(mcp, account):
    """Issue 39: a dead or closed deal is not active (its stage's column still counts it), and a deal
    with a winner adds the winning quote's amount, not the ask — in get_pipeline and list_deals alike."""
    from deals.placements.services import term_sheet_select_winner

    deal = make_deal(account)
    deal.loan_amount = Decimal("24000000")
    deal.save()
    term_sheet_select_winner(term_sheet=quote(place(deal, lender_with("Harbor Bank").lender),
                                              loan_amount=Decimal("22500000")))
    DealFactory(account=account, title="Dead one", loan_amount=Decimal("4200000"),
                stage=Stage.objects.get(account=account, key="dead"))
    pipeline = mcp.ok("get_pipeline")
    by_key = {s["key"]: s for s in pipeline["stages"]}
    assert (by_key["closing"]["deal_count"], by_key["closing"]["loan_total"]) == (1, 22500000)
    assert (by_key["dead"]["deal_count"], by_key["dead"]["loan_total"]) == (1, 4200000)
    assert (pipeline["deal_count"], pipeline["loan_total"]) == (1, 22500000)
    assert [d["id"] for d in mcp.ok("list_deals")["deals"]] == [deal.pk]
    assert [d["title"] for d in mcp.ok("list_deals", {"status": "dead"})["deals"]] == ["Dead one"]
    assert [d["title"] for d in mcp.ok("list_deals", {"stage": "Dead"})["deals"]] == ["Dead one"]
