"""Lender discovery through the real /mcp endpoint: directory, search, results, errors, budgets.

Jobs run in-process here (the embedded default); tests/deals/searches/test_celery_worker.py runs the
same flow against a real Celery worker, Redis and PostgreSQL.
"""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from deals.searches.models import LenderMatch, LenderSearch
from deals.searches.ranking import runner
from lev.errors import UPSTREAM_MESSAGE
from tests.deals.fixtures import eager_jobs
from tests.deals.searches.factories import LenderFactory, LenderProgramFactory, lender_with, make_deal
from tests.mcp_helpers import McpCaller

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("eager_jobs")]
__all__ = ["eager_jobs"]

LENDER_TOOLS = {"search_lender_directory", "search_lenders_for_deal", "get_lender_search_results"}


def sized(mcp: McpCaller, name: str, arguments: dict) -> tuple[bool, dict, int]:
    """(isError, payload, bytes of the text content)."""
    result = mcp.call_raw(name, arguments)
    text = result.content[0].text
    assert result.structuredContent == json.loads(text)
    return bool(result.isError), json.loads(text), len(text.encode("utf-8"))


def page_all(mcp: McpCaller, search_id: int, limit: int) -> tuple[list[dict], list[int]]:
    """Every match of a completed search, following next_cursor; also each response's size."""
    results, sizes, cursor = [], [], None
    while True:
        args = {"search_id": search_id, "limit": limit, **({"cursor": cursor} if cursor else {})}
        is_error, page, size = sized(mcp, "get_lender_search_results", args)
        assert not is_error, page
        results += page["results"]
        sizes.append(size)
        if not page["has_more"]:
            assert page["next_cursor"] is None
            return results, sizes
        cursor = page["next_cursor"]


def test_lender_tools_are_listed_with_truthful_annotations(mcp):
    tools = {t.name: t for t in mcp.list_tools()}
    assert set(tools) >= LENDER_TOOLS
    for name in LENDER_TOOLS:
        assert len(tools[name].description) > 200, name  # written for an agent
    assert tools["search_lender_directory"].annotations.readOnlyHint is True
    assert tools["get_lender_search_results"].annotations.readOnlyHint is True
    start = tools["search_lenders_for_deal"].annotations
    assert start.readOnlyHint is False and start.destructiveHint is False and start.idempotentHint is True
    assert tools["get_lender_search_results"].inputSchema["properties"]["limit"]["maximum"] == 100
    assert tools["search_lenders_for_deal"].inputSchema["required"] == ["deal_id"]


def test_agent_creates_a_deal_adds_a_property_searches_and_pages_through_every_match(mcp):
    for n in range(9):
        lender_with(f"Nationwide {n}", sponsor_states=[])
    lender_with("Texas Only", sponsor_states=["TX"])
    lender_with("Texas and Oklahoma", sponsor_states=["OK", "TX"])
    lender_with("Office Lender", asset_types=["office"])
    deal = mcp.ok("create_deal", {
        "title": "Prairie Portfolio", "loan_amount": 10_000_000, "loan_type": "permanent",
        "business_plan": "stabilized",
        "properties": [{"name": "Austin Flats", "state": "TX", "asset_type": "multifamily"}],
    })["deal"]
    mcp.ok("add_deal_property", {"deal_id": deal["id"], "name": "Tulsa Flats", "state": "OK",
                                 "asset_type": "multifamily"})

    started = mcp.ok("search_lenders_for_deal", {"deal_id": deal["id"]})
    assert set(started) == {"search_id", "status", "deal_id", "message", "poll_after_ms"}
    assert started["deal_id"] == deal["id"]
    # In-process jobs: the search has already finished when the tool answers.
    assert started["status"] == "completed" and started["poll_after_ms"] == 0
    assert f"get_lender_search_results(search_id={started['search_id']})" in started["message"]

    results, sizes = page_all(mcp, started["search_id"], limit=4)
    names = [r["lender_name"] for r in results]
    # The property added through MCP counts: the Texas-only lender no longer covers the deal.
    assert "Texas Only" not in names and "Office Lender" not in names
    assert sorted(names) == sorted([f"Nationwide {n}" for n in range(9)] + ["Texas and Oklahoma"])
    assert [r["rank"] for r in results] == list(range(1, 11))  # no duplicates, no gaps
    assert len(sizes) == 3 and max(sizes) < settings.LEV_MCP_MAX_RESPONSE_BYTES
    first = results[0]
    assert set(first) == {"rank", "lender_id", "lender_name", "score", "match_insights", "programs",
                          "program_count", "score_parts", "sizing", "capital_source", "outside_box"}
    assert 0 <= first["score"] <= 100 and first["match_insights"][-1] == (
        "Geography: nationwide program, covers OK, TX")
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)


