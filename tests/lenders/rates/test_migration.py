"""deals 0015 on a database that holds base rates: each BaseRate row becomes its index's market rate on
its as_of date (source "admin") and the BaseRate table goes; going back makes each index's BaseRate
from its latest market rate."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from lenders.rates.models import MarketRate

# The schema just before the copy: market rates exist, base rates too.
BEFORE = [("deals", "0013_companies_and_contacts"), ("lenders", "0008_market_rates")]


def migrate(targets):
    """Migrate to `targets` and return the models as they are there. (Not the state executor.migrate
    returns: going back over several apps, that is the state before the last migration it unapplied in
    the graph's order, which lost deals' BaseRate once lenders had a migration after 0008.)"""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def latest():
    return migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_base_rates_are_copied_as_dated_market_rates_and_back():
    try:
        old = migrate(BEFORE)
        BaseRate = old.get_model("deals", "BaseRate")
        BaseRate.objects.create(index="sofr", rate=Decimal("4.310"), as_of=dt.date(2026, 11, 20))
        BaseRate.objects.create(index="prime", rate=Decimal("7.500"), as_of=dt.date(2026, 10, 1))
        # A market rate already on one of those dates takes the base rate's value.
        old.get_model("lenders", "MarketRate").objects.create(index="sofr", on=dt.date(2026, 11, 20),
                                                              rate=Decimal("4.000"), source="demo")
        new = latest()
        with pytest.raises(LookupError):
            new.get_model("deals", "BaseRate")
        rows = sorted(MarketRate.objects.values_list("index", "on", "rate", "source"))
        assert rows == [("prime", dt.date(2026, 10, 1), Decimal("7.500"), "admin"),
                        ("sofr", dt.date(2026, 11, 20), Decimal("4.310"), "admin")]
        MarketRate.objects.create(index="sofr", on=dt.date(2026, 11, 21), rate=Decimal("4.320"))
        back = migrate(BEFORE)
        assert sorted(back.get_model("deals", "BaseRate").objects.values_list("index", "rate", "as_of")) == [
            ("prime", Decimal("7.500"), dt.date(2026, 10, 1)), ("sofr", Decimal("4.320"), dt.date(2026, 11, 21))]
    finally:
        latest()
