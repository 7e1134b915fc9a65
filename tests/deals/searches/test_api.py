"""REST: POST /deals/{id}/lender-searches/, GET /lender-searches/{id}/."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from deals.searches.models import LenderMatch, LenderSearch
from tests.deals.searches.factories import LenderFactory, lender_with, make_deal, refresh

pytestmark = pytest.mark.django_db


@pytest.fixture
def post_search(api, django_capture_on_commit_callbacks):
    def post(deal_id: int, client=None):
        with django_capture_on_commit_callbacks(execute=True):
            return (client or api).post(f"/api/v1/deals/{deal_id}/lender-searches/", {}, format="json")

    return post


def test_start_runs_the_job_and_repeats_reuse_it(account, api, post_search):
    for n in range(3):
        lender_with(f"Lender {n}")
    deal = make_deal(account)
    response = post_search(deal.pk)
    assert response.status_code == 202, response.json()
    body = response.json()
    # The job is queued on commit (here: when the test's capture block ends), so: pending.
    assert body["status"] == "pending" and body["deal_id"] == deal.pk and body["deal_version"] == deal.version
    assert body["reused"] is False and body["poll_after_ms"] == 1000 and body["progress"] == 0
    results = api.get(f"/api/v1/lender-searches/{body['search_id']}/").json()
    assert results["status"] == "completed" and results["count"] == 3 and results["poll_after_ms"] == 0
    again = post_search(deal.pk)
    assert again.status_code == 200 and again.json()["search_id"] == body["search_id"]
    assert again.json()["reused"] is True and "reused" in again.json()["message"]


def test_start_of_an_unsearchable_deal_is_a_business_rule_error(account, post_search):
    deal = make_deal(account, states=(), asset_types=())
    response = post_search(deal.pk)
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "BUSINESS_RULE"
    assert body["message"].startswith(f"Not allowed: deal {deal.pk} is not ready for a lender search")
    assert body["details"]["customer_message"].startswith("This deal can't be matched with lenders yet. Add at "
                                                          "least one property")


def test_another_accounts_deal_and_search_do_not_exist(account, other_account, api, other_api, post_search):
    lender_with()
    mine = make_deal(account)
    theirs = make_deal(other_account)
    response = post_search(theirs.pk)
    assert response.status_code == 404 and response.json()["message"] == f"Deal not found: {theirs.pk}"
    search_id = post_search(mine.pk).json()["search_id"]
    stolen = other_api.get(f"/api/v1/lender-searches/{search_id}/")
    assert stolen.status_code == 404 and stolen.json()["message"] == f"Lender search not found: {search_id}"
    missing = api.get("/api/v1/lender-searches/999999/")
    assert missing.status_code == 404 and missing.json()["message"] == "Lender search not found: 999999"


def test_unknown_body_keys_and_bad_page_sizes_are_validation_errors(account, api):
    deal = make_deal(account)
    response = api.post(f"/api/v1/deals/{deal.pk}/lender-searches/", {"force": True}, format="json")
    assert response.status_code == 400 and response.json()["details"]["fields"] == {"force": ["is not a known field"]}
    search = LenderSearch.objects.create(account=account, deal=deal, deal_version=1)
    response = api.get(f"/api/v1/lender-searches/{search.pk}/", {"page_size": 101})
    assert response.status_code == 400
    assert response.json()["message"] == "Validation failed: page_size must be at most 100"


def test_results_page_by_rank_with_next_links_until_the_end(account, api, post_search):
    for n in range(7):
        lender_with(f"Lender {n}")
    search_id = post_search(make_deal(account).pk).json()["search_id"]
    seen, url, pages = [], f"/api/v1/lender-searches/{search_id}/?page_size=3", 0
    while url:
        body = api.get(url).json()
        assert body["status"] == "completed" and body["count"] == 7 and body["page_ready"] is True
        seen += [m["rank"] for m in body["results"]]
        url, pages = body["next"], pages + 1
    assert seen == [1, 2, 3, 4, 5, 6, 7] and pages == 3
    first = api.get(f"/api/v1/lender-searches/{search_id}/", {"page_size": 2}).json()
    match = first["results"][0]
    assert set(match) == {"rank", "lender_id", "lender_name", "lender_own", "score", "match_insights", "programs",
                          "program_count", "capital_source", "outside_box", "sizing", "score_parts"}
    assert match["lender_name"].startswith("Lender ") and len(match["match_insights"]) == 7
    assert match["lender_own"] is False  # the directory's
    assert first["previous"] is None and first["error"] is None and first["deal_changed"] is False

    def lender_queries(size: int) -> list[str]:
        with CaptureQueriesContext(connection) as ctx:
            api.get(f"/api/v1/lender-searches/{search_id}/", {"page_size": size})
        return [q["sql"] for q in ctx.captured_queries if "lenders_" in q["sql"]]

    # The search, the kinds of capital ranked (two queries: by_capital_source), then one page of matches
    # with their lender names — whatever the page size.
    assert len(lender_queries(1)) == len(lender_queries(7)) == 4


def test_a_page_beyond_the_end_is_empty_not_an_error(account, api, post_search):
    lender_with()
    search_id = post_search(make_deal(account).pk).json()["search_id"]
    body = api.get(f"/api/v1/lender-searches/{search_id}/", {"page": 5}).json()
    assert body["results"] == [] and body["next"] is None and body["count"] == 1


def test_a_partial_search_serves_only_fully_written_pages(account, api):
    deal = make_deal(account)
    lenders = [LenderFactory() for _ in range(5)]
    search = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version,
                                         status="partial", total_matches=5, ranked_matches=5,
                                         heartbeat_at=timezone.now())
    LenderMatch.objects.bulk_create([LenderMatch(search=search, rank=n + 1, lender=lender, score=90 - n)
                                     for n, lender in enumerate(lenders[:3])])
    first = api.get(f"/api/v1/lender-searches/{search.pk}/", {"page_size": 2}).json()
    assert first["status"] == "partial" and [m["rank"] for m in first["results"]] == [1, 2]
    assert first["page_ready"] is True and first["next"] is not None and first["poll_after_ms"] > 0
    second = api.get(first["next"]).json()
    assert second["results"] == [] and second["page_ready"] is False and second["next"] is None


def test_a_failed_search_answers_200_with_its_error(account, api):
    deal = make_deal(account)
    search = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version, status="failed",
                                         error_code="INTERNAL_ERROR", error_message="Internal error: boom.")
    body = api.get(f"/api/v1/lender-searches/{search.pk}/").json()
    assert body["status"] == "failed" and body["results"] == [] and body["count"] == 0
    assert body["error"] == {"code": "INTERNAL_ERROR", "message": "Internal error: boom."}


def test_reading_a_search_whose_worker_died_recovers_it(account, api, settings, django_capture_on_commit_callbacks):
    lender_with()
    deal = make_deal(account)
    search = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version, status="running",
                                         attempts=1, run_token="dead", criteria={
                                             "loan_amount": 10_000_000.0, "loan_type": "permanent",
                                             "states": ["TX"], "asset_types": ["multifamily"]})
    LenderSearch.objects.filter(pk=search.pk).update(heartbeat_at=search.created_at.replace(year=2020))
    with django_capture_on_commit_callbacks(execute=True):
        body = api.get(f"/api/v1/lender-searches/{search.pk}/").json()
    assert body["status"] in ("pending", "completed")
    assert refresh(search).status == "completed" and refresh(search).total_matches == 1


def test_a_search_of_a_deal_changed_since_says_so(account, api, post_search):
    lender_with()
    deal = make_deal(account)
    search_id = post_search(deal.pk).json()["search_id"]
    api.patch(f"/api/v1/deals/{deal.pk}/", {"loan_amount": 11_000_000}, format="json")
    assert api.get(f"/api/v1/lender-searches/{search_id}/").json()["deal_changed"] is True
