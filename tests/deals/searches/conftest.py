# Jobs run in-process for every test here (jobs_in_process is autouse), as on the embedded default.
import pytest

from deals.searches import services
from deals.searches.models import LenderSearch
from tests.deals.fixtures import deal, eager_jobs, jobs_in_process  # noqa: F401  (fixtures)


@pytest.fixture
def rank(django_capture_on_commit_callbacks):
    """Start a search of the deal, run its job (in-process) and return the finished search."""

    def run(searched) -> LenderSearch:
        with django_capture_on_commit_callbacks(execute=True):
            search, _created = services.lender_search_start(deal=searched)
        search.refresh_from_db()
        return search

    return run

