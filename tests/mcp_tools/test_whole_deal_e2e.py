"""Acceptance of issue 22: one deal run from end to end by an agent on the official MCP client against
a live server — a sponsor with two people, a deal naming it, lender contacts, the pipeline moving by
hand and by itself, a search, three placements sent to contacts, a fixed and a floating quote with an
interest-only period compared against the market rate of the quote's date, the winner, a note, the
timeline in order, and the deal's summary at three points with every figure matching its source.

On the PostgreSQL run (DATABASE_URL and REDIS_URL set) the search runs on a real Celery worker; on
the embedded default (SQLite, no Redis) it runs in-process, as the product does there.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from tests.deals.searches.worker_process import Worker, celery_worker, wait_for
from tests.deals.summaries.helpers import check_sources
from tests.factories import LenderProgramFactory
from tests.mcp_helpers import McpCaller

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def worker(db) -> Iterator[Worker | None]:
    """A real worker where the product would have one (PostgreSQL and Redis), else none (in-process)."""
    real = bool(settings.REDIS_URL) and connection.vendor == "postgresql"
    with celery_worker() if real else contextlib.nullcontext() as running:
        yield running


def stage_of(mcp: McpCaller, deal_id: int) -> str:
    return mcp.ok("get_deal", {"deal_id": deal_id})["deal"]["stage"]["key"]


def completed_search(mcp: McpCaller, deal_id: int, worker: Worker | None) -> dict[str, Any]:
    search = mcp.ok("search_lenders_for_deal", {"deal_id": deal_id})

    def completed():
        page = mcp.ok("get_lender_search_results", {"search_id": search["search_id"], "limit": 10})
        return page if page["status"] == "completed" else None

    page = wait_for(completed, f"the search of deal {deal_id}", worker)
    return {"search_id": search["search_id"], "results": page["results"]}


def summarized(mcp: McpCaller, rest: httpx.Client, deal_id: int, detail: str) -> dict[str, Any]:
    """The deal's summary at that level, after checking every figure it cites against the record and
    field the REST API serves it at (the same key, another door)."""
    summary = mcp.ok("summarize_deal", {"deal_id": deal_id, "detail": detail})["summary"]
    assert summary["detail"] == detail
    assert mcp.ok("summarize_deal", {"deal_id": deal_id, "detail": detail})["summary"] == summary  # records only

    def get(path: str) -> Any:
        response = rest.get(f"/api/v1{path}")
        assert response.status_code == 200, (path, response.text)
        return response.json()

    assert check_sources(get, summary) >= 3
    return summary


def cited(summary: dict[str, Any], field: str) -> Any:
    """The value of the one source citing `field` (a dotted path into the record's answer)."""
    [value] = {s["value"] for s in summary["sources"] if s["field"] == field}
    return value


def timeline(mcp: McpCaller, deal_id: int) -> list[dict[str, Any]]:
    entries, cursor = [], None
    while True:
        page = mcp.ok("get_deal_timeline", {"deal_id": deal_id, "limit": 5, **({"cursor": cursor} if cursor else {})})
        entries += page["entries"]
        if not page["has_more"]:
            return entries
        cursor = page["next_cursor"]


def test_an_agent_runs_a_whole_deal(worker, live_server, api_key, tmp_path):
    mcp = McpCaller(live_server.url, api_key)
    rest = httpx.Client(base_url=live_server.url, headers={"Authorization": f"Bearer {api_key}"}, timeout=30)
    # The directory: five lenders with programs that fit the deal.
    programs = [LenderProgramFactory(lender__name=f"{name} Capital", max_ltv=Decimal("75"))
                for name in ("Granite", "Harbor Bank", "Summit", "Cedar", "Beacon")]

    # A sponsor with two people.
    sponsor = mcp.ok("create_company", {"kind": "sponsor", "name": "Northwind Partners",
                                        "location": "Austin, TX"})["company"]
    people = [mcp.ok("add_contact", {"company_id": sponsor["id"], "name": name, "title": title,
                                     "email": email})["contact"]
              for name, title, email in (("Ada Park", "Principal", "ada@northwind.example"),
                                         ("Ben Ruiz", "Analyst", "ben@northwind.example"))]
    assert [c["name"] for c in mcp.ok("get_company", {"company_id": sponsor["id"]})["company"]["contacts"]] == [
        p["name"] for p in people]

    # The deal, naming its sponsor, with its figures: it starts at intake.
    deal = mcp.ok("create_deal", {
        "title": "Riverside Apartments Refi", "loan_amount": 10_000_000, "loan_type": "permanent",
        "transaction_type": "refinance", "business_plan": "stabilized", "sponsor_id": sponsor["id"],
        "properties": [{"name": "Riverside Apartments", "city": "Dallas", "state": "TX",
                        "asset_type": "multifamily", "units": 120}],
    })["deal"]
    deal_id = deal["id"]
    assert deal["sponsor"]["id"] == sponsor["id"] and deal["stage"]["key"] == "intake"
    financials = mcp.ok("update_deal_financials", {
        "deal_id": deal_id, "estimated_value": 16_000_000, "in_place_noi": 1_000_000, "interest_rate": 6.25,
        "amortization_years": 30})["financials"]

    # Summary 1, before the market: the figures are the financials', and the next step is the search.
    first = summarized(mcp, rest, deal_id, "brief")
    assert cited(first, "ltv") == financials["ltv"] and cited(first, "debt_yield") == financials["debt_yield"]
    assert "Intake" in first["text"]
    assert [step["rule"] for step in first["next_steps"]] == ["start_search"]

    # Our people at each lender.
    lender_contact = {
        p.lender_id: mcp.ok("add_contact", {"lender_id": p.lender_id, "name": f"Officer {i}",
                                            "email": f"officer{i}@lender{i}.example"})["contact"]
        for i, p in enumerate(programs)}

    # By hand: underwriting. Then the search moves the deal to in market by itself.
    moved = mcp.ok("move_deal_stage", {"deal_id": deal_id, "stage": "underwriting", "reason": "Rent roll in"})
    assert moved["changed"] is True and moved["stage"]["key"] == "underwriting"
    search = completed_search(mcp, deal_id, worker)
    assert len(search["results"]) == 5
    if worker is not None:  # ranked by the worker process, not in this one
        assert "lenders.tasks.run_lender_search" in worker.tail() and "succeeded" in worker.tail()
    assert stage_of(mcp, deal_id) == "in_market"

    # The top three, each sent to our contact there.
    top = [m["lender_id"] for m in search["results"][:3]]
    placed = mcp.ok("create_placements", {"deal_id": deal_id, "search_id": search["search_id"], "top_n": 3,
                                          "send": True,
                                          "contact_ids": [lender_contact[lender]["id"] for lender in top]})
    assert placed["created"] == 3
    by_lender = {p["lender_id"]: p for p in placed["placements"]}
    assert set(by_lender) == set(top)
    assert all(by_lender[lender]["contact_id"] == lender_contact[lender]["id"] for lender in top)

    # The market: 1-month Term SOFR as the desk's CSV has it (imported; no network), with a later day
    # beyond the quote's that must not price it.
    today = timezone.localdate()
    days = {ago: (today - dt.timedelta(days=ago)).isoformat() for ago in (9, 2)}
    rates = tmp_path / "rates.csv"
    rates.write_text(f"date,index,rate\n{days[9]},term_sofr_1m,4.40\n{days[2]},1-month Term SOFR,4.33\n"
                     f"{days[2]},prime,7.50\n")
    call_command("import_market_rates", str(rates))
    as_of_today = {r["index"]: r for r in mcp.ok("get_market_rates", {"as_of": today.isoformat()})["rates"]}
    assert (as_of_today["term_sofr_1m"]["rate"], as_of_today["term_sofr_1m"]["date"]) == (4.33, days[2])
    history = mcp.ok("get_market_rates", {"index": "term_sofr_1m", "history_days": 30})["history"]
    assert [(h["date"], h["rate"]) for h in history] == [(days[2], 4.33), (days[9], 4.40)]

    # Two quotes: a fixed one, and a floating one with two years of interest only.
    first, second, third = (by_lender[lender]["id"] for lender in top)
    mcp.ok("update_placement", {"placement_id": first, "status": "reviewing"})
    fixed = mcp.ok("add_term_sheet", {"placement_id": first, "loan_amount": 10_000_000, "rate_type": "fixed",
                                      "fixed_rate": 6.1, "term_months": 120, "amortization_months": 360})["term_sheet"]
    floating = mcp.ok("add_term_sheet", {
        "placement_id": second, "loan_amount": 10_500_000, "rate_type": "floating", "rate_index": "term_sofr_1m",
        "spread_bps": 275, "term_months": 36, "amortization_months": 360, "interest_only_months": 24,
    })["term_sheet"]
    declined = mcp.ok("update_placement", {"placement_id": third, "status": "declined",
                                                "notes": "Too small for their book"})
    assert declined["placement"]["status"] == "declined"

    comparison = mcp.ok("compare_term_sheets", {"deal_id": deal_id})
    quotes = {q["term_sheet_id"]: q for q in comparison["quotes"]}
    assert set(quotes) == {fixed["id"], floating["id"]}
    # The floating quote is priced over the index's rate as of its day: 4.33 % (dated two days before) + 2.75 %.
    priced = quotes[floating["id"]]
    assert (priced["base_rate"], priced["base_rate_as_of"], priced["quoted_on"]) == (4.33, days[2], today.isoformat())
    assert priced["all_in_rate"] == 7.08
    assert priced["interest_only_months"] == 24
    assert priced["dscr_interest_only"] is not None and priced["dscr_interest_only"] > priced["dscr_amortizing"]

    # Summary 2, quotes in: the funnel and the quotes compared, each figure as the comparison serves it.
    second_summary = summarized(mcp, rest, deal_id, "standard")
    best = comparison["quotes"][0]
    assert cited(second_summary, "quotes.0.all_in_rate") == best["all_in_rate"]
    at = next(i for i, q in enumerate(comparison["quotes"]) if q["term_sheet_id"] == floating["id"])
    assert cited(second_summary, f"quotes.{at}.all_in_rate") == 7.08
    # Its notes as the comparison words them, the first two at this level (a coverage below the lender's or the
    # loan type's usual minimum before its interest-only period: issue 39).
    notes = [n for n in comparison["quotes"][at]["notes"] if n != "winning quote"][:2]
    assert notes and all(note in second_summary["text"] for note in notes)
    assert "choose_winner" in [step["rule"] for step in second_summary["next_steps"]]

    # The winner moves the deal to closing by itself.
    won = mcp.ok("select_winning_term_sheet", {"term_sheet_id": fixed["id"]})
    assert won["term_sheet"]["winning"] is True
    assert stage_of(mcp, deal_id) == "closing"

    # A note of the call with the sponsor.
    note = mcp.ok("add_note", {"deal_id": deal_id, "kind": "call", "body": "Ada agreed to Granite's terms."})["note"]
    assert note["kind"] == "call"

    # The timeline reads every step, in order.
    entries = timeline(mcp, deal_id)
    assert [e["at"] for e in entries] == sorted(e["at"] for e in entries)
    names = {lender: next(p.lender.name for p in programs if p.lender_id == lender) for lender in top}
    assert [(e["kind"], e["text"]) for e in entries] == [
        ("stage_changed", "Started in Intake: Deal created."),
        ("stage_changed", "Moved from Intake to Underwriting: Rent roll in"),
        ("search_started", f"Lender search {search['search_id']} started"),
        ("stage_changed", f"Moved from Underwriting to In market automatically: Lender search {search['search_id']} "
                          "started."),
        ("search_finished", f"Lender search {search['search_id']} finished: 5 lenders matched"),
        *(("placement_sent", f"Sent to {names[lender]}") for lender in top),
        ("placement_status", f"{names[top[0]]}: sent → reviewing"),
        ("quote_received", f"Quote from {names[top[0]]}: $10,000,000 at 6.1% fixed"),
        ("quote_received", f"Quote from {names[top[1]]}: $10,500,000 at 1-month Term SOFR + 275 bps"),
        ("placement_status", f"{names[top[2]]}: sent → declined"),
        ("winner_chosen", f"Winner chosen: {names[top[0]]}'s quote ($10,000,000 at 6.1% fixed)"),
        ("placement_status", f"{names[top[1]]}: quoted → lost (another quote won)"),
        ("stage_changed", f"Moved from In market to Closing automatically: Term sheet {fixed['id']} from "
                          f"{names[top[0]]} chosen as the winning quote."),
        ("note", "Call: Ada agreed to Granite's terms."),
    ]
    by_hand = [e for e in entries if e["kind"] == "stage_changed" and "automatically" not in e["text"]][1]
    automatic = [e for e in entries if "automatically" in e["text"]]
    assert by_hand["actor"] != "Lev" and {e["actor"] for e in automatic} == {"Lev"}

    # Summary 3, the memo after the winner: closing, the winner, its figures.
    memo = summarized(mcp, rest, deal_id, "memo")
    assert "Closing" in memo["text"]
