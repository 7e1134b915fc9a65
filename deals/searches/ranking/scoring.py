"""Pure scoring functions: numbers in, numbers out, no database. Each returns 0..1 (1 = best).

The fit of a stated program to a deal — the prior of the ranking (`predict`, which turns it into a
chance of a quote and updates it with the account's own outcomes). Fit is a weighted mean of the
components that can be computed:

* loan size — how centrally the loan sits in the program's range, on a log scale (ranges span
  orders of magnitude: $1M in a $0.5M-$50M range is low, not mid);
* capital source vs business plan — e.g. a fund suits value-add, a balance sheet suits stabilized;
* leverage (LTV) and coverage (DSCR) headroom against the program's limits, when the deal has the
  financials to compute them. Being over a limit lowers the score; it does not exclude the program.
"""

from __future__ import annotations

import math
from typing import NamedTuple

WEIGHTS = {"loan_size": 0.35, "capital": 0.25, "leverage": 0.20, "coverage": 0.20}
NEUTRAL = 0.6  # a component the program leaves open (no stated range or limit)

LTV_HEADROOM_POINTS = 10.0  # full marks at 10 LTV points under the program's max
DSCR_HEADROOM = 0.25  # full marks at 0.25x over the program's min

# How well a capital source suits a business plan.
CAPITAL_FIT = {
    "stabilized": {"balance_sheet": 1.0, "agency": 1.0, "securitized": 0.9, "fund": 0.4, "private": 0.3},
    "value_add": {"fund": 1.0, "private": 0.9, "balance_sheet": 0.6, "securitized": 0.3, "agency": 0.2},
    "construction": {"balance_sheet": 1.0, "fund": 0.9, "private": 0.8, "securitized": 0.1, "agency": 0.1},
    "land": {"private": 1.0, "fund": 0.7, "balance_sheet": 0.5, "securitized": 0.1, "agency": 0.1},
}


class ProgramRow(NamedTuple):
    """The columns of a candidate program the ranking reads (see predict.fetch_candidates)."""

    id: int
    lender_id: int
    title: str
    min_loan_amount: float | None
    max_loan_amount: float | None
    loan_type_mask: int
    state_mask: int
    capital_source_type: str
    max_ltv: float | None
    min_dscr: float | None


class ProgramFit(NamedTuple):
    fit: float
    loan_size: float
    capital: float
    leverage: float | None
    coverage: float | None


def loan_size_fit(amount: float, low: float | None, high: float | None) -> float:
    """1 at the geometric middle of [low, high], 0.25 at either end; NEUTRAL for an open range."""
    if low is None or high is None or low <= 0:
        return NEUTRAL
    if high <= low:
        return 1.0
    position = math.log(amount / low) / math.log(high / low)
    position = min(1.0, max(0.0, position))
    return 0.25 + 0.75 * (1.0 - abs(2.0 * position - 1.0))


def loan_position(amount: float, low: float | None, high: float | None) -> float | None:
    """Where the loan sits in the range on a log scale: 0 = low end, 1 = top; None if open."""
    if low is None or high is None or low <= 0 or high <= low:
        return None
    return min(1.0, max(0.0, math.log(amount / low) / math.log(high / low)))


def headroom_fit(headroom: float, full: float) -> float:
    """0.6..1 with headroom (1 at `full` or more), 0.4..0 when over the limit by up to `full`."""
    if headroom >= 0:
        return 0.6 + 0.4 * min(1.0, headroom / full)
    return max(0.0, 0.4 * (1.0 + headroom / full))


def _limit_fit(headroom: float | None, full: float) -> float:
    """NEUTRAL where the program states no limit, else the headroom's fit."""
    return NEUTRAL if headroom is None else headroom_fit(headroom, full)


def leverage_fit(ltv: float | None, max_ltv: float | None) -> float | None:
    if ltv is None:
        return None
    return _limit_fit(None if max_ltv is None else max_ltv - ltv, LTV_HEADROOM_POINTS)


def coverage_fit(dscr: float | None, min_dscr: float | None) -> float | None:
    if dscr is None:
        return None
    return _limit_fit(None if min_dscr is None else dscr - min_dscr, DSCR_HEADROOM)


def capital_fit(business_plan: str, capital_source: str) -> float:
    if not business_plan or not capital_source:
        return 0.5
    return CAPITAL_FIT.get(business_plan, {}).get(capital_source, 0.5)


def program_fit(*, amount: float, business_plan: str, ltv: float | None, dscr: float | None,
                row: ProgramRow) -> ProgramFit:
    size = loan_size_fit(amount, row.min_loan_amount, row.max_loan_amount)
    capital = capital_fit(business_plan, row.capital_source_type)
    leverage = leverage_fit(ltv, row.max_ltv)
    coverage = coverage_fit(dscr, row.min_dscr)
    total = WEIGHTS["loan_size"] * size + WEIGHTS["capital"] * capital
    weight = WEIGHTS["loan_size"] + WEIGHTS["capital"]
    if leverage is not None:
        total += WEIGHTS["leverage"] * leverage
        weight += WEIGHTS["leverage"]
    if coverage is not None:
        total += WEIGHTS["coverage"] * coverage
        weight += WEIGHTS["coverage"]
    return ProgramFit(total / weight, size, capital, leverage, coverage)
