"""Loan sizing per lender program: the most a program would lend on a deal, which limit binds, and
whether that covers the ask (issue 37). Pure: no database access; the caller passes what it read
(the program's terms, the deal's figures, today's index rates: `lenders.rates.selectors.index_rates_today`).

The largest loan is the least of the program's limits whose inputs are known:

* LTV:         max_ltv / 100 x value (the deal's estimated value, else its purchase price);
* DSCR:        NOI / (min_dscr x annual debt constant);
* debt yield:  NOI / (min_debt_yield / 100);
* program max: the program's max loan amount.

The annual debt constant is a year's debt service per dollar of loan, on the basis lenders underwrite
(docs/finance.md, `deals.finance.underwritten_basis`): the interest-only constant (rate / 100) for a
bridge, construction, land or predevelopment loan with an interest-only period, and for a loan that
never amortizes within its term; otherwise the amortizing constant, `deals.finance.amortizing_annual_payment`
of one dollar, computed here in floats for speed (a ranking sizes every program of a search) and held
to the Decimal formula to the cent on loans of $1M and more by tests/deals/searches/test_sizing.py.

The rate, in this order: the program's own pricing (a fixed range's midpoint, or the one end stated;
a floating program: today's rate of its index plus its spread's midpoint); else the deal's own interest
rate; else DEFAULT_SPREAD_BPS over today's DEFAULT_INDEX; else DEFAULT_RATE. Amortization and the
interest-only period: the program's when stated, else the deal's, else 30 years and none.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from decimal import Decimal
from typing import Any

from deals.finance import AMORTIZING, INTEREST_ONLY, underwritten_basis
from deals.searches.ranking.insights import money

# The one read sizing needs, today's index rates, is a selector of lenders.rates (one query); named here
# too so the runner takes everything sizing needs from this module. Nothing below touches the database.
from lenders.rates.selectors import index_rates_today
from lev.limits import AMORTIZATION_YEARS_DEFAULT

__all__ = ["Sizing", "SizingDeal", "SizingTerms", "index_rates_today", "size_loan"]

# When neither the program nor the deal states a rate: a spread a permanent lender commonly quotes over
# the 10-year Treasury (the index fixed-rate commercial loans are priced on)...
DEFAULT_INDEX = "treasury_10y"
DEFAULT_SPREAD_BPS = 250
# ...and when not even that index's rate is stored: a conservative all-in rate (10-year Treasury of about
# 4.25 % plus the spread), so a deal sizes rather than not at all.
DEFAULT_RATE = 6.75
DEFAULT_AMORTIZATION_YEARS = AMORTIZATION_YEARS_DEFAULT  # 30, as a deal's own default
DEFAULT_INTEREST_ONLY_MONTHS = 0

LTV, DSCR, DEBT_YIELD, PROGRAM_MAX = "ltv", "dscr", "debt_yield", "program_max"
# The order constraints are listed in, and the one named when two bind at the same amount.
CONSTRAINTS = (LTV, DSCR, DEBT_YIELD, PROGRAM_MAX)

ADD_NOI = "add NOI to size the loan"
ADD_VALUE = "add the deal's value or price"
NO_LIMITS = "the program states no max LTV, min DSCR, min debt yield or max loan"


@dataclass(frozen=True)
class SizingTerms:
    """What sizing reads of a program (all optional)."""

    max_ltv: float | None  # percent
    min_dscr: float | None
    min_debt_yield: float | None  # percent
    max_loan_amount: float | None
    rate_type: str = ""  # '', 'fixed', 'floating'
    rate_index: str = ""
    spread_min_bps: int | None = None
    spread_max_bps: int | None = None
    fixed_rate_min: float | None = None
    fixed_rate_max: float | None = None
    amortization_years: int | None = None
    interest_only_months: int | None = None
    term_months: int | None = None  # the max term, if stated

    @classmethod
    def of_program(cls, program: Any) -> SizingTerms:
        """The terms of a LenderProgram (or anything with its attribute names), as floats."""
        def number(name: str) -> float | None:
            value = getattr(program, name, None)
            return None if value is None else float(value)

        return cls(max_ltv=number("max_ltv"), min_dscr=number("min_dscr"), min_debt_yield=number("min_debt_yield"),
                   max_loan_amount=number("max_loan_amount"), rate_type=program.rate_type or "",
                   rate_index=program.rate_index or "", spread_min_bps=program.spread_min_bps,
                   spread_max_bps=program.spread_max_bps, fixed_rate_min=number("fixed_rate_min"),
                   fixed_rate_max=number("fixed_rate_max"), amortization_years=program.amortization_years,
                   interest_only_months=program.interest_only_months, term_months=program.term_months_max)


@dataclass(frozen=True)
class SizingDeal:
    """What sizing reads of the deal."""

    ask: float  # the requested loan amount
    value: float | None  # estimated value, else purchase price
    noi: float | None  # in place, else stabilized (as DealFinancials.noi)
    loan_type: str  # for the DSCR basis rule of deals.finance.underwritten_basis
    interest_rate: float | None  # the deal's own rate, percent
    amortization_years: int | None
    interest_only_months: int | None


@dataclass(frozen=True)
class Sizing:
    """A program's sizing of a deal. `max_loan` None: not sized (`missing` says what to add)."""

    max_loan: float | None
    binding: str | None  # 'ltv' | 'dscr' | 'debt_yield' | 'program_max'
    shortfall: float | None  # ask - max_loan, 0 when covered
    covers: bool | None
    rate: float  # percent, the rate the DSCR limit used
    rate_source: str  # 'program' | 'deal' | 'default'
    amortization_years: int
    interest_only_months: int
    dscr_basis: str  # 'interest_only' | 'amortizing'
    constraints: dict[str, float] = field(default_factory=dict)  # each limit's own max loan
    missing: list[str] = field(default_factory=list)
    summary: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- the debt constant ------------------------------------------------------------------------------
