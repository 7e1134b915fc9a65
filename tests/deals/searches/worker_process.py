"""A real Celery worker subprocess for tests (the same setup as test_celery_worker.py's fixture,
with the database URL and environment as parameters). Faults to put beside it are in tests/faults.py."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection

from lev.celery_app import app as celery_app

ROOT = Path(__file__).resolve().parents[3]
DEADLINE_S = 90  # worker start-up included


def require_worker_setup() -> None:
    if not settings.REDIS_URL:
        pytest.skip("REDIS_URL is not set: a real worker needs Redis as the broker")
    if connection.vendor != "postgresql":
        pytest.skip("a real worker needs PostgreSQL (DATABASE_URL): it shares the test database")


def database_url(host: str | None = None, port: int | str | None = None) -> str:
    """The pytest database's URL (optionally through another host/port, e.g. a proxy)."""
    db = connection.settings_dict
    auth = quote(db["USER"] or "", safe="")
    if db.get("PASSWORD"):
        auth += ":" + quote(db["PASSWORD"], safe="")
    host = host or db.get("HOST") or "127.0.0.1"
    port = port or db.get("PORT") or 5432
    return f"postgres://{auth}@{host}:{port}/{quote(db['NAME'], safe='')}"


@dataclass
class Worker:
    queue: str
    log: Path
    process: subprocess.Popen

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def kill(self) -> None:
        """SIGKILL the worker and its children (a crash, not a shutdown)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


@contextlib.contextmanager
def celery_worker(*, db_url: str | None = None, env: dict[str, str] | None = None,
                  beat: bool = False) -> Iterator[Worker]:
    """A prefork worker (one child) on a queue of its own; jobs of this process go to that queue
    while it runs. With `beat`, it also runs the beat schedule (the stale-search sweep) in-process.
    Always stopped afterwards."""
    require_worker_setup()
    queue = f"lev-test-{uuid.uuid4().hex[:10]}"
    full_env = {
        **os.environ,
        "DATABASE_URL": db_url or database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "DB_CONN_MAX_AGE": "0",
        **(env or {}),
    }
    log = Path(tempfile.mkstemp(prefix="lev-worker-", suffix=".log")[1])
    celery = Path(sys.executable).parent / "celery"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(celery), "-A", "lev", "worker", "--pool=prefork", "--concurrency=1", "-Q", queue,
             "-n", f"{queue}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat",
             "--loglevel=INFO",
             *(["-B", "--schedule", str(log.with_suffix(".beat"))] if beat else [])],
            cwd=ROOT, env=full_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
    conf = celery_app.conf
    saved = conf.task_always_eager, conf.task_default_queue
    conf.task_always_eager, conf.task_default_queue = False, queue
    worker = Worker(queue, log, process)
    try:
        yield worker
    finally:
        conf.task_always_eager, conf.task_default_queue = saved
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        with celery_app.connection_for_write() as conn:
            conn.default_channel.queue_delete(queue)
        log.unlink(missing_ok=True)
        for leftover in log.parent.glob(log.with_suffix("").name + ".beat*"):
            leftover.unlink(missing_ok=True)


def wait_for(check: Callable[[], object], what: str, worker: Worker | None = None,
             deadline_s: float = DEADLINE_S) -> object:
    """Poll until `check` returns something truthy, up to a deadline."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    tail = f"; worker log tail:\n{worker.tail()}" if worker else ""
    raise AssertionError(f"timed out waiting for {what}{tail}")
