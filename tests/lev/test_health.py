"""GET /health tells operators what is down: the database (a real unreachable or hanging one), the
ranking worker (a real Celery worker seen, then killed), and lender searches no worker picked up —
always in bounded time, with the original keys unchanged."""

from __future__ import annotations

import contextlib
import datetime as dt
import socket
from collections.abc import Iterator

import pytest
from django.db import connection
from django.utils import timezone

from deals.searches.models import LenderSearch
from lev.celery_app import app as celery_app
from mcp_tools import resilience
from tests.deals.fixtures import eager_jobs
from tests.deals.searches.factories import make_deal
from tests.deals.searches.worker_process import celery_worker, wait_for
from tests.faults import free_port

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["eager_jobs"]


def health(client) -> dict:
    response = client.get("/health")
    assert response.status_code == 200
    return response.json()


@contextlib.contextmanager
def database_at(host: str, port: int) -> Iterator[None]:
    """New connections to the default database go to host:port (the open test connection is
    kept). On SQLite, to a file that cannot be opened."""
    settings_dict = connection.settings_dict
    keys = ("HOST", "PORT") if connection.vendor == "postgresql" else ("NAME",)
    saved = {key: settings_dict.get(key) for key in keys}
    if connection.vendor == "postgresql":
        settings_dict.update(HOST=host, PORT=str(port))
    else:
        settings_dict["NAME"] = "/nonexistent-dir/lev-health.sqlite3"
    try:
        yield
    finally:
        settings_dict.update(saved)


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A TCP port that accepts connections and never answers: a hung database."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield listener.getsockname()[1]


def test_embedded_setup_is_ok_and_keeps_the_original_keys(client, eager_jobs, settings):
    body = health(client)
    assert body == {
        "status": "ok", "version": "0.1.0", "lev_api": "reachable", "circuit_breaker": "closed",
        "database": "reachable", "worker": "not_configured",
        "redis": "reachable" if settings.REDIS_URL else "not_configured",
        "lender_searches": {"pending_stale": 0, "not_queued": 0},
        # No refresh yet: a search ranks on the stated programs (docs/ranking.md, "Refresh").
        "lender_signals": {"status": "never", "refreshed_at": None, "age_seconds": None, "last_failure": None},
    }


def test_an_unreachable_database_is_reported_and_degrades(client, eager_jobs):
    with database_at("127.0.0.1", free_port()):  # nothing listens there
        body = health(client)
    assert body["database"] == "unreachable" and body["status"] == "degraded"
    assert body["lender_searches"] is None
    assert {k: body[k] for k in ("version", "lev_api", "circuit_breaker")} == {
        "version": "0.1.0", "lev_api": "reachable", "circuit_breaker": "closed"}
    assert health(client)["database"] == "reachable"  # and back


def test_a_hanging_database_does_not_hang_health(client, eager_jobs, settings):
    if connection.vendor != "postgresql":
        pytest.skip("a TCP server that never answers stands in for a hung PostgreSQL")
    settings.LEV_HEALTH_TIMEOUT_SECONDS = 1.0
    with silent_server() as port, database_at("127.0.0.1", port):
        first = health(client)
        second = health(client)  # the first probe may still hang: no second one piles up
    assert first["database"] == second["database"] == "unreachable"
    assert first["status"] == "degraded"


def test_searches_no_worker_picked_up_are_counted(client, eager_jobs, account, settings):
    settings.LEV_SEARCH_PENDING_WARN_SECONDS = 30
    deal = make_deal(account)
    now = timezone.now()
    old = now - dt.timedelta(seconds=40)
    LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version, queued_at=now)
    waiting = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version)
    LenderSearch.objects.filter(pk=waiting.pk).update(created_at=old, queued_at=old)
    assert health(client)["lender_searches"] == {"pending_stale": 1, "not_queued": 0}
    assert health(client)["status"] == "degraded"
    LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version, queued_at=None)
    assert health(client)["lender_searches"] == {"pending_stale": 2, "not_queued": 1}
    LenderSearch.objects.filter(pk=waiting.pk).update(status="completed")
    LenderSearch.objects.filter(queued_at=None).update(status="failed")
    assert health(client)["status"] == "ok"


def test_an_unreachable_redis_makes_the_worker_unreachable(client, settings):
    # mcp_tools.resilience keeps the first Redis client it makes for the whole process: let it be
    # made from the real REDIS_URL, so the dead one below stays this test's alone.
    resilience.redis_client()
    conf = celery_app.conf
    saved = conf.task_always_eager
    conf.task_always_eager = False  # a broker is configured
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # and nothing listens there
    try:
        body = health(client)
    finally:
        conf.task_always_eager = saved
    assert body["worker"] == "unreachable" and body["status"] == "degraded"
    assert body["redis"] == "unreachable"


@pytest.mark.slow
def test_a_real_worker_is_seen_and_missed_once_killed(client, settings):
    settings.LEV_WORKER_STALE_SECONDS = 2.0
    with celery_worker(env={"LEV_WORKER_HEARTBEAT_SECONDS": "0.5", "LEV_WORKER_STALE_SECONDS": "2"}) as worker:
        # The queue is new: until its worker is up, nobody has announced itself for it.
        seen = wait_for(lambda: health(client)["worker"] == "seen", "the worker to announce itself", worker)
        assert seen
        assert health(client)["status"] == "ok"
        worker.kill()
        wait_for(lambda: health(client)["worker"] == "not_seen", "the killed worker to be missed", worker)
        assert health(client)["status"] == "degraded"


def test_no_worker_on_the_queue_is_not_seen(client, settings):
    if not settings.REDIS_URL:
        pytest.skip("REDIS_URL is not set: heartbeats live in Redis")
    conf = celery_app.conf
    saved = conf.task_always_eager, conf.task_default_queue
    conf.task_always_eager, conf.task_default_queue = False, f"lev-test-nobody-{free_port()}"
    try:
        body = health(client)
    finally:
        conf.task_always_eager, conf.task_default_queue = saved
    assert body["worker"] == "not_seen" and body["status"] == "degraded"
