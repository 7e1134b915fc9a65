"""Lender search lifecycle: searchability, reuse vs invalidation, crashes, the sweep, failures."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.db import OperationalError
from django.utils import timezone

from deals import services as deal_services
from deals.models import DealProperty
from deals.searches import services, tasks
from deals.searches.models import LenderMatch, LenderSearch
from deals.searches.ranking import DealCriteria, runner
from lenders.activity import activity_score, activity_score_expression
from lenders.models import LenderActivity
from lev.errors import UPSTREAM_MESSAGE, BusinessRuleViolation
from tests.deals.searches.factories import LenderActivityFactory, lender_with, make_deal, refresh

pytestmark = pytest.mark.django_db


class WorkerKilled(BaseException):
    """Stands in for SIGKILL: nothing in the run can catch it or clean up after it."""


@pytest.fixture
def directory(db):
    return [lender_with(f"Lender {n}") for n in range(5)]


@pytest.fixture
def start(django_capture_on_commit_callbacks):
    """lender_search_start that also runs the queued job, like the embedded (eager) setup."""

    def run(deal, *, execute: bool = True) -> tuple[LenderSearch, bool]:
        with django_capture_on_commit_callbacks(execute=execute) as callbacks:
            search, created = services.lender_search_start(deal=deal)
        run.queued += len(callbacks)
        return refresh(search), created

    run.queued = 0
    return run


def ranks(search: LenderSearch) -> list[int]:
    return list(LenderMatch.objects.filter(search=search).order_by("rank").values_list("rank", flat=True))


def age(search: LenderSearch, **fields_seconds_ago: int) -> None:
    """Move timestamps of the search into the past (time passing without sleeping)."""
    now = timezone.now()
    LenderSearch.objects.filter(pk=search.pk).update(
        **{name: now - dt.timedelta(seconds=seconds) for name, seconds in fields_seconds_ago.items()})


# --- searchability ---------------------------------------------------------------------------------
def test_a_deal_without_loan_amount_or_property_says_exactly_what_is_missing(account):
    deal = make_deal(account, states=(), asset_types=(), loan_amount=None)
    with pytest.raises(BusinessRuleViolation) as caught:
        services.lender_search_start(deal=deal)
    error = caught.value
    assert error.code == "BUSINESS_RULE" and error.http_status == 409
    assert error.message == (f"Not allowed: deal {deal.pk} is not ready for a lender search: "
                             "it needs a loan amount and at least one property")
    assert error.customer_message == ("This deal can't be matched with lenders yet. Add a loan amount and at "
                                      "least one property, then search again.")
    assert error.details["missing"] == ["a loan amount", "at least one property"]
    assert not LenderSearch.objects.exists()


def test_a_property_without_state_or_asset_type_is_named(account):
    deal = make_deal(account)
    prop = DealProperty.objects.create(deal=deal, name="Annex", state="", asset_type="")
    with pytest.raises(BusinessRuleViolation) as caught:
        services.lender_search_start(deal=deal)
    assert caught.value.customer_message == (
        f"This deal can't be matched with lenders yet. Add state and asset type of property 'Annex' "
        f"(id {prop.pk}), then search again.")


def test_an_archived_deal_cannot_be_searched(account):
    deal = deal_services.deal_archive(deal=make_deal(account))
    with pytest.raises(BusinessRuleViolation, match="archived"):
        services.lender_search_start(deal=deal)


# --- reuse vs invalidation -------------------------------------------------------------------------
def test_a_recent_search_of_the_unchanged_deal_is_reused(account, directory, start):
    deal = make_deal(account)
    first, created = start(deal)
    again, created_again = start(deal)
    assert created and not created_again
    assert again.pk == first.pk and again.status == "completed"
    assert start.queued == 1  # no second job
    assert LenderSearch.objects.count() == 1


def test_adding_a_property_invalidates_the_cached_search(account, directory, start):
    deal = make_deal(account)
    first, _ = start(deal)
    deal_services.deal_property_create(deal=deal, data={"name": "Tulsa Flats", "state": "OK",
                                                        "asset_type": "multifamily"})
    second, created = start(deal)
    assert created and second.pk != first.pk
    assert second.deal_version == first.deal_version + 1
    assert second.criteria["states"] == ["OK", "TX"]  # the new property counts at once
    assert second.criteria["property_count"] == 2
    # The directory's programs cover TX only (factory default: nationwide) — still all match.
    assert second.total_matches == 5


def test_changing_financials_or_the_loan_invalidates_too(account, directory, start):
    deal = make_deal(account)
    first, _ = start(deal)
    deal_services.deal_financials_update(deal=deal, data={"estimated_value": Decimal("20000000")})
    second, created = start(deal)
    assert created and second.criteria["ltv"] == 50.0
    deal_services.deal_update(deal=deal, data={"loan_amount": Decimal("12000000")})
    third, created = start(deal)
    assert created and third.criteria["loan_amount"] == 12_000_000
    assert len({first.pk, second.pk, third.pk}) == 3


def test_old_failed_or_stuck_searches_are_not_reused(account, directory, start, settings):
    deal = make_deal(account)
    old, _ = start(deal)
    age(old, created_at=settings.LEV_SEARCH_REUSE_SECONDS + 1)
    newer, created = start(deal)
    assert created and newer.pk != old.pk

    LenderSearch.objects.filter(pk=newer.pk).update(status="failed", error_code="INTERNAL_ERROR")
    after_failure, created = start(deal)
    assert created and after_failure.pk != newer.pk

    LenderSearch.objects.filter(pk=after_failure.pk).update(status="running")
    age(after_failure, heartbeat_at=settings.LEV_SEARCH_STALE_SECONDS + 1)
    after_stuck, created = start(deal)
    assert created and after_stuck.pk != after_failure.pk


# --- runs are idempotent ------------------------------------------------------------------------------
def test_running_a_finished_search_again_changes_nothing(account, directory, start):
    search, _ = start(make_deal(account))
    before = list(LenderMatch.objects.filter(search=search).values_list("id", "rank", "lender_id"))
    assert services.lender_search_run(search_id=search.pk) is None
    tasks.run_lender_search.delay(search.pk)
    assert list(LenderMatch.objects.filter(search=search).values_list("id", "rank", "lender_id")) == before
    assert refresh(search).attempts == 1


# --- worker crash, the sweep, recovery ----------------------------------------------------------------
def test_a_worker_killed_mid_job_leaves_a_search_the_sweep_reruns(account, directory, start, settings,
                                                                  monkeypatch, django_capture_on_commit_callbacks):
    settings.LEV_SEARCH_WRITE_CHUNK = 2
    search, _ = start(make_deal(account), execute=False)
    calls = []

    def dies_on_second_chunk(rows):
        calls.append(len(rows))
        if len(calls) == 2:
            raise WorkerKilled
        original(rows)

    original = runner.write_matches
    monkeypatch.setattr(runner, "write_matches", dies_on_second_chunk)
    with pytest.raises(WorkerKilled):
        services.lender_search_run(search_id=search.pk)
    monkeypatch.setattr(runner, "write_matches", original)

    killed = refresh(search)
    assert killed.status == "partial" and ranks(killed) == [1, 2]  # chunk 1 committed, then death
    # While its heartbeat is fresh, the job may still be alive: the sweep leaves it alone.
    assert services.lender_search_sweep() == {"requeued": 0, "failed": 0}
    # A redelivered job does not run it twice either.
    assert services.lender_search_run(search_id=search.pk) is None

    age(search, heartbeat_at=settings.LEV_SEARCH_STALE_SECONDS + 1)
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.sweep_stale_searches() == {"requeued": 1, "failed": 0}
    rerun = refresh(search)
    assert rerun.status == "completed" and rerun.attempts == 2
    assert ranks(rerun) == [1, 2, 3, 4, 5]  # rewritten from scratch: no duplicates, no gaps
    assert LenderMatch.objects.filter(search=search).values("lender").distinct().count() == 5


def test_a_search_that_keeps_losing_its_worker_is_failed_not_requeued(account, directory, start, settings):
    search, _ = start(make_deal(account), execute=False)
    LenderSearch.objects.filter(pk=search.pk).update(status="running", attempts=settings.LEV_SEARCH_MAX_ATTEMPTS,
                                                     run_token="dead")
    age(search, heartbeat_at=settings.LEV_SEARCH_STALE_SECONDS + 1)
    assert services.lender_search_sweep() == {"requeued": 0, "failed": 1}
    failed = refresh(search)
    assert failed.status == "failed" and failed.error_code == "UPSTREAM_UNAVAILABLE"
    assert failed.error_message.startswith(UPSTREAM_MESSAGE)
    assert "ranking worker lost" in failed.error_message
    # Re-runnable: the deal can be searched again at once (a failed search is never reused).
    again, created = start(search.deal)
    assert created and again.status == "completed"


def test_a_job_the_broker_lost_is_queued_again(account, directory, start, settings,
                                               django_capture_on_commit_callbacks):
    search, _ = start(make_deal(account), execute=False)  # queued, but the message never ran
    age(search, queued_at=settings.LEV_SEARCH_STALE_SECONDS + 1)
    with django_capture_on_commit_callbacks(execute=True):
        assert services.lender_search_sweep() == {"requeued": 1, "failed": 0}
    assert refresh(search).status == "completed"


def test_a_search_pending_for_too_long_is_failed(account, directory, start, settings):
    search, _ = start(make_deal(account), execute=False)
    stale = settings.LEV_SEARCH_STALE_SECONDS
    # Pending well past the stale cutoff but not past the give-up time: queued again, not failed.
    age(search, queued_at=stale + 1, created_at=settings.LEV_SEARCH_PENDING_GIVE_UP_SECONDS - 60)
    assert services.lender_search_sweep() == {"requeued": 1, "failed": 0}
    age(search, queued_at=stale + 1, created_at=settings.LEV_SEARCH_PENDING_GIVE_UP_SECONDS + 1)
    assert services.lender_search_sweep() == {"requeued": 0, "failed": 1}
    assert refresh(search).status == "failed"


def test_a_stalled_run_that_wakes_up_after_being_replaced_writes_nothing(account, directory, start, settings,
                                                                         django_capture_on_commit_callbacks):
    search, _ = start(make_deal(account), execute=False)
    stalled_token = services._claim(search.pk)
    age(search, heartbeat_at=settings.LEV_SEARCH_STALE_SECONDS + 1)
    with django_capture_on_commit_callbacks(execute=True):
        services.lender_search_sweep()
    assert refresh(search).status == "completed"
    before = list(LenderMatch.objects.filter(search=search).values_list("id", flat=True))

    with pytest.raises(runner.LostOwnership):
        runner.RankingRun(search.pk, stalled_token, DealCriteria.from_dict(search.criteria)).run()
    assert list(LenderMatch.objects.filter(search=search).values_list("id", flat=True)) == before
    assert refresh(search).status == "completed"


# --- failures are recorded in the contract's terms -------------------------------------------------------
def test_an_unexpected_error_fails_the_search_without_leaking_internals(account, directory, start, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("secret internals: connection string postgres://x")

    monkeypatch.setattr(runner, "describe_top", broken)
    search, _ = start(make_deal(account))
    assert search.status == "failed" and search.error_code == "INTERNAL_ERROR"
    assert search.error_message == f"Internal error: lender search {search.pk} failed unexpectedly."
    assert search.finished_at is not None and not LenderMatch.objects.filter(search=search).exists()


def test_a_job_over_its_time_limit_fails_as_retryable(account, directory, start, monkeypatch):
    def too_slow(*args, **kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(runner, "rank_search", too_slow)
    search, _ = start(make_deal(account))
    assert search.status == "failed" and search.error_code == "UPSTREAM_UNAVAILABLE"
    assert search.error_message.startswith(UPSTREAM_MESSAGE)


def test_transient_database_errors_are_retried_by_the_task(account, directory, start, monkeypatch):
    failures = []
    original = runner.rank_search

    def flaky(*args, **kwargs):
        if not failures:
            failures.append(1)
            raise OperationalError("server closed the connection unexpectedly")
        return original(*args, **kwargs)

    monkeypatch.setattr(runner, "rank_search", flaky)
    search, _ = start(make_deal(account))
    search = refresh(search)
    assert search.status == "completed" and search.attempts == 2 and ranks(search) == [1, 2, 3, 4, 5]


def test_a_database_that_stays_down_fails_the_search_as_retryable(account, directory, start, monkeypatch):
    def down(*args, **kwargs):
        raise OperationalError("could not connect to server")

    monkeypatch.setattr(runner, "rank_search", down)
    search, _ = start(make_deal(account))
    assert search.status == "failed" and search.error_code == "UPSTREAM_UNAVAILABLE"
    assert search.attempts == tasks.run_lender_search.max_retries + 1


# --- activity signals --------------------------------------------------------------------------------------
def test_activity_refresh_recomputes_every_score_from_its_counts(db):
    rows = [
        LenderActivityFactory(quotes_90d=0, closings_90d=0, avg_response_hours=None, score=0.9),
        LenderActivityFactory(quotes_90d=40, closings_90d=9, avg_response_hours=1.0, score=0),
        LenderActivityFactory(quotes_90d=7, closings_90d=2, avg_response_hours=50.0, score=0),
        LenderActivityFactory(quotes_90d=12, closings_90d=1, avg_response_hours=200.0, score=0),
    ]
    # The score step of the recompute (deals.placements.activity, tested in test_activity.py), on its own.
    assert LenderActivity.objects.update(score=activity_score_expression()) == 4
    for row in rows:
        fresh = LenderActivity.objects.get(pk=row.pk)
        assert fresh.score == pytest.approx(activity_score(row.quotes_90d, row.closings_90d,
                                                           row.avg_response_hours))
