"""A replaced ranking run writes nothing while its successor runs; the directory's loan-size filters."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from lenders import services
from lenders.models import LenderMatch, LenderSearch
from lenders.ranking import DealCriteria, runner
from tests.factories import LenderFactory, LenderProgramFactory
from tests.lenders.factories import lender_with, make_deal, refresh

pytestmark = pytest.mark.django_db


def test_a_stalled_run_cannot_write_while_the_run_that_replaced_it_is_still_going(account, settings,
                                                                                  django_capture_on_commit_callbacks):
    for n in range(3):
        lender_with(f"Lender {n}")
    with django_capture_on_commit_callbacks(execute=False):
        search, _created = services.lender_search_start(deal=make_deal(account))
    stalled = services._claim(search.pk)
    # Its worker went quiet for longer than the stale limit, so another run takes the search over.
    LenderSearch.objects.filter(pk=search.pk).update(
        heartbeat_at=timezone.now() - dt.timedelta(seconds=settings.LEV_SEARCH_STALE_SECONDS + 1))
    successor = services._claim(search.pk)
    assert successor and successor != stalled
    assert refresh(search).status == "running"

    # The stalled run wakes up while its successor still owns the (running) search: it must stop.
    with pytest.raises(runner.LostOwnership):
        runner.RankingRun(search.pk, stalled, DealCriteria.from_dict(search.criteria)).run()
    assert not LenderMatch.objects.filter(search=search).exists()
    search = refresh(search)
    assert (search.status, search.run_token) == ("running", successor)


def test_directory_min_and_max_loan_amount_keep_programs_whose_range_reaches_them(api):
    small = LenderFactory(name="Small Loans Bank")
    LenderProgramFactory(lender=small, min_loan_amount=500_000, max_loan_amount=5_000_000)
    large = LenderFactory(name="Large Loans Fund")
    LenderProgramFactory(lender=large, min_loan_amount=20_000_000, max_loan_amount=200_000_000)

    def names(**query) -> list[str]:
        return sorted(x["name"] for x in api.get("/api/v1/lenders/", query).json()["results"])

    assert names() == ["Large Loans Fund", "Small Loans Bank"]
    # min_loan_amount: lenders that lend at least this much (a program's max reaches it).
    assert names(min_loan_amount=10_000_000) == ["Large Loans Fund"]
    # max_loan_amount: lenders that lend this little (a program's min is at or below it).
    assert names(max_loan_amount=10_000_000) == ["Small Loans Bank"]
    assert names(min_loan_amount=6_000_000, max_loan_amount=10_000_000) == []
