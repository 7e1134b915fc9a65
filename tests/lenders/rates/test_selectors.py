"""The as-of rule of market rates (lenders.rates.selectors) on the real database: an index's rate as of a
date is its latest rate dated on or before it; none when it has none that early. Each read is one query."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from lenders.rates import selectors
from lenders.rates.models import MarketRate
from lenders.rates.services import RateRow, market_rate_set, market_rates_import

pytestmark = pytest.mark.django_db

D = Decimal
DAY = dt.date(2026, 10, 1)


def day(n: int) -> dt.date:
    return DAY + dt.timedelta(days=n)


@pytest.fixture
def history():
    for n, rate in ((0, "4.30"), (3, "4.32"), (10, "4.35")):
        market_rate_set(index="sofr", on=day(n), rate=D(rate))
    market_rate_set(index="prime", on=day(5), rate=D("7.50"))


def test_the_rate_on_the_date_before_it_and_none_before_the_first(history, django_assert_num_queries):
    with django_assert_num_queries(1):
        on_the_day = selectors.rates_as_of(on=day(3))
    assert {i: (r.rate, r.on) for i, r in on_the_day.items()} == {"sofr": (D("4.32"), day(3))}
    between = selectors.rates_as_of(on=day(9))
    assert {i: (r.rate, r.on) for i, r in between.items()} == {"sofr": (D("4.32"), day(3)), "prime": (D("7.5"), day(5))}
    assert selectors.rates_as_of(on=day(-1)) == {}
    assert set(selectors.rates_as_of(on=day(20), indexes=["prime"])) == {"prime"}
    assert {i: r.on for i, r in selectors.latest_rates().items()} == {"sofr": day(10), "prime": day(5)}


def test_rates_on_many_dates_in_one_query(history, django_assert_num_queries):
    dates = {"sofr": {day(-2), day(0), day(2), day(3), day(40)}, "prime": {day(4), day(6)}, "term_sofr_3m": {day(1)}}
    with django_assert_num_queries(1):
        found = selectors.rates_on_dates(dates=dates)
    assert {key: (row.rate if row else None) for key, row in found.items()} == {
        ("sofr", day(-2)): None, ("sofr", day(0)): D("4.30"), ("sofr", day(2)): D("4.30"),
        ("sofr", day(3)): D("4.32"), ("sofr", day(40)): D("4.35"),
        ("prime", day(4)): None, ("prime", day(6)): D("7.50"), ("term_sofr_3m", day(1)): None,
    }
    assert selectors.rates_on_dates(dates={}) == {}


def test_history_newest_first_between_dates(history):
    assert [r.on for r in selectors.rate_history(index="sofr")] == [day(10), day(3), day(0)]
    assert [r.on for r in selectors.rate_history(index="sofr", since=day(1), until=day(10))] == [day(10), day(3)]
    assert [r.on for r in selectors.rate_history(index="sofr", until=day(2))] == [day(0)]


def test_set_upserts_by_index_and_date_and_import_is_all_or_nothing(history):
    market_rate_set(index="sofr", on=day(3), rate=D("4.40"))
    assert MarketRate.objects.get(index="sofr", on=day(3)).rate == D("4.40")
    assert MarketRate.objects.count() == 4
    rows = [RateRow("sofr", day(3), D("4.41")), RateRow("sofr", day(0), D("4.30")), RateRow("sofr", day(4), D("4.5"))]
    dry = market_rates_import(rows=rows, source="csv x.csv", dry_run=True)
    assert (dry.created, dry.updated, dry.unchanged) == (1, 1, 1) and MarketRate.objects.count() == 4
    done = market_rates_import(rows=rows, source="csv x.csv")
    assert (done.created, done.updated, done.unchanged) == (1, 1, 1) and MarketRate.objects.count() == 5
    changed = MarketRate.objects.get(index="sofr", on=day(3))
    assert (changed.rate, changed.source) == (D("4.41"), "csv x.csv")
    assert MarketRate.objects.get(index="sofr", on=day(0)).source == "admin"  # unchanged, untouched
