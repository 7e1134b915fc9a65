"""Acceptance of issue #13, end to end with the official MCP client against a live server, a real
Celery worker, Redis and PostgreSQL: search → place the deal with the top 5 → record two term sheets
→ compare → choose the winner → the placements end won/lost; the next activity and signals refreshes (run
by the worker) record the account's own outcome, and a new search's score and insights learn from it.

Needs REDIS_URL and a PostgreSQL DATABASE_URL (skipped otherwise).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from deals.demo.directory import seed_directory
from deals.placements.tasks import refresh_lender_activity
from deals.searches.tasks import refresh_lender_signals
from lenders.models import LenderActivity, LenderSignal
from tests.deals.searches.worker_process import Worker, celery_worker, wait_for
from tests.mcp_helpers import McpCaller

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

DEAL = {"title": "Placement E2E Refi", "loan_amount": 18_500_000, "loan_type": "permanent",
        "business_plan": "stabilized", "transaction_type": "refinance",
        "properties": [{"name": "Riverside", "state": "TX", "asset_type": "multifamily"}]}


@pytest.fixture
def worker(db) -> Iterator[Worker]:
    with celery_worker() as running:
        yield running


def ranked(mcp: McpCaller, deal_id: int, worker: Worker) -> dict[int, dict]:
    """Search lenders for the deal on the worker; every match by lender id once completed."""
    search = mcp.ok("search_lenders_for_deal", {"deal_id": deal_id})

    def completed():
        # Pages of 10 keep every insight line, sizing and parts (a page of 100 is trimmed to fit the budget).
        page = mcp.ok("get_lender_search_results", {"search_id": search["search_id"], "limit": 10})
        return page if page["status"] == "completed" else None

    page = wait_for(completed, f"the worker to rank deal {deal_id}", worker)
    assert not page.get("compacted")
    matches = {m["lender_id"]: m for m in page["results"]}
    cursor = page["next_cursor"]
    while cursor:
        more = mcp.ok("get_lender_search_results", {"search_id": search["search_id"], "limit": 10, "cursor": cursor})
        assert not more.get("compacted")
        matches.update({m["lender_id"]: m for m in more["results"]})
        cursor = more["next_cursor"]
    return {"search_id": search["search_id"], "matches": matches, "top": page["results"][:5]}


def quoted_line(match: dict) -> str | None:
    return next((line for line in match["match_insights"] if line.startswith("Quoted ")), None)


def test_from_a_search_to_a_winner_and_the_ranking_learns_from_it(worker, live_server, api_key):
    seed_directory(300, seed=11)  # no seeded counters: signals come from records
    mcp = McpCaller(live_server.url, api_key)
    deal = mcp.ok("create_deal", DEAL)["deal"]
    first = ranked(mcp, deal["id"], worker)
    assert len(first["top"]) == 5

    placed = mcp.ok("create_placements", {"deal_id": deal["id"], "search_id": first["search_id"], "top_n": 5,
                                          "send": True})
    assert placed["created"] == 5
    assert [p["lender_id"] for p in placed["placements"]] == [m["lender_id"] for m in first["top"]]
    winner_placement, other_placement = placed["placements"][1], placed["placements"][0]
    winner_lender = winner_placement["lender_id"]
    assert quoted_line(first["matches"][winner_lender]) is None  # no record of the account's with it yet
    assert first["matches"][winner_lender]["score_parts"]["evidence"] == "none"

    mcp.ok("update_placement", {"placement_id": winner_placement["id"], "status": "reviewing"})
    best = mcp.ok("add_term_sheet", {"placement_id": winner_placement["id"], "loan_amount": 18_500_000,
                                     "rate_type": "fixed", "fixed_rate": 5.9, "term_months": 120,
                                     "amortization_months": 360, "recourse": "non_recourse"})["term_sheet"]
    mcp.ok("add_term_sheet", {"placement_id": other_placement["id"], "loan_amount": 17_000_000, "rate_type": "fixed",
                              "fixed_rate": 6.4, "term_months": 120, "amortization_months": 300,
                              "recourse": "non_recourse"})  # alike (10 years fixed, non-recourse): one best
    comparison = mcp.ok("compare_term_sheets", {"deal_id": deal["id"]})
    assert comparison["count"] == 2 and comparison["best_term_sheet_id"] == best["id"]

    chosen = mcp.ok("select_winning_term_sheet", {"term_sheet_id": comparison["best_term_sheet_id"]})
    assert chosen["changed"] and len(chosen["lost_placement_ids"]) == 4
    statuses = {p["lender_id"]: p["status"] for p in mcp.ok("list_placements", {"deal_id": deal["id"]})["placements"]}
    assert statuses[winner_lender] == "won" and sorted(statuses.values()) == ["lost"] * 4 + ["won"]

    # The next activity refresh, run by the worker as beat would run it.
    assert not LenderActivity.objects.filter(lender_id=winner_lender, state="TX").exists()
    refresh_lender_activity.delay()
    row = wait_for(lambda: LenderActivity.objects.filter(lender_id=winner_lender, state="TX").first(),
                   "the worker to recompute lender activity", worker)
    assert (row.quotes_90d, row.closings_90d) == (1, 1) and row.avg_response_hours is not None and row.score > 0

    # The signals the ranking learns from, refreshed by the worker as beat (or the debounce) would.
    refresh_lender_signals.delay()
    wait_for(lambda: LenderSignal.objects.filter(lender_id=winner_lender, dimension="all", quoted_12m=1).first(),
             "the worker to refresh the lender signals", worker)

    # A new deal in the same market: its ranking reads the new signals.
    second_deal = mcp.ok("create_deal", {**DEAL, "title": "Placement E2E second deal"})["deal"]
    second = ranked(mcp, second_deal["id"], worker)
    line = quoted_line(second["matches"][winner_lender])
    assert line == "Quoted 1 of 1 similar multifamily deals in TX (last 12 months)", line
    assert second["matches"][winner_lender]["score"] > first["matches"][winner_lender]["score"]