def amortizing_constant(rate: float, months: int) -> float:
    """A year's level monthly payments per dollar repaid over `months` at `rate` percent a year:
    deals.finance.amortizing_annual_payment(1, rate, months) in floats."""
    monthly = rate / 100 / 12
    if monthly == 0:
        return 12 / months
    return 12 * monthly / (1 - (1 + monthly) ** -months)


def interest_only_constant(rate: float) -> float:
    """A year's interest per dollar at `rate` percent."""
    return rate / 100


# --- the rate ---------------------------------------------------------------------------------------
def _middle(low: float | None, high: float | None) -> float | None:
    ends = [v for v in (low, high) if v is not None]
    return sum(ends) / len(ends) if ends else None


def program_rate(terms: SizingTerms, index_rates: dict[str, float]) -> float | None:
    """The program's own rate, percent: its fixed range's midpoint, or today's index plus its spread's
    midpoint; None when it states no pricing sizing can use (or its index has no rate stored). A program
    stating both (rate_type "") is read as fixed."""
    fixed = _middle(terms.fixed_rate_min, terms.fixed_rate_max)
    if fixed is not None and terms.rate_type != "floating":
        return fixed
    spread = _middle(terms.spread_min_bps, terms.spread_max_bps)
    index = index_rates.get(terms.rate_index)
    if spread is not None and index is not None and terms.rate_type != "fixed":
        return index + spread / 100
    return None


def sizing_rate(terms: SizingTerms, deal: SizingDeal, index_rates: dict[str, float]) -> tuple[float, str]:
    """(rate in percent, where it came from: 'program', 'deal' or 'default')."""
    rate = program_rate(terms, index_rates)
    if rate is not None:
        return rate, "program"
    if deal.interest_rate is not None:
        return deal.interest_rate, "deal"
    index = index_rates.get(DEFAULT_INDEX)
    return (DEFAULT_RATE if index is None else index + DEFAULT_SPREAD_BPS / 100), "default"


