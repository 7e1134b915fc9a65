"""A replaced ranking run writes nothing while its successor runs."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from deals.searches import services
from deals.searches.models import LenderMatch, LenderSearch
from deals.searches.ranking import DealCriteria, runner
from tests.deals.searches.factories import lender_with, make_deal, refresh

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
