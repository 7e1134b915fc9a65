"""Celery tasks of lender discovery. Each takes ids, calls one service and is safe to run twice.

All are `acks_late` with `reject_on_worker_lost`: a job whose worker dies is delivered again,
and the claim in `services.lender_search_run` makes a duplicate delivery a no-op. A search whose
worker died mid-run is found by `sweep_stale_searches` (scheduled every minute, see
CELERY_BEAT_SCHEDULE) through its stale heartbeat and re-queued, or failed after
LEV_SEARCH_MAX_ATTEMPTS. Time limits need the prefork pool (the solo pool cannot enforce them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from celery import shared_task
from django.conf import settings

from lenders import services
from lenders.activity import lender_activity_recompute
from lev.outages import is_dependency_outage, report_outage

COMMON = {"acks_late": True, "reject_on_worker_lost": True}
T = TypeVar("T")


def _unless_outage(work: Callable[[], T], what: str, nothing_done: T) -> T:
    """Periodic work, run now. While the database (or broker) is down there is nothing to do: the
    outage is reported (once per interval), the connection it broke is dropped so the next run
    connects afresh, and `nothing_done` is returned. Any other error is a bug and is raised."""
    try:
        return work()
    except Exception as exc:
        if not is_dependency_outage(exc):
            raise
        report_outage(exc, what)
        services.drop_broken_connection()
        return nothing_done


@shared_task(
    bind=True, name="lenders.tasks.run_lender_search", max_retries=3,
    soft_time_limit=settings.LEV_SEARCH_SOFT_TIME_LIMIT, time_limit=settings.LEV_SEARCH_TIME_LIMIT, **COMMON,
)
def run_lender_search(self, search_id: int) -> dict[str, Any] | None:
    """Rank lenders for one LenderSearch. Transient database errors retry with backoff; the
    retry keeps the task id, which lets it take over the search its own attempt left behind."""
    owner = self.request.id
    try:
        stats = services.lender_search_run(search_id=search_id, owner=owner)
    except services.TRANSIENT_DB_ERRORS as exc:
        if self.request.retries >= self.max_retries:
            services.lender_search_give_up(search_id=search_id, owner=owner)
            return None
        raise self.retry(exc=exc, countdown=2 ** self.request.retries) from exc
    if stats is None:
        return None
    return {"candidates": stats.candidates, "matches": stats.matches, "timings_ms": stats.timings_ms}


@shared_task(name="lenders.tasks.sweep_stale_searches", soft_time_limit=30, time_limit=40, **COMMON)
def sweep_stale_searches() -> dict[str, int]:
    """Re-queue (or fail) searches whose worker died or whose job never started. While the database
    (or broker) is down there is nothing to sweep: the next run, seconds later, does it."""
    return _unless_outage(services.lender_search_sweep, "stale-search sweep", {"requeued": 0, "failed": 0})


@shared_task(name="lenders.tasks.purge_superseded_matches", soft_time_limit=100, time_limit=110, **COMMON)
def purge_superseded_matches() -> int:
    """Delete the stored matches of searches nobody reads any more: superseded by a newer completed
    search of the same deal, or failed, past LEV_SEARCH_MATCH_RETENTION_SECONDS (see
    services.purgeable_searches). Returns the number of searches purged. While the database is down
    there is nothing to do: the next run does it."""
    return _unless_outage(services.lender_matches_purge, "purge of superseded lender matches", 0)


@shared_task(name="lenders.tasks.refresh_lender_activity", soft_time_limit=100, time_limit=110, **COMMON)
def refresh_lender_activity() -> int:
    """Recompute every lender's activity signals per market (quotes and closings in 90 days, median
    response hours) from placements and term sheets, and their scores (lenders.activity). While the
    database is down there is nothing to do: the next run does it."""
    return _unless_outage(lender_activity_recompute, "lender activity recompute", 0)
