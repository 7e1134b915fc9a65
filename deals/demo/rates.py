"""The demo's market rates: a plausible, deterministic dated history of every rate index.

Business days over the last `DEMO_DAYS` days, moving smoothly around recent levels (SOFR and Term
SOFR about 4.3 %, Prime 7.5 %, Treasuries 3.9-4.2 %). Each rate is a function of its date alone, so a
re-run, on any day, writes the same rate for the same date. Idempotent: a date an index already has a
rate for (an admin's, an import's or an earlier run's) is left as it is; only missing dates are added.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import ROUND_HALF_UP, Decimal

from django.db import transaction
from django.utils import timezone

from lenders.rates.models import MarketRate
from lev.enums import RATE_INDEXES

DEMO_DAYS = 550  # about 18 months
SOURCE = "demo"
_EPOCH = dt.date(2000, 1, 1)
_PLACES = Decimal("0.001")


def _wave(day: int, period: float, phase: float = 0.0) -> float:
    return math.sin(2 * math.pi * day / period + phase)


def demo_rates(on: dt.date) -> dict[str, Decimal]:
    """Every index's demo rate on `on`, percent per year."""
    t = (on - _EPOCH).days
    sofr = 4.30 + 0.30 * _wave(t, 540) + 0.04 * _wave(t, 41, 1.0)
    five = 3.90 + 0.25 * _wave(t, 300, 1.3) + 0.06 * _wave(t, 23, 0.4)
    rates = {
        "sofr": sofr,
        "term_sofr_1m": sofr + 0.02 + 0.015 * _wave(t, 29, 2.0),
        "term_sofr_3m": sofr + 0.03 - 0.06 * _wave(t, 120, 0.7),
        # Prime follows the policy rate in quarter-point steps.
        "prime": round((sofr + 3.2) * 4) / 4,
        "treasury_5y": five,
        "treasury_7y": five + 0.12 + 0.03 * _wave(t, 61, 0.2),
        "treasury_10y": five + 0.30 + 0.05 * _wave(t, 97, 2.4),
    }
    return {index: Decimal(str(rates[index])).quantize(_PLACES, ROUND_HALF_UP) for index in RATE_INDEXES}


def business_days(first: dt.date, last: dt.date) -> list[dt.date]:
    days = (first + dt.timedelta(days=n) for n in range((last - first).days + 1))
    return [day for day in days if day.weekday() < 5]


@transaction.atomic
def seed_market_rates(*, today: dt.date | None = None) -> int:
    """Add the demo's rates of every index on the business days of the last DEMO_DAYS days that have
    none yet; returns how many were added."""
    today = today or timezone.localdate()
    first = today - dt.timedelta(days=DEMO_DAYS)
    existing = set(MarketRate.objects.filter(on__gte=first, on__lte=today).values_list("index", "on"))
    missing = [MarketRate(index=index, on=day, rate=rate, source=SOURCE)
               for day in business_days(first, today) for index, rate in demo_rates(day).items()
               if (index, day) not in existing]
    MarketRate.objects.bulk_create(missing, batch_size=1000)
    return len(missing)
