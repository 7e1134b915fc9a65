"""Celery tasks of the history import job (deals.history.jobs). `acks_late` with
`reject_on_worker_lost`: a job whose worker dies is delivered again, and the claim makes a duplicate
delivery a no-op; a job whose worker died is also found by `sweep_history_imports` (beat, every
LEV_HISTORY_SWEEP_SECONDS) through its stale heartbeat. The run's time limits travel in its message
(jobs._enqueue), as the lender search's do."""

from __future__ import annotations

from celery import shared_task

from deals.history import jobs
from lev.outages import unless_outage

COMMON = {"acks_late": True, "reject_on_worker_lost": True}


@shared_task(bind=True, name=jobs.RUN_IMPORT_TASK, max_retries=3, **COMMON)
def run_history_import(self, job_id: int) -> str | None:
    """Run one history import job. Transient database errors retry with backoff; the retry keeps the
    task id, which lets it take over the job its own attempt left running."""
    owner = self.request.id
    try:
        return jobs.import_run(job_id=job_id, owner=owner)
    except jobs.TRANSIENT_DB_ERRORS as exc:
        if self.request.retries >= self.max_retries:
            jobs.import_give_up(job_id=job_id, owner=owner)
            return None
        raise self.retry(exc=exc, countdown=2 ** self.request.retries) from exc


@shared_task(name="deals.tasks.sweep_history_imports", soft_time_limit=30, time_limit=40, **COMMON)
def sweep_history_imports() -> dict[str, int]:
    """Re-queue (or fail) history imports whose worker died or whose job never started; delete the
    stored files of finished ones past retention. While the database is down: nothing, next run."""
    return unless_outage(jobs.import_sweep, "history import sweep", {"requeued": 0, "failed": 0, "files_deleted": 0})