# --- sizing -----------------------------------------------------------------------------------------
def size_loan(terms: SizingTerms, deal: SizingDeal, *, index_rates: dict[str, float]) -> Sizing:
    """The most `terms` would lend on `deal` (see the module's docstring for the rules)."""
    rate, rate_source = sizing_rate(terms, deal, index_rates)
    years = next(v for v in (terms.amortization_years, deal.amortization_years, DEFAULT_AMORTIZATION_YEARS)
                 if v is not None)
    io_months = next(v for v in (terms.interest_only_months, deal.interest_only_months,
                                 DEFAULT_INTEREST_ONLY_MONTHS) if v is not None)
    # As deals.finance.debt_service: it amortizes when it has an amortization and the interest-only
    # period ends within the term (no term stated: it does).
    amortizes = bool(years) and (terms.term_months is None or io_months < terms.term_months)
    marker = Decimal(1)  # underwritten_basis asks only which services exist
    basis = underwritten_basis(deal.loan_type, amortizing_service=marker if amortizes else None,
                               interest_only_service=marker if io_months or not amortizes else None)
    constant = interest_only_constant(rate) if basis == INTEREST_ONLY else amortizing_constant(rate, years * 12)

    constraints: dict[str, float] = {}
    missing: list[str] = []
    if terms.max_ltv is not None:
        if deal.value is not None:
            constraints[LTV] = terms.max_ltv / 100 * deal.value
        else:
            missing.append(ADD_VALUE)
    needs_noi = terms.min_dscr is not None or terms.min_debt_yield is not None
    if needs_noi and deal.noi is None:
        missing.append(ADD_NOI)
    if deal.noi is not None:
        noi = max(deal.noi, 0.0)
        if terms.min_dscr is not None and terms.min_dscr > 0 and constant > 0:
            constraints[DSCR] = noi / (terms.min_dscr * constant)
        if terms.min_debt_yield is not None and terms.min_debt_yield > 0:
            constraints[DEBT_YIELD] = noi / (terms.min_debt_yield / 100)
    if terms.max_loan_amount is not None:
        constraints[PROGRAM_MAX] = terms.max_loan_amount
    if terms.max_ltv is None and not needs_noi and terms.max_loan_amount is None:
        missing.append(NO_LIMITS)
    constraints = {name: float(round(amount)) for name, amount in constraints.items()}

    max_loan = binding = shortfall = covers = None
    if constraints:
        binding = min(CONSTRAINTS, key=lambda name: constraints.get(name, float("inf")))
        max_loan = constraints[binding]
        shortfall = float(round(max(deal.ask - max_loan, 0.0)))
        covers = shortfall == 0
    sizing = Sizing(max_loan=max_loan, binding=binding, shortfall=shortfall, covers=covers, rate=round(rate, 3),
                    rate_source=rate_source, amortization_years=years, interest_only_months=io_months,
                    dscr_basis=basis or AMORTIZING, constraints=constraints, missing=missing)
    return replace(sizing, summary=summary(sizing, terms))


def _percent(value: float) -> str:
    """65 -> 65%, 62.5 -> 62.5%, 8.25 -> 8.25%."""
    return f"{round(value, 2):g}%"


def summary(sizing: Sizing, terms: SizingTerms) -> str:
    """One sentence a broker reads: "sizes to $21.4M at 1.20x DSCR — $2.6M short of the ask", "sizes to
    $22.9M (DSCR binds at 1.25x), covers the ask", "not sized: add NOI to size the loan"."""
    if sizing.max_loan is None:
        return "not sized: " + "; ".join(sizing.missing)
    limit = {LTV: (f"{_percent(terms.max_ltv or 0)} LTV", f"LTV binds at {_percent(terms.max_ltv or 0)}"),
             DSCR: (f"{terms.min_dscr or 0:.2f}x DSCR", f"DSCR binds at {terms.min_dscr or 0:.2f}x"),
             DEBT_YIELD: (f"a {_percent(terms.min_debt_yield or 0)} debt yield",
                          f"debt yield binds at {_percent(terms.min_debt_yield or 0)}"),
             PROGRAM_MAX: ("the program's max loan", "the program's max loan binds")}[sizing.binding]
    amount = money(sizing.max_loan)
    if sizing.covers:
        return f"sizes to {amount} ({limit[1]}), covers the ask"
    return f"sizes to {amount} at {limit[0]} \N{EM DASH} {money(sizing.shortfall)} short of the ask"
