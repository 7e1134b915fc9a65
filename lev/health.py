"""GET /health: cheap, unauthenticated, safe to poll; never trips or resets the breaker.

    {"status": "ok" | "degraded", "version", "lev_api", "circuit_breaker",
     "database": "reachable" | "unreachable",
     "redis": "reachable" | "unreachable" | "not_configured",
     "worker": "seen" | "not_seen" | "unreachable" | "not_configured" | "unknown",
     "lender_searches": {"pending_stale": N, "not_queued": M} | null}

`status` is `degraded` when the database or Redis is unreachable, no ranking worker has been seen (or
Redis, where workers announce themselves, does not answer), or lender searches wait for a worker
longer than LEV_SEARCH_PENDING_WARN_SECONDS. The answer is always HTTP 200: /health reports, it
does not take a web process out of a load balancer for a worker outage.

Every probe runs in a thread of its own and the view waits at most LEV_HEALTH_TIMEOUT_SECONDS for
all of them, so /health answers in bounded time even when a dependency hangs (a probe that did not
answer counts as down; while it is still stuck, the next poll does not start another one). The
probes bound themselves too (PostgreSQL statement and connect timeouts, Redis socket timeouts), so
a stuck thread does not live long. The database probe uses a connection of its own, opened and
closed per probe, so a broken pooled connection can't make it lie either way.

`lev` never imports the apps above it: they fill in the registry below from their `ready()` —
`register_database_read` (a read on the database probe's connection, e.g. the lender searches'
counts, and when it makes the site degraded) and `register_fields` (in-process fields such as the
MCP layer's breaker state).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

import lev
from lev.outages import is_dependency_outage, report_outage
from lev.redis_gate import redis_for
from lev.worker_health import DOWN, worker_status

logger = logging.getLogger(__name__)

REACHABLE, UNREACHABLE = "reachable", "unreachable"

_inflight: dict[str, threading.Thread] = {}
_inflight_lock = threading.Lock()

# Filled in by the apps' ready() (see the module docstring).
_DATABASE_READS: dict[str, Callable[[], Any]] = {}
_DEGRADED_WHEN: list[Callable[[dict[str, Any]], bool]] = []
_FIELDS: list[Callable[[], dict[str, Any]]] = []


def register_database_read(name: str, read: Callable[[], Any],
                           degraded_when: Callable[[Any], bool] | None = None) -> None:
    """Report `read()` under `name`, run on the database probe's connection after its SELECT 1 (null
    when it fails or the database is down); `degraded_when(value)` true makes the site degraded."""
    _DATABASE_READS[name] = read
    if degraded_when is not None:
        _DEGRADED_WHEN.append(lambda report: degraded_when(report.get(name)))


def register_fields(fields: Callable[[], dict[str, Any]]) -> None:
    """Add `fields()` (in-process state, no I/O) to every /health answer, after status and version."""
    _FIELDS.append(fields)


def _probe_database() -> dict[str, Any]:
    """SELECT 1 on a fresh connection with bounded connect and statement time; then the registered
    reads on the same connection (they need the database anyway)."""
    conn = connections[DEFAULT_DB_ALIAS]  # this thread's own wrapper, closed below
    timeout = settings.LEV_HEALTH_TIMEOUT_SECONDS
    if conn.vendor == "postgresql":
        options = {**conn.settings_dict.get("OPTIONS", {}), "connect_timeout": max(1, math.ceil(timeout))}
        conn.settings_dict = {**conn.settings_dict, "OPTIONS": options}
    try:
        with conn.cursor() as cursor:
            if conn.vendor == "postgresql":
                cursor.execute(f"SET statement_timeout = {max(1, int(timeout * 1000))}")
            cursor.execute("SELECT 1")
            cursor.fetchone()
        report: dict[str, Any] = {"database": REACHABLE}
        for name, read in _DATABASE_READS.items():
            try:
                report[name] = read()
            except Exception:
                logger.warning("Health: the read %s failed", name, exc_info=True)
                report[name] = None
        return report
    finally:
        conn.close()


def _probe_redis() -> dict[str, Any]:
    """PING the Redis behind the cache, rate limits, breaker state and broker (when configured).
    While it is down those fall back to per-process state, so this reports, it does not fail."""
    if not settings.REDIS_URL:
        return {"redis": "not_configured"}
    redis_for(settings.REDIS_URL, settings.LEV_HEALTH_TIMEOUT_SECONDS).ping()
    return {"redis": REACHABLE}


def _probe_worker() -> dict[str, Any]:
    return {"worker": worker_status()}


def _database_down() -> dict[str, Any]:
    return {"database": UNREACHABLE, **dict.fromkeys(_DATABASE_READS)}


PROBES: dict[str, tuple[Callable[[], dict[str, Any]], Callable[[], dict[str, Any]]]] = {
    # name: (probe, what it reports when it fails or does not answer in time)
    "database": (_probe_database, _database_down),
    "worker": (_probe_worker, lambda: {"worker": "unreachable"}),
    "redis": (_probe_redis, lambda: {"redis": UNREACHABLE}),
}


def run_probes() -> dict[str, Any]:
    """Run every probe in parallel, each in its own thread; wait for all at most
    LEV_HEALTH_TIMEOUT_SECONDS in total."""
    results: dict[str, dict[str, Any]] = {}
    started: dict[str, threading.Thread] = {}
    for name, (probe, _down) in PROBES.items():
        with _inflight_lock:
            stuck = _inflight.get(name)
            if stuck is not None and stuck.is_alive():
                continue  # the previous probe still hangs: the dependency is down, don't pile up

            def target(name: str = name, probe: Callable[[], dict[str, Any]] = probe) -> None:
                try:
                    results[name] = probe()
                except Exception as exc:
                    if is_dependency_outage(exc):  # down: said once per interval, not per poll
                        report_outage(exc, f"health probe {name}")
                    else:
                        logger.warning("Health probe %s failed", name, exc_info=True)

            thread = threading.Thread(target=target, name=f"health-{name}", daemon=True)
            _inflight[name] = started[name] = thread
        thread.start()
    deadline = time.monotonic() + settings.LEV_HEALTH_TIMEOUT_SECONDS
    for thread in started.values():
        thread.join(max(0.0, deadline - time.monotonic()))
    report: dict[str, Any] = {}
    for name, (_probe, down) in PROBES.items():
        report.update(results[name] if name in results else down())
    return report


def is_degraded(report: dict[str, Any]) -> bool:
    return (report["database"] != REACHABLE or report["redis"] == UNREACHABLE or report["worker"] in DOWN
            or any(degraded(report) for degraded in _DEGRADED_WHEN))


@require_GET
@never_cache
def health(request: HttpRequest) -> JsonResponse:
    report = run_probes()
    answer: dict[str, Any] = {"status": "degraded" if is_degraded(report) else "ok", "version": lev.__version__}
    for fields in _FIELDS:
        answer.update(fields())
    return JsonResponse({**answer, **report})
