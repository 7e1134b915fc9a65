"""Loaded first (`-p tests.xdist_isolation` in pytest's addopts), before pytest-django reads the settings:
under pytest-xdist each worker process gets Redis databases of its own, so the two workers' caches, rate
limits, breaker state and Celery brokers never meet. The workers' PostgreSQL and SQLite test databases are
already their own (pytest-django names them `test_<name>_gw0`, `_gw1`…).

Worker n uses database index (the configured one - n): CI's 15 becomes 15 and 14. Without xdist (or on
the controller) nothing changes."""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

REDIS_VARIABLES = ("REDIS_URL", "CELERY_BROKER_URL")


def worker_number() -> int | None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # set by xdist before the worker's config is made
    return int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else None


def shifted(url: str, by: int) -> str:
    """`url` with its Redis database index lowered by `by` (0 when it names none)."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss"):
        return url
    path = parts.path.strip("/")
    index = int(path) if path.isdigit() else 0
    wanted = index - by
    if wanted < 0:
        raise RuntimeError(f"{parts.scheme} database {index} leaves no room for {by + 1} test workers below it")
    return urlunsplit(parts._replace(path=f"/{wanted}"))


_n = worker_number()
if _n:
    for _name in REDIS_VARIABLES:
        if os.environ.get(_name):
            os.environ[_name] = shifted(os.environ[_name], _n)
