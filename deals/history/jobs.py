"""The history import as a background job: the upload stored on a private storage
(STORAGES["history_imports"]), a HistoryImport row, and a Celery task (deals.history.tasks) that runs
`deals.history.services.history_import` on it.

Claim, heartbeat and sweep as lender searches have them (deals.searches.services): the run claims the
job (queued; running with a stale heartbeat, its worker died; or running under its own task id, a
redelivery), a thread of the run beats `heartbeat_at` on its own database connection every
LEV_HISTORY_HEARTBEAT_SECONDS while the import's one transaction is open, and `import_sweep` (beat)
re-queues a job whose heartbeat is older than LEV_HISTORY_STALE_SECONDS (or fails it after
LEV_HISTORY_MAX_ATTEMPTS). The job's final row is written in the import's own transaction: the rows
and "done" commit together, or neither does; a worker killed mid-import leaves nothing written.

Progress: the import's rows are invisible to anyone else until it commits, so its figures so far are
published to the cache (`progress_of`), keyed by the job; the row holds the final ones.

One import of an account at a time: a job that finds another import of its account running
(`ImportBusy`) goes back to the queue and runs again LEV_HISTORY_BUSY_RETRY_SECONDS later.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import logging
import threading
import uuid
from pathlib import Path
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from deals.history.errors import HistoryRefused, ImportBusy
from deals.history.export import inert
from deals.history.models import HistoryImport
from deals.history.reader import TableError
from deals.history.services import PROBLEMS_KEPT, ImportResult, history_import
from lev.celery_app import app as celery_app
from lev.errors import ValidationFailed
from lev.outages import TRANSIENT_DB_ERRORS, drop_broken_connection, is_dependency_outage, report_outage

logger = logging.getLogger(__name__)

Status = HistoryImport.Status
FINISHED = (Status.DONE, Status.REFUSED, Status.FAILED)
# The task that runs a job, sent by its name (deals.history.tasks imports this module, not the reverse).
RUN_IMPORT_TASK = "deals.tasks.run_history_import"
PLAN_KEPT = 500
OWNER_TAG_LEN = 16
PROGRESS_KEYS = ("rows_read", "rows_refused", "deals_created", "placements_created", "term_sheets_created")
NOT_QUEUED = ("Queued: the job queue cannot be reached just now; the import starts as soon as it answers "
              "again.")
BUSY = "Waiting: another history import of this account is running; this one starts when it has finished."
FAILED_MESSAGE = "The import stopped before finishing; nothing was imported. Try it again."
TIMED_OUT = "The import took too long and was stopped; nothing was imported. Split the file and import each part."
WORKER_LOST = ("The import's worker stopped {n} time(s) before finishing; nothing was imported. "
               "Try it again, or split the file.")
NEVER_STARTED = "The import could not be started (the job queue did not answer); nothing was imported. Try it again."


# --- Starting ---------------------------------------------------------------------------------------
def _check_upload(upload) -> None:
    size = upload.size or 0
    limit = settings.LEV_HISTORY_UPLOAD_MAX_BYTES
    if size > limit:
        error = ValidationFailed({"file": [f"must be at most {limit} bytes"]})
        error.http_status = 413
        raise error
    if not size:
        raise ValidationFailed({"file": ["is empty"]})


def _clean_mapping(mapping: dict[str, int] | None) -> dict[str, int]:
    return {str(name): int(lender_id) for name, lender_id in (mapping or {}).items()}


def import_start(*, account, user, upload, dry_run: bool = False, mapping: dict[str, int] | None = None,
                 new_lenders: list[str] | None = None) -> HistoryImport:
    """Store the uploaded history file and queue its import (a preview with `dry_run`). `upload`: a
    Django UploadedFile or File. Returns the job, queued; the task runs once this transaction commits.
    A broker that cannot be reached leaves it queued ("not queued"), and the sweep queues it later."""
    _check_upload(upload)
    # The name as the user's system gave it, without control characters (a NUL cannot be stored).
    given = "".join(ch for ch in Path(getattr(upload, "name", "") or "").name if ch.isprintable())
    file_name = given[:255] or "history.csv"
    job = HistoryImport(account=account, created_by=user if getattr(user, "pk", None) else None,
                        file_name=file_name, size=upload.size, dry_run=dry_run, mapping=_clean_mapping(mapping),
                        new_lenders=list(new_lenders or []), queued_at=timezone.now())
    with transaction.atomic():
        job.file.save(file_name, upload, save=False)
        try:
            job.save()
        except BaseException:
            job.file.delete(save=False)
            raise
        transaction.on_commit(lambda: _enqueue(job.pk))
    return job


def import_again(*, job: HistoryImport, user, dry_run: bool = False, mapping: dict[str, int] | None = None,
                 new_lenders: list[str] | None = None) -> HistoryImport:
    """A new job on the file `job` stored: apply what was previewed, or the same file with names mapped
    (`mapping` and `new_lenders` replace the earlier job's). Refused (VALIDATION_ERROR) once the file is
    gone: deleted after an applied import finished, or past LEV_HISTORY_FILE_RETENTION_SECONDS."""
    if not job.file or not job.file.storage.exists(job.file.name):
        raise ValidationFailed({"file": ["is no longer kept for this import; upload it again"]},
                               message="Validation failed: the file of this import is no longer kept; upload it again")
    if job.status in (Status.QUEUED, Status.RUNNING) and not job.dry_run:
        raise ValidationFailed({"import": ["is still running; wait for it to finish"]},
                               message=f"Validation failed: import {job.pk} is still running; wait for it to finish")
    again = HistoryImport(account_id=job.account_id, created_by=user if getattr(user, "pk", None) else None,
                          file_name=job.file_name, size=job.size, dry_run=dry_run,
                          mapping=_clean_mapping(job.mapping if mapping is None else mapping),
                          new_lenders=list(job.new_lenders if new_lenders is None else new_lenders),
                          queued_at=timezone.now())
    again.file.name = job.file.name  # the same stored file, not a copy
    with transaction.atomic():
        again.save()
        transaction.on_commit(lambda: _enqueue(again.pk))
    return again


def _enqueue(job_id: int, countdown: float | None = None) -> None:
    """Hand the job to the broker now (on commit). A broker that is down is no error of the caller:
    the job stays queued with `queued_at` cleared and a message, and the sweep queues it. A later run
    (`countdown`) where jobs run in-process is left to the sweep: run now it would find the same lock."""
    if countdown and celery_app.conf.task_always_eager:
        return
    try:
        celery_app.tasks[RUN_IMPORT_TASK].apply_async(
            (job_id,), countdown=countdown, soft_time_limit=settings.LEV_HISTORY_SOFT_TIME_LIMIT,
            time_limit=settings.LEV_HISTORY_TIME_LIMIT)
    except Exception as exc:
        if is_dependency_outage(exc):
            report_outage(exc, f"queueing history import {job_id}; the sweep queues it when the broker is back")
        else:
            logger.exception("Could not queue history import %s; the sweep queues it later", job_id)
        try:
            HistoryImport.objects.filter(pk=job_id, status=Status.QUEUED).update(queued_at=None, message=NOT_QUEUED)
        except TRANSIENT_DB_ERRORS:
            logger.exception("Could not mark history import %s as not queued", job_id)


# --- Progress --------------------------------------------------------------------------------------
def _progress_key(job_id: int) -> str:
    return f"history-import:{job_id}:progress"


def progress_of(job: HistoryImport) -> dict[str, int]:
    """The job's figures: while it runs, what its run published so far (its rows are not committed
    yet); otherwise the row's."""
    figures = {key: getattr(job, key) for key in PROGRESS_KEYS}
    if job.status == Status.RUNNING:
        try:
            published = cache.get(_progress_key(job.pk))
        except Exception as exc:  # the cache is down: the row's figures (zero) are all there is
            report_outage(exc, f"reading the progress of history import {job.pk}")
            published = None
        if isinstance(published, dict):
            figures.update({key: int(published.get(key, figures[key])) for key in PROGRESS_KEYS})
    return figures


