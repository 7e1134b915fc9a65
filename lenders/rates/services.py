"""Writes of market rates: keyword-only, validated data in, one transaction each."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from lenders.rates.models import MarketRate


@dataclass(frozen=True)
class RateRow:
    index: str
    on: dt.date
    rate: Decimal


@dataclass(frozen=True)
class ImportResult:
    created: int
    updated: int
    unchanged: int


@transaction.atomic
def market_rate_set(*, index: str, rate: Decimal, on: dt.date | None = None, source: str = "admin") -> MarketRate:
    """Set an index's rate on a date (today by default): a new row, or the rate of that date changed."""
    row, _ = MarketRate.objects.update_or_create(
        index=index, on=on or timezone.localdate(), defaults={"rate": Decimal(rate), "source": source})
    return row


def market_rates_import(*, rows: Sequence[RateRow], source: str, dry_run: bool = False) -> ImportResult:
    """Write `rows` (each (index, date) at most once) all or nothing: a new (index, date) is created,
    a known one takes the new rate and source. `dry_run` counts what it would do and writes nothing."""
    with transaction.atomic():
        existing = {(r.index, r.on): r for r in MarketRate.objects.filter(
            index__in={row.index for row in rows}, on__gte=min((row.on for row in rows), default=dt.date.max),
            on__lte=max((row.on for row in rows), default=dt.date.min))}
        new = [MarketRate(index=row.index, on=row.on, rate=row.rate, source=source)
               for row in rows if (row.index, row.on) not in existing]
        changed = []
        for row in rows:
            known = existing.get((row.index, row.on))
            if known is not None and known.rate != row.rate:
                known.rate, known.source, known.updated_at = row.rate, source, timezone.now()
                changed.append(known)
        if not dry_run:
            MarketRate.objects.bulk_create(new, batch_size=1000)
            MarketRate.objects.bulk_update(changed, ["rate", "source", "updated_at"], batch_size=1000)
    return ImportResult(created=len(new), updated=len(changed), unchanged=len(rows) - len(new) - len(changed))
