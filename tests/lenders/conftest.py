from __future__ import annotations

import pytest

from tests.lenders.factories import make_deal
from tests.lenders.fixtures import eager_jobs

__all__ = ["eager_jobs"]


@pytest.fixture(autouse=True)
def _eager(eager_jobs):
    yield


@pytest.fixture
def deal(account):
    """A $10M permanent loan on one Texas multifamily property, in `account`."""
    return make_deal(account)
