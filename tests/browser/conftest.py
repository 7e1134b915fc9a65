"""The browser walks read pages, not a database: they run once, in the embedded (SQLite) run that `make
run` serves, and skip in the PostgreSQL run (CI time: they are the suite's slowest files). A walk whose
subject is the production stack behind the page (a real Celery worker ranking on PostgreSQL) is marked
`all_databases` and runs in both."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("DATABASE_URL"):
        return
    skip = pytest.mark.skip(reason="the browser walks run in the embedded (SQLite) run")
    for item in items:
        if Path(item.path).resolve().parent == HERE and not item.get_closest_marker("all_databases"):
            item.add_marker(skip)
