from __future__ import annotations

import pytest

from tests.deals.fixtures import eager_jobs
from tests.deals.searches.factories import make_deal

__all__ = ["eager_jobs"]


@pytest.fixture(autouse=True)
def _eager(eager_jobs):
    yield


@pytest.fixture
def deal(account):
    """A $10M permanent loan on one Texas multifamily property, in `account`."""
    return make_deal(account)
