"""Fixtures shared by the deal, search, placement and lender tests and the MCP tests (conftests import
them by name, which is how pytest makes them available there)."""

from __future__ import annotations

import pytest

from lev.celery_app import app as celery_app
from tests.deals.searches.factories import make_deal


@pytest.fixture
def eager_jobs():
    """Run Celery jobs in-process, as the embedded default does, even when REDIS_URL is set for
    the test run (only the real-worker test talks to a broker)."""
    conf = celery_app.conf
    saved = conf.task_always_eager, conf.task_eager_propagates
    conf.task_always_eager, conf.task_eager_propagates = True, False
    yield
    conf.task_always_eager, conf.task_eager_propagates = saved


@pytest.fixture(autouse=True)
def jobs_in_process(eager_jobs):
    """`eager_jobs` for every test of a folder whose conftest imports this fixture (it is autouse)."""
    yield


@pytest.fixture
def deal(account):
    """A $10M permanent loan on one Texas multifamily property, in `account`."""
    return make_deal(account)
