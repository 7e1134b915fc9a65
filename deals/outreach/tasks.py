"""Celery tasks of outreach's delivery (deals.outreach.mail). `deliver_outreach` sends one send's
emails as soon as it is queued (on the embedded default, in-process right after the request commits);
beat's `deliver_due_outreach` (every LEV_OUTREACH_SWEEP_SECONDS) marks the emails a dead worker left
`sending` as "delivery uncertain" and sends every email whose retry has come. Both are safe to run twice
and side by side: each email is claimed under a row lock (SKIP LOCKED) before it is sent."""

from __future__ import annotations

from celery import shared_task

from deals.outreach import mail
from deals.outreach.services import DELIVER_DUE_TASK, DELIVER_TASK
from lev.outages import unless_outage

COMMON = {"acks_late": True, "reject_on_worker_lost": True}


@shared_task(name=DELIVER_TASK, soft_time_limit=100, time_limit=110, **COMMON)
def deliver_outreach(send_id: int) -> int:
    """Send the due emails of one send; returns how many were attempted. While the database is down:
    nothing (beat's run delivers them)."""
    return unless_outage(lambda: mail.deliver_due(send_id=send_id), f"delivering outreach send {send_id}", 0)


@shared_task(name=DELIVER_DUE_TASK, soft_time_limit=100, time_limit=110, **COMMON)
def deliver_due_outreach() -> dict[str, int]:
    """Mark stale `sending` emails (a dead worker's) uncertain, then send every due email."""
    def run() -> dict[str, int]:
        return {"uncertain": mail.sweep_stale(), "attempted": mail.deliver_due()}

    return unless_outage(run, "outreach delivery", {"uncertain": 0, "attempted": 0})
