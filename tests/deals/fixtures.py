"""Fixtures shared by the deal, search and placement tests and the MCP tests (imported by each)."""

from __future__ import annotations

import pytest

from lev.celery_app import app as celery_app


@pytest.fixture
def eager_jobs():
    """Run Celery jobs in-process, as the embedded default does, even when REDIS_URL is set for
    the test run (only the real-worker test talks to a broker)."""
    conf = celery_app.conf
    saved = conf.task_always_eager, conf.task_eager_propagates
    conf.task_always_eager, conf.task_eager_propagates = True, False
    yield
    conf.task_always_eager, conf.task_eager_propagates = saved
