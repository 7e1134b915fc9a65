"""The history import job on the real parts: PostgreSQL, Redis and a real Celery worker. Its progress
is visible from another connection while its one transaction is open; a worker SIGKILLed mid-import
leaves nothing written and the sweep re-runs the job; a broker that is down leaves it queued, not a 500."""

from __future__ import annotations

import contextlib

import psycopg
import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from deals.history import jobs
from deals.history.models import HistoryImport
from tests.deals.history.helpers import counts, rows_ab, write_csv
from tests.deals.searches.worker_process import celery_worker, database_url, require_worker_setup, wait_for
from tests.factories import AccountFactory, LenderFactory
from tests.faults import broker, free_port

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def lenders():
    for name in ("JPMorgan Chase Bank, N.A.", "Wells Fargo Bank", "Arbor Realty Trust"):
        LenderFactory(name=name)


@contextlib.contextmanager
def placements_locked():
    """Another connection holds the placements table: the import waits on it after pass 1 (rows read)
    and its deals' batch, inside its open transaction."""
    with psycopg.connect(database_url(), autocommit=False) as holder:
        holder.execute("LOCK TABLE deals_placement IN SHARE ROW EXCLUSIVE MODE")
        yield holder


def start(account, tmp_path, **kwargs) -> HistoryImport:
    data = write_csv(tmp_path / "history.csv", rows_ab()).read_bytes()
    return jobs.import_start(account=account, user=None, upload=SimpleUploadedFile("history.csv", data), **kwargs)


def status(job: HistoryImport) -> str:
    return HistoryImport.objects.values_list("status", flat=True).get(pk=job.pk)


@pytest.mark.slow
def test_progress_is_visible_while_the_import_runs_and_two_accounts_import_at_once(tmp_path, lenders):
    require_worker_setup()
    mine, other = AccountFactory(), AccountFactory()
    with celery_worker() as worker:
        with placements_locked() as holder:
            job = start(mine, tmp_path)
            wait_for(lambda: jobs.progress_of(HistoryImport.objects.get(pk=job.pk))["rows_read"] == 5,
                     "the running import's progress", worker)
            running = HistoryImport.objects.get(pk=job.pk)
            assert running.status == "running" and running.rows_read == 0  # the row's figures are the final ones
            assert counts(mine) == (0, 0, 0)  # nothing visible before the import commits
            holder.rollback()
        done = wait_for(lambda: status(job) in jobs.FINISHED and HistoryImport.objects.get(pk=job.pk),
                        "the import to finish", worker)
        assert done.status == "done" and done.deals_created == 2 and counts(mine) == (2, 5, 3)
        # Another account's import, through the same worker.
        second = start(other, tmp_path)
        wait_for(lambda: status(second) == "done", "the other account's import", worker)
        assert counts(other) == (2, 5, 3) and counts(mine) == (2, 5, 3)


@pytest.mark.slow
def test_a_worker_killed_mid_import_leaves_nothing_and_the_sweep_runs_the_job_again(tmp_path, lenders):
    require_worker_setup()
    account = AccountFactory()
    env = {"LEV_HISTORY_STALE_SECONDS": "4", "LEV_HISTORY_SWEEP_SECONDS": "1", "LEV_HISTORY_HEARTBEAT_SECONDS": "1"}
    with placements_locked() as holder, celery_worker(env=env) as doomed:
        job = start(account, tmp_path)
        wait_for(lambda: jobs.progress_of(HistoryImport.objects.get(pk=job.pk))["rows_read"] == 5,
                 "the import to be mid-way", doomed)
        with celery_worker(env=env, beat=True) as survivor:
            wait_for(lambda: "beat: Starting" in survivor.log.read_text(errors="replace"), "beat", survivor)
            doomed.kill()
            holder.rollback()
            assert counts(account) == (0, 0, 0)  # the killed run's transaction is gone with it
            done = wait_for(lambda: status(job) in jobs.FINISHED and HistoryImport.objects.get(pk=job.pk),
                            "the sweep to run the job again", survivor, 60)
    assert done.status == "done" and done.attempts >= 2, (done.status, done.attempts, done.message)
    assert counts(account) == (2, 5, 3)  # once, not twice


def test_a_broker_that_is_down_leaves_the_job_queued_with_a_message(tmp_path, lenders):
    if connection.vendor != "postgresql" or not settings.REDIS_URL:
        pytest.skip("the broker is Redis (REDIS_URL) on the PostgreSQL setup")
    account = AccountFactory()
    with broker(f"redis://127.0.0.1:{free_port()}/0"):  # nothing listens there
        job = start(account, tmp_path)
    job.refresh_from_db()
    assert job.status == "queued" and job.queued_at is None and job.message == jobs.NOT_QUEUED
    assert counts(account) == (0, 0, 0)


def test_a_job_that_finds_another_import_of_its_account_running_goes_back_to_the_queue(tmp_path, lenders,
                                                                                        eager_jobs):
    if connection.vendor != "postgresql":
        pytest.skip("the account's advisory lock is PostgreSQL's")
    from deals.history.services import LOCK_NAMESPACE

    account, other = AccountFactory(), AccountFactory()
    with broker(f"redis://127.0.0.1:{free_port()}/0"):  # queued, not run, while the lock is held
        job = start(account, tmp_path)
    with psycopg.connect(database_url(), autocommit=False) as holder:  # another import of the account, mid-way
        holder.execute("SELECT pg_advisory_xact_lock(%s)", [(LOCK_NAMESPACE << 32) | account.pk])
        assert jobs.import_run(job_id=job.pk, owner="task-1") == "queued"
        job.refresh_from_db()
        assert job.status == "queued" and job.message == jobs.BUSY and job.attempts == 0
        assert counts(account) == (0, 0, 0)
        # Another account's import runs beside it.
        beside = start(other, tmp_path)
        beside.refresh_from_db()
        assert beside.status == "done" and counts(other) == (2, 5, 3)
    assert jobs.import_run(job_id=job.pk, owner="task-2") == "done"
    assert counts(account) == (2, 5, 3)
