"""Celery tasks of lender discovery. Each takes ids, calls one service and is safe to run twice.

All are `acks_late` with `reject_on_worker_lost`: a job whose worker dies is delivered again,
and the claim in `services.lender_search_run` makes a duplicate delivery a no-op. A search whose
worker died mid-run is found by `sweep_stale_searches` (run by beat every LEV_SEARCH_SWEEP_SECONDS,
5 s by default: CELERY_BEAT_SCHEDULE) through its stale heartbeat and re-queued, or failed after
LEV_SEARCH_MAX_ATTEMPTS. Time limits need the prefork pool (the solo pool cannot enforce them).

`run_lender_search` takes its time limits (LEV_SEARCH_SOFT_TIME_LIMIT, LEV_SEARCH_TIME_LIMIT) from
its message, where `services.enqueue_search` puts them from the settings when it queues the job (a
retry keeps its message's limits). They are not decorator arguments: those are read once, at import,
so a changed setting (a test's override_settings) would never reach the job.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from deals.searches import services, signals
from lev.outages import unless_outage

COMMON = {"acks_late": True, "reject_on_worker_lost": True}


@shared_task(bind=True, name=services.RUN_SEARCH_TASK, max_retries=3, **COMMON)
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
    return unless_outage(services.lender_search_sweep, "stale-search sweep", {"requeued": 0, "failed": 0})


@shared_task(name="lenders.tasks.purge_superseded_matches", soft_time_limit=100, time_limit=110, **COMMON)
def purge_superseded_matches() -> int:
    """Delete the stored matches of searches nobody reads any more: superseded by a newer completed
    search of the same deal, or failed, past LEV_SEARCH_MATCH_RETENTION_SECONDS (see
    services.purgeable_searches). Returns the number of searches purged. While the database is down
    there is nothing to do: the next run does it."""
    return unless_outage(services.lender_matches_purge, "purge of superseded lender matches", 0)


@shared_task(name="lenders.tasks.refresh_lender_signals", soft_time_limit=100, time_limit=110, **COMMON)
def refresh_lender_signals() -> int:
    """Recompute every account's lender signals, and the pooled ones, from placements
    (deals.searches.ranking.evidence): periodic (beat, LEV_SIGNALS_REFRESH_SECONDS) and soon after new
    outcomes (debounced: signals.schedule_refresh). A refresh that fails leaves the previous signals in
    place; it is logged and recorded for /health. Returns the rows written (0 when nothing was done)."""
    return signals.refresh_now()
