"""Provisional sizing (replaced by the sizing branch's module): the API the ranking calls."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from deals.finance import INTEREST_ONLY, INTEREST_ONLY_UNDERWRITTEN
from deals.searches.ranking.insights import money

DEFAULT_INDEX = "treasury_10y"
DEFAULT_SPREAD_BPS = 250
FALLBACK_RATE = 7.0
DEFAULT_AMORTIZATION_YEARS = 30


@dataclass(frozen=True)
class SizingTerms:
    max_ltv: float | None
    min_dscr: float | None
    min_debt_yield: float | None
    max_loan_amount: float | None
    rate_type: str = ""
    rate_index: str = ""
    spread_min_bps: int | None = None
    spread_max_bps: int | None = None
    fixed_rate_min: float | None = None
    fixed_rate_max: float | None = None
    amortization_years: int | None = None
    interest_only_months: int | None = None
    term_months: int | None = None


@dataclass(frozen=True)
class SizingDeal:
    ask: float
    value: float | None
    noi: float | None
    loan_type: str
    interest_rate: float | None
    amortization_years: int | None
    interest_only_months: int | None


@dataclass(frozen=True)
class Sizing:
    max_loan: float | None
    binding: str | None
    shortfall: float | None
    covers: bool | None
    rate: float | None
    rate_source: str | None
    amortization_years: int | None
    interest_only_months: int | None
    dscr_basis: str | None
    constraints: dict = field(default_factory=dict)
    missing: list = field(default_factory=list)
    summary: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


def _mid(low, high):
    values = [v for v in (low, high) if v is not None]
    return sum(values) / len(values) if values else None


def size_loan(terms: SizingTerms, deal: SizingDeal, *, index_rates: dict[str, float]) -> Sizing:
    rate, source = None, None
    fixed = _mid(terms.fixed_rate_min, terms.fixed_rate_max)
    spread = _mid(terms.spread_min_bps, terms.spread_max_bps)
    if fixed is not None:
        rate, source = fixed, "program"
    elif spread is not None and terms.rate_index in index_rates:
        rate, source = index_rates[terms.rate_index] + spread / 100, "program"
    elif deal.interest_rate:
        rate, source = deal.interest_rate, "deal"
    else:
        rate = index_rates.get(DEFAULT_INDEX, FALLBACK_RATE - DEFAULT_SPREAD_BPS / 100) + DEFAULT_SPREAD_BPS / 100
        source = "default"
    years = terms.amortization_years or deal.amortization_years or DEFAULT_AMORTIZATION_YEARS
    io = terms.interest_only_months if terms.interest_only_months is not None else (deal.interest_only_months or 0)
    basis = INTEREST_ONLY if io and deal.loan_type in INTEREST_ONLY_UNDERWRITTEN else "amortizing"
    r = rate / 1200
    constant = rate / 100 if basis == INTEREST_ONLY else (12 * r / (1 - (1 + r) ** (-12 * years)) if r else 1 / years)
    limits: dict[str, float] = {}
    missing: list[str] = []
    if terms.max_ltv is not None:
        if deal.value:
            limits["ltv"] = terms.max_ltv / 100 * deal.value
        else:
            missing.append("add the deal's value or price")
    if terms.min_dscr or terms.min_debt_yield:
        if deal.noi:
            if terms.min_dscr:
                limits["dscr"] = deal.noi / (terms.min_dscr * constant)
            if terms.min_debt_yield:
                limits["debt_yield"] = deal.noi / (terms.min_debt_yield / 100)
        else:
            missing.append("add NOI to size the loan")
    if terms.max_loan_amount is not None:
        limits["program_max"] = terms.max_loan_amount
    if not limits:
        return Sizing(None, None, None, None, rate, source, years, io, basis, {}, missing,
                      "not sized: " + (missing[0] if missing else "the program states no limit"))
    binding = min(limits, key=limits.get)
    max_loan = round(limits[binding])
    shortfall = max(0, round(deal.ask - max_loan))
    at = {"ltv": lambda: f"at {terms.max_ltv:g}% LTV", "dscr": lambda: f"at {terms.min_dscr:.2f}x DSCR",
          "debt_yield": lambda: f"at a {terms.min_debt_yield:g}% debt yield",
          "program_max": lambda: "(the program's max)"}[binding]()
    summary = f"sizes to {money(max_loan)} {at}" + (f" — {money(shortfall)} short of the ask" if shortfall
                                                     else ", covers the ask")
    return Sizing(max_loan, binding, shortfall, shortfall == 0, round(rate, 3), source, years, io, basis,
                  {k: round(v) for k, v in limits.items()}, missing, summary)


def index_rates_today() -> dict[str, float]:
    from lenders.rates.selectors import latest_rates

    return {index: float(rate.rate) for index, rate in latest_rates().items()}
