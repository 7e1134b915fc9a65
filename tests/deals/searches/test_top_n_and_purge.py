"""A search stores its top LEV_RANKING_TOP_N lenders and counts every eligible one; the matches of
searches nobody reads any more are purged after LEV_SEARCH_MATCH_RETENTION_SECONDS, and every
reader (REST, admin, placements) says so instead of showing an empty list."""

from __future__ import annotations

import datetime as dt

import pytest
from django.conf import settings as django_settings
from django.urls import reverse
from django.utils import timezone

from deals.placements import services as placement_services
from deals.searches import services, tasks
from deals.searches.models import LenderMatch, LenderSearch
from deals.searches.ranking import runner
from deals.searches.selectors import lender_match_page, lender_search_latest_completed
from lenders.models import Lender
from lev.errors import BusinessRuleViolation
from tests.deals.searches.factories import lender_with, make_deal, refresh

pytestmark = pytest.mark.django_db

LENDERS = 7


@pytest.fixture
def directory():
    """Seven lenders whose scores all differ (loan ranges further and further from the loan)."""
    for n in range(LENDERS):
        lender_with(f"Lender {n}", min_loan_amount=1_000_000 + n * 1_000_000)


@pytest.fixture
def run_search(settings, django_capture_on_commit_callbacks):
    settings.LEV_SEARCH_REUSE_SECONDS = 0  # a new search each time

    def run(deal) -> LenderSearch:
        with django_capture_on_commit_callbacks(execute=True):
            search, _ = services.lender_search_start(deal=deal)
        return refresh(search)

    return run


def stored(search: LenderSearch) -> list[tuple]:
    return list(LenderMatch.objects.filter(search=search).order_by("rank")
                .values_list("rank", "lender_id", "score", "match_insights", "programs", "program_count"))


# --- the top N --------------------------------------------------------------------------------------
def test_the_top_n_is_stored_and_every_eligible_lender_counted(account, directory, run_search, settings):
    deal = make_deal(account)
    settings.LEV_RANKING_TOP_N = 1000
    everyone = run_search(deal)
    settings.LEV_RANKING_TOP_N = 3
    top = run_search(deal)
    assert (everyone.total_matches, everyone.ranked_matches) == (LENDERS, LENDERS)
    assert (top.total_matches, top.ranked_matches, top.total_candidates) == (LENDERS, 3, LENDERS)
    assert top.status == "completed" and top.progress == 100
    # The top 3 are the first 3 of the whole ranking: same lenders, scores, insights and programs.
    assert stored(top) == stored(everyone)[:3]
    assert [rank for rank, *_ in stored(top)] == [1, 2, 3]


def test_rest_pages_cover_the_top_n_without_gaps_and_count_every_lender(account, api, directory, run_search,
                                                                        settings):
    settings.LEV_RANKING_TOP_N = 5
    search = run_search(make_deal(account))
    ranks, url = [], f"/api/v1/lender-searches/{search.pk}/?page_size=2"
    while url:
        body = api.get(url).json()
        assert body["count"] == LENDERS and body["ranked_count"] == 5 and body["results_removed"] is False
        ranks += [match["rank"] for match in body["results"]]
        url = body["next"]
    assert ranks == [1, 2, 3, 4, 5]  # next ends at the last stored rank, not at count
    past = api.get(f"/api/v1/lender-searches/{search.pk}/", {"page": 4, "page_size": 2}).json()
    assert past["results"] == [] and past["next"] is None and past["page_ready"] is True
    assert past["count"] == LENDERS


def test_a_top_n_larger_than_a_chunk_is_readable_as_partial(account, directory, run_search, settings, monkeypatch):
    settings.LEV_RANKING_TOP_N, settings.LEV_SEARCH_WRITE_CHUNK = 5, 2
    seen = []
    original = runner.write_matches

    def spy(rows):
        original(rows)  # what a reader sees once this chunk's transaction commits
        search = LenderSearch.objects.get(pk=rows[0][0])
        pages = [lender_match_page(search=search, page=n, size=2) for n in (1, 2, 3, 4)]
        seen.append((search.status, [page.ready for page in pages], {(p.total, p.ranked) for p in pages}))

    monkeypatch.setattr(runner, "write_matches", spy)
    search = run_search(make_deal(account))
    assert search.status == "completed" and (search.total_matches, search.ranked_matches) == (LENDERS, 5)
    # Page 4 (ranks 7-8) is past the stored top 5: empty and ready from the start.
    assert seen == [("partial", [True, False, False, True], {(LENDERS, 5)}),
                    ("partial", [True, True, False, True], {(LENDERS, 5)}),
                    ("partial", [True, True, True, True], {(LENDERS, 5)})]


def test_a_rerun_of_an_interrupted_search_ends_with_exactly_the_top_n(account, directory, settings,
                                                                      django_capture_on_commit_callbacks):
    settings.LEV_RANKING_TOP_N = 4
    with django_capture_on_commit_callbacks(execute=False):
        search, _ = services.lender_search_start(deal=make_deal(account))
    # What a run killed mid-write leaves: partial, a stale heartbeat, ranks it had written (and a
    # stray one past the top N, as a run under a larger LEV_RANKING_TOP_N would have written).
    stale = timezone.now() - dt.timedelta(seconds=settings.LEV_SEARCH_STALE_SECONDS + 1)
    LenderSearch.objects.filter(pk=search.pk).update(status="partial", run_token="dead", attempts=1,
                                                     heartbeat_at=stale, total_matches=LENDERS, ranked_matches=6)
    lender_ids = list(Lender.objects.order_by("pk").values_list("pk", flat=True))
    LenderMatch.objects.bulk_create([LenderMatch(search=search, rank=r, lender_id=lender_ids[r], score=1)
                                     for r in (1, 2, 6)])
    with django_capture_on_commit_callbacks(execute=True):
        services.lender_search_sweep()
    search = refresh(search)
    assert search.status == "completed" and search.attempts == 2
    assert (search.total_matches, search.ranked_matches) == (LENDERS, 4)
    assert [rank for rank, *_ in stored(search)] == [1, 2, 3, 4]
    assert len({lender for _rank, lender, *_ in stored(search)}) == 4


