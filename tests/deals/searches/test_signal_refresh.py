"""The lender signals' refresh under real faults (issue 37): the database cut mid-refresh, the process
killed mid-refresh. Either way the previous signals stay in place (one transaction), a search never reads
half-written ones, and /health says the last refresh failed. The refresh waits at its table lock, which a
connection of the test holds, so the fault lands inside it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from deals.searches import signals
from deals.searches.ranking import evidence as ev
from lenders.models import LenderSignal, SignalRefresh
from tests.deals.searches.factories import lender_with
from tests.deals.searches.test_learned_ranking import history
from tests.deals.searches.worker_process import database_url
from tests.factories import AccountFactory

pytestmark = pytest.mark.django_db(transaction=True)

TABLE = LenderSignal._meta.db_table


def _rows() -> set[tuple]:
    return set(LenderSignal.objects.values_list("account_id", "lender_id", "dimension", "value", "sent_12m",
                                                "quoted_12m", "declined_12m"))


def _wait_blocked(params: dict) -> None:
    """Until a backend waits for a lock on the signals table (read on a connection of its own, in
    autocommit: inside a transaction pg_stat_activity is a snapshot)."""
    deadline = time.monotonic() + 20
    with psycopg.connect(**params, autocommit=True) as watcher:
        while True:
            (waiting,) = watcher.execute(
                "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                "WHERE NOT l.granted AND c.relname = %s", [TABLE]).fetchone()
            if waiting:
                return
            assert time.monotonic() < deadline, "the refresh never reached its table lock"
            time.sleep(0.05)


@pytest.fixture
def signals_before():
    if connection.vendor != "postgresql":
        pytest.skip("a real lock and a real cut need PostgreSQL")
    account = AccountFactory(name="Acme", slug="acme")
    lender = lender_with("Quotes Often").lender
    history(account, lender, "qq")
    ev.refresh_lender_signals()
    before = _rows()
    assert before
    history(account, lender, "ddd")  # new outcomes the failed refresh would have counted
    # The lock holder's connection goes straight to PostgreSQL (taken before any proxy is put in front).
    return before, dict(connection.get_connection_params())


def test_a_refresh_cut_from_the_database_leaves_the_previous_signals(signals_before, db_proxy):
    signals_before, params = signals_before
    holder = psycopg.connect(**params, autocommit=False)
    result: list[int] = []
    try:
        with holder.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {TABLE} IN SHARE MODE")  # a reader's lock: the refresh waits behind it
        worker = threading.Thread(target=lambda: result.append(signals.refresh_now()))
        worker.start()
        _wait_blocked(params)
        db_proxy.cut()  # the refresh's connection is reset while it waits inside its transaction
        worker.join(30)
        assert result == [0]  # reported, nothing raised: the periodic task's next run does it
    finally:
        holder.rollback()
        holder.close()
    db_proxy.restore()
    assert _rows() == signals_before  # the previous signals, whole
    health = Client().get("/health").json()["lender_signals"]
    assert health["status"] == "failed" and health["last_failure"]["reason"] == "the database was unavailable"
    assert health["refreshed_at"] is not None
    signals.refresh_now()  # the database back: the next refresh counts the new outcomes
    assert _rows() != signals_before
    assert Client().get("/health").json()["lender_signals"]["status"] == "fresh"


def test_a_refresh_whose_process_is_killed_leaves_the_previous_signals(signals_before):
    signals_before, params = signals_before
    holder = psycopg.connect(**params, autocommit=False)
    env = {**os.environ, "DATABASE_URL": database_url(), "DB_CONN_MAX_AGE": "0"}
    process = subprocess.Popen([sys.executable, "manage.py", "refresh_lender_signals"], cwd=settings.BASE_DIR,
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with holder.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {TABLE} IN SHARE MODE")
        _wait_blocked(params)
        process.send_signal(signal.SIGKILL)  # a worker killed in the middle of its refresh
        process.wait(10)
    finally:
        holder.rollback()
        holder.close()
        if process.poll() is None:
            process.kill()
    assert _rows() == signals_before
    assert SignalRefresh.objects.get(pk=1).finished_at is not None  # the last good refresh still stands
