"""Loan sizing per lender program (deals/searches/ranking/sizing.py), worked by hand.

The figures: an amortizing constant is 12 x r / (1 - (1 + r) ** -n) with r the monthly rate and n the
months (deals.finance.amortizing_annual_payment of one dollar); the interest-only constant is the rate.
At 6.25 % over 30 years the constant is 0.0738861 (7.39 % of the loan a year), at 6.00 % 0.0719461, at
5.00 % 0.0644186, at 7.25 % over 25 years 0.0867368.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest

from deals import finance
from deals.searches.ranking import sizing
from deals.searches.ranking.sizing import SizingDeal, SizingTerms, amortizing_constant, size_loan
from lenders.rates.models import MarketRate
from lenders.rates.selectors import index_rates_today


def terms(**fields) -> SizingTerms:
    return SizingTerms(**{"max_ltv": None, "min_dscr": None, "min_debt_yield": None, "max_loan_amount": None,
                          **fields})


def deal(**fields) -> SizingDeal:
    """A $24M permanent loan on a $30M property with $1.9M of NOI, no rate or amortization of its own."""
    return SizingDeal(**{"ask": 24_000_000, "value": 30_000_000, "noi": 1_900_000, "loan_type": "permanent",
                         "interest_rate": None, "amortization_years": None, "interest_only_months": None, **fields})


# --- the worked example of the issue, and each limit binding ---------------------------------------
def test_the_issue_example_a_24m_ask_on_1_9m_noi_sizes_to_21_4m_at_1_20x():
    # Assumptions: no program or deal rate, so the default, 250 bps over a 10-year Treasury of 3.75 % =
    # 6.25 %, amortizing over 30 years: a constant of 0.0738861. 1,900,000 / (1.20 x 0.0738861) = 21,429,391.
    # The program's 75 % LTV allows 22.5M, so DSCR binds.
    got = size_loan(terms(max_ltv=75, min_dscr=1.20), deal(), index_rates={"treasury_10y": 3.75})
    assert (got.rate, got.rate_source, got.amortization_years, got.dscr_basis) == (6.25, "default", 30, "amortizing")
    assert got.constraints == {"ltv": 22_500_000, "dscr": 21_429_391}
    assert (got.max_loan, got.binding, got.shortfall, got.covers) == (21_429_391, "dscr", 2_570_609, False)
    assert got.missing == []
    assert got.summary == "sizes to $21.4M at 1.20x DSCR \N{EM DASH} $2.6M short of the ask"


def test_ltv_binds():
    # 65 % x 27,692,308 = 18,000,000.2; DSCR at the deal's 6.00 %: 2,500,000 / (1.25 x 0.0719461) = 27,798,602.
    got = size_loan(terms(max_ltv=65, min_dscr=1.25), deal(value=27_692_308, noi=2_500_000, interest_rate=6.0),
                    index_rates={})
    assert got.constraints == {"ltv": 18_000_000, "dscr": 27_798_602}
    assert (got.max_loan, got.binding, got.shortfall, got.rate_source) == (18_000_000, "ltv", 6_000_000, "deal")
    assert got.summary == "sizes to $18M at 65% LTV \N{EM DASH} $6M short of the ask"


def test_debt_yield_binds_and_an_exact_fit_covers_the_ask():
    # 1,600,000 / 8 % = 20,000,000; DSCR at 5.00 %: 1,600,000 / (1.20 x 0.0644186) = 20,697,957; LTV 22.5M.
    got = size_loan(terms(max_ltv=75, min_dscr=1.20, min_debt_yield=8),
                    deal(ask=20_000_000, noi=1_600_000, interest_rate=5.0), index_rates={})
    assert got.constraints == {"ltv": 22_500_000, "dscr": 20_697_957, "debt_yield": 20_000_000}
    assert (got.max_loan, got.binding, got.shortfall, got.covers) == (20_000_000, "debt_yield", 0, True)
    assert got.summary == "sizes to $20M (debt yield binds at 8%), covers the ask"


def test_program_max_binds_and_sizes_alone_when_the_other_inputs_are_missing():
    # No NOI: DSCR cannot be worked out; LTV allows 30M; the program lends at most 15M.
    got = size_loan(terms(max_ltv=75, min_dscr=1.20, max_loan_amount=15_000_000), deal(value=40_000_000, noi=None),
                    index_rates={})
    assert got.constraints == {"ltv": 30_000_000, "program_max": 15_000_000}
    assert (got.max_loan, got.binding, got.shortfall) == (15_000_000, "program_max", 9_000_000)
    assert got.missing == ["add NOI to size the loan"]
    assert got.summary == "sizes to $15M at the program's max loan \N{EM DASH} $9M short of the ask"
    alone = size_loan(terms(max_ltv=75, min_dscr=1.20, max_loan_amount=15_000_000), deal(value=None, noi=None),
                      index_rates={})
    assert (alone.max_loan, alone.binding) == (15_000_000, "program_max")
    assert alone.constraints == {"program_max": 15_000_000}
    assert alone.missing == ["add the deal's value or price", "add NOI to size the loan"]


def test_dscr_binds_and_covers():
    # At 6.00 % over 30 years: 1,900,000 / (1.20 x 0.0719461) = 22,007,227 against a 20M ask.
    got = size_loan(terms(min_dscr=1.20), deal(ask=20_000_000, interest_rate=6.0), index_rates={})
    assert (got.max_loan, got.covers, got.shortfall) == (22_007_227, True, 0)
    assert got.summary == "sizes to $22M (DSCR binds at 1.20x), covers the ask"


# --- interest-only or amortizing: the DSCR basis of docs/finance.md ----------------------------------
def test_a_bridge_loan_with_an_interest_only_period_sizes_on_the_interest_only_payment():
    # Issue 22's loan: $900,000 NOI at 7.25 % with 24 months IO. IO: 900,000 / (1.20 x 0.0725) = 10,344,828.
    bridge = deal(ask=10_000_000, noi=900_000, loan_type="light_bridge", interest_rate=7.25, amortization_years=25,
                  interest_only_months=24)
    got = size_loan(terms(min_dscr=1.20), bridge, index_rates={})
    assert (got.dscr_basis, got.interest_only_months, got.max_loan, got.covers) == (
        "interest_only", 24, 10_344_828, True)
    # The same loan as a permanent one is underwritten amortizing over 25 years:
    # 900,000 / (1.20 x 0.0867368) = 8,646,846.
    permanent = size_loan(terms(min_dscr=1.20), SizingDeal(**{**bridge.__dict__, "loan_type": "permanent"}),
                          index_rates={})
    assert (permanent.dscr_basis, permanent.max_loan, permanent.shortfall) == ("amortizing", 8_646_846, 1_353_154)
    assert permanent.summary == "sizes to $8.6M at 1.20x DSCR \N{EM DASH} $1.4M short of the ask"


def test_a_bridge_without_an_interest_only_period_and_a_loan_that_never_amortizes():
    no_io = size_loan(terms(min_dscr=1.20), deal(loan_type="heavy_bridge", interest_rate=7.25,
                                                 amortization_years=25), index_rates={})
    assert no_io.dscr_basis == "amortizing" and no_io.max_loan == round(1_900_000 / (1.20 * 0.0867368236917))
    # A program whose interest-only period runs its whole term never amortizes: interest only, whatever
    # the loan type. 1,900,000 / (1.20 x 0.0725) = 21,839,080.
    full_io = size_loan(terms(min_dscr=1.20, interest_only_months=60, term_months=60),
                        deal(interest_rate=7.25), index_rates={})
    assert (full_io.dscr_basis, full_io.max_loan) == ("interest_only", 21_839_080)


def test_the_programs_amortization_and_interest_only_period_come_before_the_deals():
    got = size_loan(terms(min_dscr=1.20, amortization_years=25, interest_only_months=12),
                    deal(loan_type="construction", interest_rate=7.25, amortization_years=30, interest_only_months=0),
                    index_rates={})
    assert (got.amortization_years, got.interest_only_months, got.dscr_basis) == (25, 12, "interest_only")
    defaults = size_loan(terms(min_dscr=1.20), deal(interest_rate=7.25), index_rates={})
    assert (defaults.amortization_years, defaults.interest_only_months) == (30, 0)


# --- the rate: the program's, the deal's, the default -------------------------------------------------
def test_a_fixed_program_sizes_at_its_ranges_midpoint_or_its_one_end():
    got = size_loan(terms(min_dscr=1.20, rate_type="fixed", fixed_rate_min=6.10, fixed_rate_max=6.60),
                    deal(interest_rate=9.0), index_rates={"treasury_10y": 4.0})
    assert (got.rate, got.rate_source) == (6.35, "program")
    assert got.max_loan == round(1_900_000 / (1.20 * amortizing_constant(6.35, 360)))
    one_end = size_loan(terms(min_dscr=1.20, fixed_rate_max=6.5), deal(interest_rate=9.0), index_rates={})
    assert (one_end.rate, one_end.rate_source) == (6.5, "program")


def test_a_floating_program_sizes_at_todays_index_plus_its_midpoint_spread():
    # SOFR 4.30 % + (250 + 325) / 2 bps = 7.175 %; a heavy bridge with 24 months IO: interest only.
    # 1,900,000 / (1.25 x 0.07175) = 21,184,669.
    program = terms(min_dscr=1.25, rate_type="floating", rate_index="sofr", spread_min_bps=250, spread_max_bps=325)
    bridge = deal(loan_type="heavy_bridge", interest_rate=9.0, interest_only_months=24)
    got = size_loan(program, bridge, index_rates={"sofr": 4.30, "treasury_10y": 4.0})
    assert (got.rate, got.rate_source, got.dscr_basis, got.max_loan) == (7.175, "program", "interest_only", 21_184_669)
    assert got.summary == "sizes to $21.2M at 1.25x DSCR \N{EM DASH} $2.8M short of the ask"
    # No SOFR stored: the program's pricing cannot be read, so the deal's own rate is used.
    unpriced = size_loan(program, bridge, index_rates={"treasury_10y": 4.0})
    assert (unpriced.rate, unpriced.rate_source) == (9.0, "deal")


def test_without_program_or_deal_rate_the_default_spread_over_the_10_year_treasury_then_the_fallback():
    over_index = size_loan(terms(min_dscr=1.20), deal(), index_rates={sizing.DEFAULT_INDEX: 4.10})
    assert (over_index.rate, over_index.rate_source) == (4.10 + sizing.DEFAULT_SPREAD_BPS / 100, "default")
    fallback = size_loan(terms(min_dscr=1.20), deal(), index_rates={"sofr": 4.3})
    assert (fallback.rate, fallback.rate_source) == (sizing.DEFAULT_RATE, "default")
    assert sizing.DEFAULT_INDEX == "treasury_10y" and sizing.DEFAULT_SPREAD_BPS == 250


# --- what is missing ---------------------------------------------------------------------------------
def test_missing_noi_is_not_sized_and_says_what_to_add():
    got = size_loan(terms(min_dscr=1.20, min_debt_yield=8), deal(noi=None), index_rates={})
    assert (got.max_loan, got.binding, got.shortfall, got.covers, got.constraints) == (None, None, None, None, {})
    assert got.missing == ["add NOI to size the loan"]
    assert got.summary == "not sized: add NOI to size the loan"


def test_missing_value_sizes_on_coverage_and_says_what_would_add_leverage():
    got = size_loan(terms(max_ltv=75, min_dscr=1.20), deal(value=None), index_rates={"treasury_10y": 3.75})
    assert (got.max_loan, got.binding) == (21_429_391, "dscr")
    assert got.missing == ["add the deal's value or price"]


def test_no_financials_at_all_and_a_program_stating_no_limit():
    bare = deal(value=None, noi=None)
    got = size_loan(terms(max_ltv=75, min_dscr=1.20), bare, index_rates={})
    assert got.max_loan is None
    assert got.summary == "not sized: add the deal's value or price; add NOI to size the loan"
    nothing = size_loan(terms(), deal(), index_rates={})
    assert nothing.max_loan is None and nothing.missing == [sizing.NO_LIMITS]


def test_as_dict_is_json_ready():
    got = size_loan(terms(max_ltv=75, min_dscr=1.20), deal(), index_rates={"treasury_10y": 3.75}).as_dict()
    assert json.loads(json.dumps(got)) == got
    assert set(got) == {"max_loan", "binding", "shortfall", "covers", "rate", "rate_source", "amortization_years",
                        "interest_only_months", "dscr_basis", "constraints", "missing", "summary"}


# --- the float constant is deals.finance's formula ----------------------------------------------------
@pytest.mark.parametrize("rate", [0, 3.5, 6.25, 7.125, 9.875, 12])
@pytest.mark.parametrize("months", [120, 300, 360, 480])
def test_the_float_constant_gives_deals_finances_annual_payment_to_the_cent(rate, months):
    for loan in (1_000_000, 1_234_567.89, 18_500_000, 21_429_391, 250_000_000):
        expected = finance.amortizing_annual_payment(Decimal(str(loan)), Decimal(str(rate)), months)
        assert round(loan * amortizing_constant(rate, months), 2) == float(expected), (loan, rate, months)


def test_the_program_terms_of_a_lender_program_are_read_as_floats():
    class Program:  # a LenderProgram's attribute names and types, as the runner passes one
        max_ltv, min_dscr, min_debt_yield, max_loan_amount = Decimal("75.00"), Decimal("1.20"), Decimal("8.00"), None
        rate_type, rate_index, spread_min_bps, spread_max_bps = "floating", "sofr", 250, 325
        fixed_rate_min = fixed_rate_max = None
        amortization_years, interest_only_months, term_months_max = 30, 24, 36

    got = SizingTerms.of_program(Program())
    assert got == SizingTerms(max_ltv=75.0, min_dscr=1.2, min_debt_yield=8.0, max_loan_amount=None,
                              rate_type="floating", rate_index="sofr", spread_min_bps=250, spread_max_bps=325,
                              amortization_years=30, interest_only_months=24, term_months=36)


# --- today's index rates (the one read) ----------------------------------------------------------------
@pytest.mark.django_db
def test_index_rates_today_reads_each_indexs_latest_rate_as_a_float(django_assert_num_queries):
    MarketRate.objects.create(index="sofr", on=dt.date(2026, 11, 1), rate=Decimal("4.200"))
    MarketRate.objects.create(index="sofr", on=dt.date(2026, 11, 20), rate=Decimal("4.310"))
    MarketRate.objects.create(index="treasury_10y", on=dt.date(2026, 10, 5), rate=Decimal("4.125"))
    with django_assert_num_queries(1):
        rates = index_rates_today()
    assert rates == {"sofr": 4.31, "treasury_10y": 4.125}
    assert all(type(rate) is float for rate in rates.values())