# --- the purge -------------------------------------------------------------------------------------------
def finished(search: LenderSearch, *, ago: float, status: str = "completed") -> LenderSearch:
    """The search as if it finished `ago` seconds ago, with `status`."""
    LenderSearch.objects.filter(pk=search.pk).update(status=status,
                                                     finished_at=timezone.now() - dt.timedelta(seconds=ago))
    return refresh(search)


@pytest.fixture
def retention(settings) -> int:
    settings.LEV_SEARCH_MATCH_RETENTION_SECONDS = 3600
    return 3600


def test_the_purge_removes_only_superseded_and_failed_searches_past_retention(account, directory, run_search,
                                                                             retention):
    deal, other_deal = make_deal(account), make_deal(account)
    # Run first (oldest first), then age: searches that just finished are never purged.
    old, newer, latest, failed, failed_recently, running = (run_search(deal) for _ in range(6))
    alone = run_search(other_deal)
    old = finished(old, ago=3 * retention)  # superseded by `newer`, both long ago
    newer = finished(newer, ago=2 * retention)  # superseded by `latest`, which finished only just
    latest = finished(latest, ago=10)  # the deal's latest completed search: always kept
    failed = finished(failed, ago=2 * retention, status="failed")
    failed_recently = finished(failed_recently, ago=10, status="failed")
    running = finished(running, ago=2 * retention, status="partial")  # still being written
    alone = finished(alone, ago=5 * retention)  # the other deal's only search
    counts = {s.pk: LenderMatch.objects.filter(search=s).count() for s in (old, newer, latest, failed, running)}
    assert set(counts.values()) == {LENDERS}

    assert tasks.purge_superseded_matches() == 2  # `old` and `failed`
    remaining = {s.pk: LenderMatch.objects.filter(search=s).count()
                 for s in (old, newer, latest, failed, failed_recently, running, alone)}
    assert remaining == {old.pk: 0, newer.pk: LENDERS, latest.pk: LENDERS, failed.pk: 0,
                         failed_recently.pk: LENDERS, running.pk: LENDERS, alone.pk: LENDERS}
    assert refresh(old).matches_purged_at is not None and refresh(failed).matches_purged_at is not None
    assert refresh(newer).matches_purged_at is None and refresh(latest).matches_purged_at is None
    assert tasks.purge_superseded_matches() == 0  # nothing more until `latest` is retention old

    # `newer` stays until `latest` itself finished a retention period ago.
    finished(latest, ago=retention + 1)
    assert services.lender_matches_purge() == 1 and not LenderMatch.objects.filter(search=newer).exists()
    assert LenderMatch.objects.filter(search=latest).count() == LENDERS
    assert lender_search_latest_completed(deal=deal).pk == latest.pk


def test_a_completing_search_purges_its_deals_superseded_searches(account, directory, run_search, settings):
    settings.LEV_SEARCH_MATCH_RETENTION_SECONDS = 0
    deal = make_deal(account)
    first = finished(run_search(deal), ago=5)
    assert LenderMatch.objects.filter(search=first).count() == LENDERS  # the latest: kept
    second = run_search(deal)  # completing it supersedes `first`, at once with no retention
    assert refresh(first).matches_purged_at is not None and not LenderMatch.objects.filter(search=first).exists()
    assert LenderMatch.objects.filter(search=second).count() == LENDERS


def test_the_purge_runs_on_beats_schedule():
    entry = next(e for e in django_settings.CELERY_BEAT_SCHEDULE.values()
                 if e["task"] == "lenders.tasks.purge_superseded_matches")
    assert entry["schedule"] > 0
    assert tasks.purge_superseded_matches.name == entry["task"]


def test_readers_of_a_purged_search_are_told_it_was_replaced(account, api, directory, run_search, retention,
                                                             admin_client):
    deal = make_deal(account)
    old = finished(run_search(deal), ago=3 * retention)
    latest = finished(run_search(deal), ago=2 * retention)
    services.lender_matches_purge()

    body = api.get(f"/api/v1/lender-searches/{old.pk}/").json()
    assert body["status"] == "completed" and body["results"] == [] and body["next"] is None
    assert body["results_removed"] is True and body["superseded_by_search_id"] == latest.pk
    assert body["count"] == LENDERS and body["ranked_count"] == 0
    current = api.get(f"/api/v1/lender-searches/{latest.pk}/").json()
    assert current["results_removed"] is False and current["superseded_by_search_id"] is None
    assert len(current["results"]) == LENDERS

    with pytest.raises(BusinessRuleViolation) as refused:
        placement_services.placements_create(deal=deal, search=refresh(old), top_n=2)
    assert "replaced by a newer search" in refused.value.customer_message
    assert len(placement_services.placements_create(deal=deal, search=latest, top_n=2).created) == 2

    page = admin_client.get(reverse("admin:deals_lendersearch_change", args=[old.pk])).content.decode()
    assert "A newer search of this deal replaced this one" in page
    deal_page = admin_client.get(reverse("admin:deals_deal_change", args=[deal.pk])).content.decode()
    assert f"#{latest.pk}</a>" in deal_page and "Lender 0" in deal_page
