"""Celery task of placements: the lender activity signals computed from them (deals.placements.activity)."""

from __future__ import annotations

from celery import shared_task

from deals.placements.activity import lender_activity_recompute
from lev.outages import unless_outage


# The name it had under lenders.tasks: the beat schedule and jobs already queued keep reaching it.
@shared_task(name="lenders.tasks.refresh_lender_activity", soft_time_limit=100, time_limit=110, acks_late=True,
             reject_on_worker_lost=True)
def refresh_lender_activity() -> int:
    """Recompute every lender's activity signals per market (quotes and closings in 90 days, median
    response hours) from placements and term sheets, and their scores (deals.placements.activity). While the
    database is down there is nothing to do: the next run does it."""
    return unless_outage(lender_activity_recompute, "lender activity recompute", 0)
