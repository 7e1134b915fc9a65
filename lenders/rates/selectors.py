"""Reads of market rates. The as-of rule: an index's rate as of a date is its latest rate dated on or
before that date; none when it has no rate that early. Every read here is one query, on SQLite and
PostgreSQL alike (a correlated subquery per row, not DISTINCT ON)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping

from django.db.models import OuterRef, Q, QuerySet, Subquery

from lenders.rates.models import MarketRate
from lev.enums import RATE_INDEXES


def _latest_on_or_before(on: dt.date) -> Subquery:
    """The id of the outer row's index's latest rate dated on or before `on`."""
    return Subquery(MarketRate.objects.filter(index=OuterRef("index"), on__lte=on)
                    .order_by("-on").values("pk")[:1])


def rates_as_of(*, on: dt.date, indexes: Iterable[str] = RATE_INDEXES) -> dict[str, MarketRate]:
    """index -> its rate as of `on`, for the indexes that have one (one query)."""
    rows = MarketRate.objects.filter(index__in=list(indexes), on__lte=on, pk=_latest_on_or_before(on))
    return {row.index: row for row in rows}


def latest_rates(*, indexes: Iterable[str] = RATE_INDEXES) -> dict[str, MarketRate]:
    """index -> its latest rate, whatever its date (one query)."""
    latest = Subquery(MarketRate.objects.filter(index=OuterRef("index")).order_by("-on").values("pk")[:1])
    return {row.index: row for row in MarketRate.objects.filter(index__in=list(indexes), pk=latest)}


def rates_on_dates(*, dates: Mapping[str, Iterable[dt.date]]) -> dict[tuple[str, dt.date], MarketRate | None]:
    """(index, date) -> the index's rate as of that date (None: no rate that early), for every date
    of every index in `dates`. One query whatever the number of dates: per index, its rates between
    the first and the last date asked, and its latest rate on or before the first."""
    wanted = {index: sorted(set(days)) for index, days in dates.items() if days}
    if not wanted:
        return {}
    where = Q()
    for index, days in wanted.items():
        first, last = days[0], days[-1]
        where |= Q(index=index, on__gte=first, on__lte=last) | Q(index=index, on__lte=first,
                                                                   pk=_latest_on_or_before(first))
    rows: dict[str, list[MarketRate]] = {}
    for row in MarketRate.objects.filter(where).order_by("index", "on"):
        rows.setdefault(row.index, []).append(row)
    found: dict[tuple[str, dt.date], MarketRate | None] = {}
    for index, days in wanted.items():
        history, latest, position = rows.get(index, []), None, 0
        for day in days:  # both ascending: one walk
            while position < len(history) and history[position].on <= day:
                latest, position = history[position], position + 1
            found[(index, day)] = latest
    return found


def rate_history(*, index: str, since: dt.date | None = None, until: dt.date | None = None) -> QuerySet[MarketRate]:
    """An index's rates, newest first, between `since` and `until` (both included, either open)."""
    rows = MarketRate.objects.filter(index=index)
    if since is not None:
        rows = rows.filter(on__gte=since)
    if until is not None:
        rows = rows.filter(on__lte=until)
    return rows.order_by("-on")


def index_rates_today() -> dict[str, float]:
    """index -> its latest rate (percent per year) as a float, for the indexes that have one (one
    query): what loan sizing (deals.searches.ranking.sizing) prices a floating program over."""
    return {index: float(row.rate) for index, row in latest_rates().items()}