def test_a_search_is_reused_until_the_deal_changes(mcp, account):
    lender_with("Texas Only", sponsor_states=["TX"])
    deal = make_deal(account)
    first = mcp.ok("search_lenders_for_deal", {"deal_id": deal.pk})
    again = mcp.ok("search_lenders_for_deal", {"deal_id": deal.pk})
    assert again["search_id"] == first["search_id"] and again["message"].startswith("The deal is unchanged")
    assert mcp.ok("get_lender_search_results", {"search_id": first["search_id"]})["total"] == 1

    mcp.ok("add_deal_property", {"deal_id": deal.pk, "name": "Reno Lofts", "state": "NV",
                                 "asset_type": "multifamily"})
    stale = mcp.ok("get_lender_search_results", {"search_id": first["search_id"]})
    assert stale["deal_changed"] is True
    fresh = mcp.ok("search_lenders_for_deal", {"deal_id": deal.pk})
    assert fresh["search_id"] != first["search_id"]
    page = mcp.ok("get_lender_search_results", {"search_id": fresh["search_id"]})
    # Never the stale cached answer: Nevada is not covered, so nothing matches now.
    assert page["status"] == "completed" and page["results"] == [] and page["total"] == 0
    assert page["has_more"] is False and page["deal_changed"] is False


def test_an_unsearchable_deal_is_a_business_rule_error_saying_what_is_missing(mcp):
    deal = mcp.ok("create_deal", {"title": "Napkin Sketch"})["deal"]
    error = mcp.error("search_lenders_for_deal", {"deal_id": deal["id"]})
    assert error["code"] == "BUSINESS_RULE" and error["errorCategory"] == "business"
    assert error["isRetryable"] is False
    assert error["message"].startswith(f"Not allowed: deal {deal['id']} is not ready for a lender search")
    assert error["customerMessage"] == ("This deal can't be matched with lenders yet. Add a loan amount and "
                                        "at least one property, then search again.")


def test_other_accounts_searches_and_deals_are_not_found(mcp, other_account):
    lender_with()
    theirs = make_deal(other_account)
    error = mcp.error("search_lenders_for_deal", {"deal_id": theirs.pk})
    assert error["code"] == "NOT_FOUND" and error["message"] == f"Deal not found: {theirs.pk}"
    search = LenderSearch.objects.create(account=other_account, deal=theirs, deal_version=theirs.version)
    error = mcp.error("get_lender_search_results", {"search_id": search.pk})
    assert error["code"] == "NOT_FOUND" and error["message"] == f"Lender search not found: {search.pk}"


@pytest.mark.parametrize(("code", "category", "retryable", "message"), [
    ("UPSTREAM_UNAVAILABLE", "transient", True,
     f"{UPSTREAM_MESSAGE} Lender search stopped before finishing (ranking worker lost after 3 attempt(s))."),
    ("INTERNAL_ERROR", "internal", False, "Internal error: lender search failed unexpectedly."),
])
def test_a_failed_search_is_an_error_in_the_contract_shape(mcp, account, code, category, retryable, message):
    deal = make_deal(account)
    search = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version, status="failed",
                                         error_code=code, error_message=message)
    error = mcp.error("get_lender_search_results", {"search_id": search.pk})
    assert error["code"] == code and error["errorCategory"] == category and error["isRetryable"] is retryable
    assert error["message"] == message
    assert ("retryAfterMs" in error) is retryable
    assert f"search_lenders_for_deal(deal_id={deal.pk})" in error["hint"]
    assert error["details"] == {"search_id": search.pk, "deal_id": deal.pk, "status": "failed"}