class _Run:
    """What one claimed run of a job publishes while its transaction is open: its progress (cache) and
    its heartbeat (the job row, from a thread with a connection of its own)."""

    def __init__(self, job_id: int, token: str) -> None:
        self.job_id, self.token = job_id, token
        self.figures = dict.fromkeys(PROGRESS_KEYS, 0)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def progress(self, figures: dict[str, int]) -> None:
        self.figures.update(figures)
        try:
            cache.set(_progress_key(self.job_id), dict(self.figures), timeout=settings.LEV_HISTORY_STALE_SECONDS * 4)
        except Exception as exc:  # progress is a courtesy: the import goes on without it
            report_outage(exc, f"publishing the progress of history import {self.job_id}")

    def _beat(self) -> None:
        try:
            while not self._stop.wait(settings.LEV_HISTORY_HEARTBEAT_SECONDS):
                try:
                    HistoryImport.objects.filter(pk=self.job_id, run_token=self.token).update(
                        heartbeat_at=timezone.now())
                except TRANSIENT_DB_ERRORS as exc:
                    drop_broken_connection()
                    report_outage(exc, f"the heartbeat of history import {self.job_id}")
        finally:
            connection.close()  # this thread's own connection

    def __enter__(self) -> _Run:
        # SQLite (the embedded setup) takes one writer at a time: the import's transaction would lock
        # the heartbeat out; there the job runs in-process and no sweep looks at it while it does.
        if connection.vendor != "sqlite":
            self._thread = threading.Thread(target=self._beat, name=f"history-import-{self.job_id}", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __exit__(self, *exc) -> None:
        self.stop()
        try:
            cache.delete(_progress_key(self.job_id))
        except Exception as error:
            report_outage(error, f"clearing the progress of history import {self.job_id}")


# --- Running ---------------------------------------------------------------------------------------
def _owner_tag(owner: str) -> str:
    return hashlib.sha256(owner.encode()).hexdigest()[:OWNER_TAG_LEN]


def _stale_cutoff(now: dt.datetime) -> dt.datetime:
    return now - dt.timedelta(seconds=settings.LEV_HISTORY_STALE_SECONDS)


def _claim(job_id: int, owner: str | None) -> str | None:
    """Take the job for a run (deals.searches.services._claim's rule): queued; running with a stale
    heartbeat; or running under a token of the same owner (a redelivered or retried task). Returns the
    run's token, or None when there is nothing to run."""
    now = timezone.now()
    tag = _owner_tag(owner) if owner else None
    token = (tag or "") + uuid.uuid4().hex[len(tag or ""):]
    claimable = Q(status=Status.QUEUED) | Q(status=Status.RUNNING, heartbeat_at__lt=_stale_cutoff(now))
    if tag:
        claimable |= Q(status=Status.RUNNING, run_token__startswith=tag)
    claimed = HistoryImport.objects.filter(claimable, pk=job_id).update(
        status=Status.RUNNING, run_token=token, attempts=F("attempts") + 1, started_at=now, heartbeat_at=now,
        finished_at=None, message="", **dict.fromkeys(PROGRESS_KEYS, 0))
    return token if claimed else None


def _summary(result: ImportResult) -> dict[str, Any]:
    return {
        "kind": result.kind, "encoding": result.encoding, "rows": result.rows, "deals": result.deals,
        "deals_existing": result.deals_existing, "rows_skipped": result.rows_skipped,
        "properties": result.properties, "financials": result.financials, "placements": result.placements,
        "term_sheets": result.term_sheets, "won": result.won, "new_lenders": list(result.new_lenders),
        "problems_total": result.problems_total,
        "unresolved": [{"name": resolution.name, "first_line": line, "rows": rows,
                        "candidates": [{"id": pk, "name": name} for pk, name in resolution.candidates]}
                       for resolution, line, rows in result.unresolved],
    }


def _problems(problems: list[TableError]) -> list[dict[str, Any]]:
    return [{"line": p.line, "column": p.column or "", "message": p.message} for p in problems[:PROBLEMS_KEPT]]


def import_run(*, job_id: int, owner: str | None = None) -> str | None:
    """Run the job, if it is there to run (the task's body). Returns its status when this run finished
    it (or put it back in the queue: "queued"), None when there was nothing to do. Transient database
    errors propagate (the task retries; its retry, of the same owner, takes the job over)."""
    token = _claim(job_id, owner)
    if token is None:
        logger.info("History import %s: nothing to run (finished, or another live run has it)", job_id)
        return None
    job = HistoryImport.objects.select_related("account", "created_by").get(pk=job_id)
    plan: list[str] = []

    def on_plan(line: str) -> None:
        if len(plan) < PLAN_KEPT:
            plan.append(line)

    try:
        with _Run(job_id, token) as run, transaction.atomic():
            fields: dict[str, Any]
            try:
                if not job.file:
                    raise TableError("the file of this import is no longer kept; upload it again")
                result = history_import(
                    account=job.account, path=Path(job.file.path), mapping=job.mapping, dry_run=job.dry_run,
                    user=job.created_by, on_plan=on_plan, new_lenders=job.new_lenders, file_name=job.file_name,
                    on_progress=run.progress)
                written = not job.dry_run
                fields = {"status": Status.DONE, "summary": _summary(result), "problems": [], "plan": plan,
                          "rows_read": result.rows, "rows_refused": 0,
                          "deals_created": result.deals if written else 0,
                          "placements_created": result.placements if written else 0,
                          "term_sheets_created": result.term_sheets if written else 0}
            except ImportBusy:
                fields = {"status": Status.QUEUED, "message": BUSY, "queued_at": timezone.now(),
                          "attempts": F("attempts") - 1}
            except HistoryRefused as refused:
                result = refused.result
                fields = {"status": Status.REFUSED, "summary": _summary(result),
                          "problems": _problems(result.problems), "rows_read": result.rows,
                          "rows_refused": result.rows_refused, "message": _sentence(refused.sentence)}
            except TableError as problem:
                fields = {"status": Status.REFUSED, "problems": _problems([problem]),
                          "message": _sentence(f"the file was refused, nothing was imported: {problem}")}
            run.stop()  # before the row is written: the heartbeat's update would wait for this transaction
            now = timezone.now()
            if fields["status"] != Status.QUEUED:
                fields["finished_at"] = now
            done = HistoryImport.objects.filter(pk=job_id, run_token=token, status=Status.RUNNING).update(
                heartbeat_at=now, run_token="", **fields)
            if not done:  # the job was taken from this run (stale, re-queued): its import must not count
                transaction.set_rollback(True)
                logger.warning("History import %s was taken over by another run; this run's work is undone", job_id)
                return None
    except SoftTimeLimitExceeded:
        logger.error("History import %s hit its time limit", job_id)
        _fail(job_id, token, TIMED_OUT)
        return Status.FAILED
    except TRANSIENT_DB_ERRORS:
        drop_broken_connection()
        raise
    except Exception:
        logger.exception("History import %s failed", job_id)
        _fail(job_id, token, FAILED_MESSAGE)
        return Status.FAILED
    status = fields["status"]
    if status == Status.QUEUED:
        _enqueue(job_id, countdown=settings.LEV_HISTORY_BUSY_RETRY_SECONDS)
    elif status == Status.DONE and not job.dry_run:
        _delete_file(job)
    logger.info("History import %s: %s", job_id, status)
    return status


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _fail(job_id: int, token: str | None, message: str) -> bool:
    qs = HistoryImport.objects.filter(pk=job_id).exclude(status__in=FINISHED)
    if token is not None:
        qs = qs.filter(run_token=token)
    now = timezone.now()
    return bool(qs.update(status=Status.FAILED, message=message, finished_at=now, heartbeat_at=now, run_token=""))


def import_give_up(*, job_id: int, owner: str | None = None) -> bool:
    """After the task's retries ran out on transient errors: fail the job if nobody else runs it."""
    mine = Q(status=Status.QUEUED)
    if owner:
        mine |= Q(status=Status.RUNNING, run_token__startswith=_owner_tag(owner))
    now = timezone.now()
    return bool(HistoryImport.objects.filter(mine, pk=job_id).update(
        status=Status.FAILED, message=FAILED_MESSAGE, finished_at=now, run_token=""))


# --- Files -----------------------------------------------------------------------------------------
def _delete_file(job: HistoryImport) -> None:
    """Delete the job's stored file, and forget it on every job that shares it (import_again)."""
    name = job.file.name
    if not name:
        return
    try:
        job.file.storage.delete(name)
    except OSError:
        logger.exception("Could not delete the stored file of history import %s; the sweep retries", job.pk)
        return
    HistoryImport.objects.filter(account_id=job.account_id, file=name).update(file="")


# --- The sweep (beat) ------------------------------------------------------------------------------
def import_sweep() -> dict[str, int]:
    """Re-queue jobs whose worker died (stale heartbeat) or that were never handed to the broker, fail
    them after LEV_HISTORY_MAX_ATTEMPTS (or when queued past LEV_HISTORY_PENDING_GIVE_UP_SECONDS), and
    delete the stored files of jobs finished more than LEV_HISTORY_FILE_RETENTION_SECONDS ago."""
    now = timezone.now()
    cutoff = _stale_cutoff(now)
    counts = {"requeued": 0, "failed": 0, "files_deleted": 0}
    stale = HistoryImport.objects.filter(
        Q(status=Status.RUNNING, heartbeat_at__lt=cutoff) | Q(status=Status.RUNNING, heartbeat_at__isnull=True)
        | Q(status=Status.QUEUED, queued_at__lt=cutoff) | Q(status=Status.QUEUED, queued_at__isnull=True)
    ).order_by("id")
    give_up = now - dt.timedelta(seconds=settings.LEV_HISTORY_PENDING_GIVE_UP_SECONDS)
    for job in stale.iterator():
        same = HistoryImport.objects.filter(pk=job.pk, status=job.status, heartbeat_at=job.heartbeat_at,
                                            queued_at=job.queued_at)
        if job.attempts >= settings.LEV_HISTORY_MAX_ATTEMPTS or (
                job.status == Status.QUEUED and job.created_at < give_up):
            message = WORKER_LOST.format(n=job.attempts) if job.attempts else NEVER_STARTED
            if same.update(status=Status.FAILED, run_token="", finished_at=now, message=message):
                counts["failed"] += 1
            continue
        with transaction.atomic():
            if same.update(status=Status.QUEUED, run_token="", heartbeat_at=None, queued_at=now,
                           message="" if job.status == Status.RUNNING else job.message):
                counts["requeued"] += 1
                transaction.on_commit(lambda pk=job.pk: _enqueue(pk))
    kept = now - dt.timedelta(seconds=settings.LEV_HISTORY_FILE_RETENTION_SECONDS)
    live = set(HistoryImport.objects.exclude(status__in=FINISHED).exclude(file="").values_list("file", flat=True))
    old = HistoryImport.objects.filter(status__in=FINISHED, finished_at__lt=kept).exclude(file="")
    for job in old.order_by("id").iterator():
        if job.file.name in live:
            continue  # a newer job (import_again) still needs it
        _delete_file(job)
        counts["files_deleted"] += 1
    if counts["requeued"] or counts["failed"]:
        logger.warning("Stale history imports: %s", counts)
    return counts


# --- The refused rows' report ------------------------------------------------------------------------
def refused_rows_csv(job: HistoryImport) -> str:
    """The job's problems as CSV (line, column, reason): what the deal team fixes in its file. Every
    cell inert: a spreadsheet opens the report as text, never as a formula."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["line", "column", "reason"])
    for problem in job.problems:
        writer.writerow([inert(str(problem.get("line") or "")), inert(problem.get("column") or ""),
                         inert(problem.get("message") or "")])
    for name in job.summary.get("unresolved", []):
        candidates = "; ".join(f"{c['name']} (id {c['id']})" for c in name.get("candidates", []))
        reason = f'the lender name "{name["name"]}" matches no lender; map it to a lender' + (
            f" (perhaps {candidates})" if candidates else "")
        writer.writerow([inert(str(name.get("first_line") or "")), "lender", inert(reason)])
    return out.getvalue()
