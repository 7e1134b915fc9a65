"""The lender signals' life: refreshed now (the task, `manage.py refresh_lender_signals`), soon after new
outcomes (debounced), and how fresh they are (/health). What they hold and how they are computed is
`deals.searches.ranking.evidence`.

A refresh that fails — the database cut mid-way, the worker killed — rolls back as one transaction, so
the previous signals stay in place and a search never reads half-written ones. The failure is logged,
recorded on the SignalRefresh row where the database still answers, and /health says `failed` (the
last attempt failed) or `stale` (the last success is older than LEV_SIGNALS_STALE_SECONDS).
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from deals.searches.ranking.evidence import refresh_lender_signals
from lev.celery_app import app as celery_app
from lev.outages import TRANSIENT_DB_ERRORS, drop_broken_connection, is_dependency_outage, report_outage

logger = logging.getLogger(__name__)

REFRESH_TASK = "lenders.tasks.refresh_lender_signals"
DEBOUNCE_KEY = "lev:signals:refresh-scheduled"


def refresh_now() -> int:
    """Refresh every account's signals; the rows written, or 0 when the refresh failed (logged and
    recorded; the previous signals stay in place). A bug is raised, as every bug is."""
    try:
        return refresh_lender_signals().rows
    except Exception as exc:
        outage = is_dependency_outage(exc)
        if outage:
            report_outage(exc, "lender signals refresh; the previous signals stay in place")
            drop_broken_connection()
        else:
            logger.exception("Lender signals refresh failed; the previous signals stay in place")
        _record_failure("the database was unavailable" if outage else "an internal error")
        if not outage:
            raise
        return 0


FAILURE_KEY = "lev:signals:last-failure"


def _record_failure(reason: str) -> None:
    """On the SignalRefresh row; while the database is still away, in the shared cache (Redis where
    configured: the web processes' /health reads it), so the failure is said either way."""
    from lenders.models import SignalRefresh

    now = timezone.now()
    try:
        SignalRefresh.objects.update_or_create(pk=1, defaults={"failed_at": now, "failure": reason})
        return
    except TRANSIENT_DB_ERRORS:
        drop_broken_connection()
    try:
        cache.set(FAILURE_KEY, {"at": now.isoformat(), "reason": reason}, timeout=None)
    except Exception as exc:  # the cache is away too: the log has said it
        report_outage(exc, "recording a failed lender signals refresh")


def schedule_refresh() -> None:
    """After the current transaction commits, refresh the signals LEV_SIGNALS_DEBOUNCE_SECONDS from now,
    once however many outcomes arrive meanwhile (a key in the shared cache holds the slot). A broker or
    cache that cannot be reached costs nothing but the wait for the periodic refresh."""
    transaction.on_commit(_schedule)


def _schedule() -> None:
    delay = max(0, int(settings.LEV_SIGNALS_DEBOUNCE_SECONDS))
    try:
        if not cache.add(DEBOUNCE_KEY, 1, timeout=max(1, delay)):
            return  # a refresh is already scheduled within the window
        celery_app.tasks[REFRESH_TASK].apply_async(countdown=delay)
    except Exception as exc:
        if not is_dependency_outage(exc):
            logger.exception("Could not schedule a lender signals refresh; the periodic one will do it")
        else:
            report_outage(exc, "scheduling a lender signals refresh; the periodic one will do it")


def _when(failure: dict[str, str]) -> dt.datetime:
    return dt.datetime.fromisoformat(failure["at"])


def freshness() -> dict[str, Any]:
    """/health's `lender_signals`: status `fresh`, `stale` (older than LEV_SIGNALS_STALE_SECONDS),
    `failed` (the last attempt failed after the last success) or `never`, with when."""
    from lenders.models import SignalRefresh

    row = SignalRefresh.objects.filter(pk=1).values("finished_at", "failed_at", "failure").first() or {}
    finished = row.get("finished_at")
    failure = ({"at": row["failed_at"].isoformat(), "reason": row["failure"]} if row.get("failed_at") else None)
    try:
        cached = cache.get(FAILURE_KEY)
    except Exception:  # the cache is away: the database's record alone
        cached = None
    if cached and (failure is None or _when(cached) > _when(failure)):
        failure = cached
    age = None if finished is None else int((timezone.now() - finished).total_seconds())
    if failure is not None and (finished is None or _when(failure) > finished):
        status = "failed"
    elif finished is None:
        status = "never"
    else:
        status = "stale" if age > settings.LEV_SIGNALS_STALE_SECONDS else "fresh"
    return {"status": status, "refreshed_at": finished.isoformat() if finished else None, "age_seconds": age,
            "last_failure": failure if status == "failed" else None}