def test_a_job_that_crashes_reports_internal_error_and_a_new_search_can_start(mcp, account, monkeypatch):
    lender_with()
    deal = make_deal(account)

    def broken(*args, **kwargs):
        raise RuntimeError("private detail that must not leak")

    monkeypatch.setattr(runner, "describe_top", broken)
    started = mcp.ok("search_lenders_for_deal", {"deal_id": deal.pk})
    assert started["status"] == "failed"
    error = mcp.error("get_lender_search_results", {"search_id": started["search_id"]})
    assert error["code"] == "INTERNAL_ERROR" and "private detail" not in json.dumps(error)
    monkeypatch.undo()
    retried = mcp.ok("search_lenders_for_deal", {"deal_id": deal.pk})  # a failed search is never reused
    assert retried["search_id"] != started["search_id"] and retried["status"] == "completed"


def test_partial_results_page_without_gaps_while_the_rest_is_written(mcp, account):
    deal = make_deal(account)
    lenders = [LenderFactory(name=f"Early {n}") for n in range(3)]
    search = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version, status="partial",
                                         progress=60, total_matches=5, ranked_matches=5)
    LenderSearch.objects.filter(pk=search.pk).update(heartbeat_at=search.created_at)
    LenderMatch.objects.bulk_create([LenderMatch(search=search, rank=n + 1, lender=lender, score=80 - n)
                                     for n, lender in enumerate(lenders)])
    first = mcp.ok("get_lender_search_results", {"search_id": search.pk, "limit": 2})
    assert first["status"] == "partial" and [r["rank"] for r in first["results"]] == [1, 2]
    assert first["has_more"] is True and first["total"] == 5 and first["poll_after_ms"] > 0
    second = mcp.ok("get_lender_search_results", {"search_id": search.pk, "cursor": first["next_cursor"]})
    # Ranks 3-4 are not all written yet: nothing now, and the cursor points back at this page.
    assert second["results"] == [] and second["has_more"] is True
    assert second["next_cursor"] == first["next_cursor"]


def test_every_response_stays_under_the_byte_budget_on_a_large_directory(mcp, account):
    budget = settings.LEV_MCP_MAX_RESPONSE_BYTES
    long = "Extraordinarily Long Commercial Real Estate Lending Institution Name " * 3
    for n in range(150):
        lender = LenderFactory(name=f"{long[:190]} {n:03d}")
        for k in range(4):
            LenderProgramFactory(lender=lender, title=f"{long[:190]} program {k}",
                                 min_loan_amount=1_000_000 + k * 100_000)
    deal = make_deal(account)
    search = mcp.ok("search_lenders_for_deal", {"deal_id": deal.pk})

    results, sizes = page_all(mcp, search["search_id"], limit=100)
    assert [r["rank"] for r in results] == list(range(1, 151))
    assert len({r["lender_id"] for r in results}) == 150
    assert max(sizes) <= budget
    is_error, big, size = sized(mcp, "get_lender_search_results", {"search_id": search["search_id"], "limit": 100})
    assert not is_error and len(big["results"]) == 100 and big["compacted"] is True and size <= budget
    is_error, small, size = sized(mcp, "get_lender_search_results", {"search_id": search["search_id"], "limit": 10})
    assert "compacted" not in small and len(small["results"][0]["programs"]) == 3 and size <= budget
    assert small["results"][0]["program_count"] == 4

    is_error, directory, size = sized(mcp, "search_lender_directory", {"limit": 100})
    assert not is_error and len(directory["lenders"]) == 100 and directory["total"] == 150 and size <= budget


