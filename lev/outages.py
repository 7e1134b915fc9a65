"""Which failures are outages of a dependency (database, Redis, broker) rather than bugs.

The API answers an outage with 503 UPSTREAM_UNAVAILABLE (retryable, counted by the MCP layer's
circuit breaker) and anything else unexpected with 500 INTERNAL_ERROR (a bug: never retried,
never counted). The line between them matters: if input could produce a "503", one tenant could
open the shared breaker for everybody; if an outage looked like a 500, agents would give up on
something that a retry fixes.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import InterfaceError as DjangoInterfaceError
from django.db import OperationalError as DjangoOperationalError
from django.db import connection

logger = logging.getLogger("lev.outages")

# HTTP statuses that mean "the server behind is down or overloaded" (a proxy's 502/504, an API's 503):
# the API answers them as UPSTREAM_UNAVAILABLE, and the MCP layer retries them and counts them in its
# breaker (see "Failure semantics" in ARCHITECTURE.md). Any other 5xx is a bug, never retried.
OUTAGE_STATUSES = frozenset({502, 503, 504})

# PostgreSQL SQLSTATE classes that mean "the server is unreachable, overloaded or shutting down",
# or a transient conflict a retry resolves (lock timeout, deadlock, serialization failure).
_PG_OUTAGE_CLASSES = ("08", "40", "53", "57", "58")
_PG_OUTAGE_STATES = ("55P03",)  # lock_not_available (lock_timeout)
# SQLite messages that mean the file is gone, unreadable or busy (the embedded setup's outages).
_SQLITE_OUTAGE_WORDS = ("locked", "unable to open", "disk i/o", "no such table", "readonly", "busy")


def _chain(exc: BaseException):
    seen = 0
    while exc is not None and seen < 8:
        yield exc
        exc = exc.__cause__ or exc.__context__
        seen += 1


def _database_outage(exc: BaseException) -> bool:
    cause = exc.__cause__
    sqlstate = getattr(cause, "sqlstate", None)
    if cause is not None and type(cause).__module__.startswith("psycopg"):
        # No SQLSTATE: the connection itself failed (refused, reset, timed out).
        if sqlstate is None:
            return True
        return sqlstate.startswith(_PG_OUTAGE_CLASSES) or sqlstate in _PG_OUTAGE_STATES
    if isinstance(cause, sqlite3.OperationalError):
        text = str(cause).lower()
        return any(word in text for word in _SQLITE_OUTAGE_WORDS)
    return True


def is_dependency_outage(exc: BaseException) -> bool:
    """True when `exc` (or what caused it) means a dependency is down, not that the code is wrong."""
    for item in _chain(exc):
        if isinstance(item, DjangoInterfaceError):
            return True
        if isinstance(item, DjangoOperationalError):
            return _database_outage(item)
        module = type(item).__module__
        if module.startswith("redis") and type(item).__name__ in ("ConnectionError", "TimeoutError",
                                                                    "BusyLoadingError"):
            return True
        if module.startswith("kombu") and type(item).__name__ == "OperationalError":
            return True
        if isinstance(item, ConnectionError | TimeoutError):
            return True
    return False


def dependency_name(exc: BaseException) -> str:
    for item in _chain(exc):
        if isinstance(item, DjangoInterfaceError | DjangoOperationalError):
            return "database"
        module = type(item).__module__
        if module.startswith("redis"):
            return "redis"
        if module.startswith("kombu"):
            return "broker"
    return "dependency"


_last_logged: dict[str, float] = {}
_log_lock = threading.Lock()
LOG_INTERVAL_SECONDS = 10.0


def report_outage(exc: BaseException, where: str) -> None:
    """Log an outage once per dependency per interval (not a traceback per request: an outage under
    load would otherwise write megabytes of identical lines)."""
    name = dependency_name(exc)
    now = time.monotonic()
    with _log_lock:
        if now - _last_logged.get(name, -LOG_INTERVAL_SECONDS) < LOG_INTERVAL_SECONDS:
            return
        _last_logged[name] = now
    logger.warning("%s unavailable (%s): %s: %s", name, where, type(exc).__name__, str(exc).splitlines()[0][:200]
                   if str(exc) else "")


class OutageResponseFilter(logging.Filter):
    """Drops Django's own "Service Unavailable" line for each 503 (django.request logs every 5xx
    response): an outage is already logged once per interval by `report_outage`, and a line per
    request would flood the log while a dependency is down. 500s stay (they are bugs)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(record, "status_code", None) != 503


TRANSIENT_DB_ERRORS = (DjangoOperationalError, DjangoInterfaceError)


def drop_broken_connection() -> None:
    """Close this thread's connection after a database error, so the next query connects
    afresh: a connection the server terminated (or a network cut) stays broken otherwise, and
    every later query on it fails too. Inside an outer transaction (a test's) it is left alone:
    that transaction is lost anyway and closing it is its owner's call."""
    if not connection.in_atomic_block:
        connection.close()


T = TypeVar("T")


def unless_outage(work: Callable[[], T], what: str, nothing_done: T) -> T:
    """Periodic work, run now. While the database (or broker) is down there is nothing to do: the
    outage is reported (once per interval), the connection it broke is dropped so the next run
    connects afresh, and `nothing_done` is returned. Any other error is a bug and is raised."""
    try:
        return work()
    except Exception as exc:
        if not is_dependency_outage(exc):
            raise
        report_outage(exc, what)
        drop_broken_connection()
        return nothing_done
