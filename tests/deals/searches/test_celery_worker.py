"""End to end with a real Celery worker, Redis and PostgreSQL: a deal made through MCP is ranked by
the worker and paged through with cursors; a search whose worker died is recovered by the sweep.

Needs REDIS_URL and a PostgreSQL DATABASE_URL (skipped otherwise):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/lev REDIS_URL=redis://127.0.0.1:6379/15 \\
        .venv/bin/python -m pytest tests/deals/searches/test_celery_worker.py -m slow
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.utils import timezone

from deals.demo.directory import seed_directory
from deals.searches import tasks
from deals.searches.models import LenderMatch, LenderSearch
from lenders.models import Lender
from tests.deals.searches.factories import make_deal
from tests.deals.searches.worker_process import Worker, celery_worker, wait_for
from tests.mcp_helpers import McpCaller

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
TOP_N = 50



@pytest.fixture
def worker(db) -> Iterator[Worker]:
    """A Celery worker (prefork, one child) on the pytest database and a queue of its own; jobs
    of this process go to that queue. Always stopped afterwards."""
    # Several chunks: the search goes through `partial`; a top N below the eligible lenders.
    with celery_worker(env={"LEV_SEARCH_WRITE_CHUNK": "25", "LEV_RANKING_TOP_N": str(TOP_N)}) as running:
        yield running


def test_worker_ranks_a_deal_made_through_mcp_and_every_match_pages_once(worker, live_server, api_key):
    seed_directory(400, seed=11)  # ~1,000 programs
    mcp = McpCaller(live_server.url, api_key)
    deal = mcp.ok("create_deal", {
        "title": "Worker Test Refi", "loan_amount": 18_500_000, "loan_type": "permanent",
        "business_plan": "stabilized",
        "properties": [{"name": "Riverside", "state": "TX", "asset_type": "multifamily"}],
    })["deal"]
    mcp.ok("add_deal_property", {"deal_id": deal["id"], "name": "Riverside II", "state": "TX",
                                 "asset_type": "multifamily"})
    started = mcp.ok("search_lenders_for_deal", {"deal_id": deal["id"]})
    assert started["status"] == "pending" and started["poll_after_ms"] > 0  # queued, not run here
    budget = settings.LEV_MCP_MAX_RESPONSE_BYTES
    statuses = set()

    def completed():
        result = mcp.call_raw("get_lender_search_results", {"search_id": started["search_id"], "limit": 100})
        assert not result.isError and len(result.content[0].text.encode()) <= budget
        statuses.add(result.structuredContent["status"])
        return result.structuredContent if result.structuredContent["status"] == "completed" else None

    final = wait_for(completed, "the worker to complete the search", worker)
    assert statuses <= {"pending", "running", "partial", "completed"}
    total = final["total"]
    search = LenderSearch.objects.get(pk=started["search_id"])
    assert total == search.total_matches > TOP_N and search.attempts == 1 and search.progress == 100
    # Every eligible lender is counted; the top N are stored and paged, and the agent is told so.
    assert final["ranked"] == search.ranked_matches == TOP_N
    assert f"pages cover only the best {TOP_N}" in final["message"]

    ranks, lenders, cursor = [], [], None
    while True:
        result = mcp.call_raw("get_lender_search_results", {
            "search_id": started["search_id"], "limit": 9, **({"cursor": cursor} if cursor else {})})
        assert not result.isError and len(result.content[0].text.encode()) <= budget
        page = result.structuredContent
        ranks += [m["rank"] for m in page["results"]]
        lenders += [m["lender_id"] for m in page["results"]]
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert ranks == list(range(1, TOP_N + 1))  # no gaps, no duplicates, and they end at the top N
    assert len(set(lenders)) == TOP_N
    assert page["total"] == total and page["next_cursor"] is None

    again = mcp.ok("search_lenders_for_deal", {"deal_id": deal["id"]})
    assert again["search_id"] == started["search_id"] and again["status"] == "completed"


def test_worker_recovers_a_search_whose_worker_died_mid_job(worker, account):
    seed_directory(400, seed=11)  # more eligible lenders than the worker's top N
    deal = make_deal(account)
    criteria = {"loan_amount": 10_000_000.0, "loan_type": "permanent", "business_plan": "stabilized",
                "states": ["TX"], "asset_types": ["multifamily"], "property_count": 1}
    # What a killed worker leaves behind: `running`, a half-written result, no heartbeat since.
    stale_at = timezone.now() - dt.timedelta(seconds=settings.LEV_SEARCH_STALE_SECONDS + 5)
    search = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version, criteria=criteria,
                                         status="partial", attempts=1, run_token="killed", progress=60,
                                         total_matches=3, ranked_matches=3, started_at=stale_at,
                                         heartbeat_at=stale_at)
    LenderMatch.objects.create(search=search, rank=1, lender=Lender.objects.first(), score=50)

    tasks.sweep_stale_searches.delay()  # what celery beat runs every LEV_SEARCH_SWEEP_SECONDS

    def completed():
        search.refresh_from_db()
        return search.status == "completed"

    wait_for(completed, "the sweep to re-queue the search and the worker to run it", worker)
    assert search.attempts == 2
    ranks = list(LenderMatch.objects.filter(search=search).order_by("rank").values_list("rank", flat=True))
    assert search.total_matches > TOP_N and search.ranked_matches == TOP_N
    assert ranks == list(range(1, TOP_N + 1))  # the dead run's rank 1 replaced, exactly the top N