def test_directory_search_filters_and_pages_with_cursors(mcp):
    for n in range(12):
        lender = LenderFactory(name=f"Bank {n:02d}", state="TX" if n % 2 else "NY", lender_types=["bank"])
        LenderProgramFactory(lender=lender, min_loan_amount=1_000_000, max_loan_amount=(n + 1) * 1_000_000)
    LenderProgramFactory(lender=LenderFactory(name="Fund", state="NY", lender_types=["debt_fund"]),
                         loan_types=["heavy_bridge"],
                         asset_types=["office"])
    seen, cursor = [], None
    while True:
        page = mcp.ok("search_lender_directory", {"lender_type": "BANK", "limit": 5,
                                                  **({"cursor": cursor} if cursor else {})})
        seen += [lender["name"] for lender in page["lenders"]]
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert seen == [f"Bank {n:02d}" for n in range(12)]
    texas = mcp.ok("search_lender_directory", {"state": "tx", "loan_amount": 9_000_000})
    assert [x["name"] for x in texas["lenders"]] == ["Bank 09", "Bank 11"]
    assert texas["lenders"][0] == {
        "id": texas["lenders"][0]["id"], "name": "Bank 09", "lender_types": ["bank"], "city": "Dallas",
        "state": "TX", "program_count": 1, "min_loan_amount": 1_000_000, "max_loan_amount": 10_000_000, "own": False,
    }
    office = mcp.ok("search_lender_directory", {"asset_type": "office", "loan_type": "heavy_bridge"})
    assert [x["name"] for x in office["lenders"]] == ["Fund"]
    assert mcp.ok("search_lender_directory", {"query": "nothing like this"}) == {
        "lenders": [], "total": 0, "has_more": False, "next_cursor": None}
    error = mcp.error("search_lender_directory", {"cursor": "not-a-cursor"})
    assert error["code"] == "VALIDATION_ERROR" and error["details"]["fields"] == {
        "cursor": ["is not a cursor this server issued; pass next_cursor back unchanged"]}


def test_a_search_not_run_yet_is_a_success_telling_the_agent_to_poll(mcp, account):
    deal = make_deal(account)
    search = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version)
    LenderSearch.objects.filter(pk=search.pk).update(queued_at=search.created_at)
    page = mcp.ok("get_lender_search_results", {"search_id": search.pk})
    assert page == {"search_id": search.pk, "deal_id": deal.pk, "status": "pending", "progress": 0,
                    "results": [], "total": 0, "ranked": 0, "has_more": False, "next_cursor": None,
                    "poll_after_ms": settings.LEV_SEARCH_POLL_AFTER_MS, "deal_changed": False,
                    "by_capital_source": []}


def test_pages_cover_the_top_n_while_total_counts_every_eligible_lender(mcp, account, settings):
    settings.LEV_RANKING_TOP_N = 5
    for n in range(7):
        lender_with(f"Lender {n}", min_loan_amount=1_000_000 + n * 1_000_000)
    search = mcp.ok("search_lenders_for_deal", {"deal_id": make_deal(account).pk})
    first = mcp.ok("get_lender_search_results", {"search_id": search["search_id"], "limit": 2})
    assert first["total"] == 7 and first["ranked"] == 5 and first["status"] == "completed"
    assert "total counts every eligible lender (7); pages cover only the best 5" in first["message"]
    results, _sizes = page_all(mcp, search["search_id"], limit=2)
    assert [r["rank"] for r in results] == [1, 2, 3, 4, 5]  # no gaps, no repeats, and has_more ends there
    assert len({r["lender_id"] for r in results}) == 5


def test_a_purged_search_tells_the_agent_which_search_to_read(mcp, account, settings):
    import datetime as dt

    from django.utils import timezone

    from deals.searches import services

    settings.LEV_SEARCH_REUSE_SECONDS = 0
    settings.LEV_SEARCH_MATCH_RETENTION_SECONDS = 3600
    lender_with("Only Lender")
    deal = make_deal(account)
    old, latest = (mcp.ok("search_lenders_for_deal", {"deal_id": deal.pk})["search_id"] for _ in range(2))
    long_ago = timezone.now() - dt.timedelta(hours=2)
    LenderSearch.objects.filter(pk__in=[old, latest]).update(finished_at=long_ago)
    assert services.lender_matches_purge() == 1

    page = mcp.ok("get_lender_search_results", {"search_id": old})
    assert page["status"] == "completed" and page["results"] == [] and page["has_more"] is False
    assert page["results_removed"] is True and page["superseded_by_search_id"] == latest
    assert page["total"] == 1 and page["ranked"] == 0
    assert "replaced by a newer search" in page["message"]
    assert f"get_lender_search_results(search_id={latest})" in page["hint"]
    current = mcp.ok("get_lender_search_results", {"search_id": latest})
    assert [r["lender_name"] for r in current["results"]] == ["Only Lender"] and "results_removed" not in current
