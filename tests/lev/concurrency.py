"""Helpers for tests that interleave real PostgreSQL transactions from several threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

postgres_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")


def lock_waiters() -> int:
    """Backends of this test database now waiting on a lock (a row lock, a unique-index wait)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # else the view is frozen per transaction
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def wait_for_lock_waiters(count: int, deadline_s: float = 10.0) -> None:
    """Poll until `count` other backends wait on a lock; fail at the deadline."""
    deadline = time.monotonic() + deadline_s
    while lock_waiters() < count:
        assert time.monotonic() < deadline, f"expected {count} backend(s) waiting on a lock"
        time.sleep(0.01)


class Worker(threading.Thread):
    """Runs `target` on its own database connection; keeps its result or exception."""

    def __init__(self, target: Callable[[], Any]):
        super().__init__(daemon=True)
        self.target = target
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        from django.db import connection as thread_connection

        try:
            self.result = self.target()
        except BaseException as exc:  # handed to the test, which asserts on it
            self.error = exc
        finally:
            thread_connection.close()

    def outcome(self, timeout: float = 20.0) -> Any:
        self.join(timeout)
        assert not self.is_alive(), "worker did not finish"
        if self.error is not None:
            raise self.error
        return self.result
