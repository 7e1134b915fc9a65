"""The database connection's health check without a query per request (lev.postgresql, issue 24): a
reused connection in steady use is not checked with `SELECT 1`; one the server ended (a backend
terminated, as by a restart) or the network reset (a real TCP proxy cut in front of PostgreSQL) is
found out before the request's first query, replaced, and the query answered. Requests are what Django
makes of them: request_started's close_old_connections, then queries."""

from __future__ import annotations

import time

import psycopg
import pytest
from django.db import close_old_connections, connection

from deals.models import Deal
from tests.factories import DealFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _quiet_check_engine(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's connection health check")
    assert connection.settings_dict["ENGINE"] == "lev.postgresql"  # lev.settings, on PostgreSQL
    saved = connection.settings_dict["CONN_MAX_AGE"], connection.settings_dict["CONN_HEALTH_CHECKS"]
    connection.settings_dict.update(CONN_MAX_AGE=60, CONN_HEALTH_CHECKS=True)  # as lev.settings
    connection.close()
    yield
    connection.close()
    connection.settings_dict["CONN_MAX_AGE"], connection.settings_dict["CONN_HEALTH_CHECKS"] = saved


@pytest.fixture
def checks(monkeypatch) -> list[bool]:
    """The outcomes of Django's own check (`SELECT 1`, is_usable) each time it runs."""
    seen: list[bool] = []
    real = connection.is_usable

    def is_usable() -> bool:
        seen.append(real())
        return seen[-1]

    monkeypatch.setattr(connection, "is_usable", is_usable)
    return seen


def request(title: str | None = None) -> tuple[int, int]:
    """A request: Django's request start, then one query. (the backend's pid, how many deals)"""
    close_old_connections()
    count = Deal.objects.count() if title is None else Deal.objects.filter(title=title).count()
    return connection.connection.info.backend_pid, count


def terminate(pid: int) -> None:
    settings = connection.settings_dict
    with psycopg.connect(host=settings["HOST"] or "127.0.0.1", port=settings["PORT"] or 5432, user=settings["USER"],
                         password=settings["PASSWORD"] or None, dbname=settings["NAME"], autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0] is True
        # It signals the backend and returns: the session ends a moment later (as in a restart, whose
        # first request after it comes once the server is back).
        deadline = time.monotonic() + 10
        while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone():
            assert time.monotonic() < deadline, "the backend did not end"
            time.sleep(0.01)


def test_a_connection_in_steady_use_is_not_checked_with_a_query(checks, account):
    DealFactory(account=account)
    pids = {request()[0] for _ in range(20)}
    assert len(pids) == 1  # one connection, reused
    assert checks == []
    assert connection.health_check_enabled and connection.health_check_done


def test_a_terminated_backend_is_replaced_before_the_first_query(checks, account):
    DealFactory(account=account)
    pid, count = request()
    assert count == 1
    terminate(pid)  # what a restart does to every session: FATAL, then the socket closes
    new_pid, count = request()
    assert count == 1 and new_pid != pid
    assert checks == [False]  # Django's check ran (the socket had something to say) and failed
    request()
    assert checks == [False]  # and the new connection is not checked again


def test_a_cut_connection_is_replaced_once_the_database_is_back(checks, account, db_proxy):
    DealFactory(account=account, title="Through the proxy")
    pid, count = request("Through the proxy")
    assert count == 1
    db_proxy.cut()  # the connection is reset, and new ones are refused ...
    db_proxy.restore()  # ... until the database is back
    new_pid, count = request("Through the proxy")
    assert count == 1 and new_pid != pid
    assert checks == [False]


def test_a_connection_idle_for_a_while_is_checked_with_a_query(checks, account, settings):
    settings.LEV_DB_HEALTH_CHECK_IDLE_SECONDS = 0.3
    DealFactory(account=account)
    pid = request()[0]
    request()
    assert checks == []
    time.sleep(0.4)  # longer than the bound: a dropped flow only a round trip would see
    assert request() == (pid, 1)
    assert checks == [True]
    request()
    assert checks == [True]  # vouched for again
