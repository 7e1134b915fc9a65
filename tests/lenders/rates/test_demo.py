"""The demo's market rates (deals.demo.rates): business days of every index over about 18 months at
plausible levels, the same rate for the same date whenever it is run, nothing duplicated on a re-run,
an admin's rate kept; and the demo history's floating quotes are priced at their own dates."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal

import pytest

from deals.demo.directory import seed_directory
from deals.demo.history import HISTORY_DESCRIPTION, seed_market_history
from deals.demo.rates import DEMO_DAYS, demo_rates, seed_market_rates
from deals.models import Deal, TermSheet
from deals.placements.comparison import term_sheet_comparison
from lenders.rates.models import MarketRate
from lenders.rates.services import market_rate_set
from lev.enums import RATE_INDEXES

pytestmark = pytest.mark.django_db

TODAY = dt.date(2026, 11, 24)  # a Tuesday
LEVELS = {"sofr": (3.8, 4.8), "term_sofr_1m": (3.8, 4.8), "term_sofr_3m": (3.8, 4.9), "prime": (6.9, 8.1),
          "treasury_5y": (3.4, 4.3), "treasury_7y": (3.5, 4.5), "treasury_10y": (3.6, 4.7)}


def test_business_days_of_every_index_at_plausible_levels_once(django_assert_max_num_queries):
    with django_assert_max_num_queries(40):  # bulk inserts (SQLite takes fewer rows per insert)
        made = seed_market_rates(today=TODAY)
    days = set(MarketRate.objects.values_list("on", flat=True))
    assert made == MarketRate.objects.count() == len(days) * len(RATE_INDEXES) and 370 < len(days) < 400
    assert all(day.weekday() < 5 for day in days) and max(days) == TODAY
    assert min(days) >= TODAY - dt.timedelta(days=DEMO_DAYS)
    for index, (low, high) in LEVELS.items():
        rates = [float(r) for r in MarketRate.objects.filter(index=index).values_list("rate", flat=True)]
        assert low < min(rates) and max(rates) < high, index
    daily = [float(r) for r in MarketRate.objects.filter(index="sofr").order_by("on").values_list("rate", flat=True)]
    assert max(abs(a - b) for a, b in itertools.pairwise(daily)) < 0.1  # smooth
    assert set(MarketRate.objects.values_list("source", flat=True)) == {"demo"}

    market_rate_set(index="sofr", on=TODAY, rate=Decimal("5.000"))  # an admin's rate is kept
    assert seed_market_rates(today=TODAY) == 0
    assert MarketRate.objects.get(index="sofr", on=TODAY).rate == Decimal("5.000")
    # The next day adds that day; a date's rate does not depend on when the demo ran.
    assert seed_market_rates(today=TODAY + dt.timedelta(days=1)) == len(RATE_INDEXES)
    on = TODAY - dt.timedelta(days=28)
    assert MarketRate.objects.get(index="prime", on=on).rate == demo_rates(on)["prime"]


def test_the_history_quotes_compare_at_their_dates(account):
    seed_directory(60, seed=7)
    seed_market_rates()
    seed_market_history(account, seed=7, deals=40)
    floating = TermSheet.objects.filter(deal__description=HISTORY_DESCRIPTION, rate_type="floating",
                                        deleted_at=None).exclude(placement__status="declined").first()
    assert floating is not None
    comparison = term_sheet_comparison(deal=Deal.objects.get(pk=floating.deal_id))
    priced = [q for q in comparison.quotes if q.rate_type == "floating"]
    assert priced and all(q.base_rate is not None for q in priced)
    assert all(0 <= (q.quoted_on - q.base_rate_as_of).days <= 3 for q in priced)  # a business day's rate
