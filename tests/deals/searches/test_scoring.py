"""The pure scoring and insight functions (no database)."""

from __future__ import annotations

import pytest

from deals.searches.ranking import insights, scoring
from deals.searches.ranking.scoring import ProgramRow
from lenders.activity import activity_score


def row(**fields) -> ProgramRow:
    values = {"id": 1, "lender_id": 1, "title": "Core", "min_loan_amount": 1e6, "max_loan_amount": 100e6,
              "loan_type_mask": 8, "state_mask": 0, "capital_source_type": "balance_sheet", "max_ltv": 75.0,
              "min_dscr": 1.25}
    return ProgramRow(**{**values, **fields})


def test_loan_size_fit_peaks_at_the_geometric_middle_and_is_lowest_at_the_ends():
    middle = scoring.loan_size_fit(10e6, 1e6, 100e6)  # log-scale middle of $1M-$100M
    assert middle == pytest.approx(1.0)
    assert scoring.loan_size_fit(1e6, 1e6, 100e6) == pytest.approx(0.25)
    assert scoring.loan_size_fit(100e6, 1e6, 100e6) == pytest.approx(0.25)
    assert scoring.loan_size_fit(3e6, 1e6, 100e6) < scoring.loan_size_fit(5e6, 1e6, 100e6) < middle


def test_loan_size_fit_of_an_open_range_is_neutral():
    assert scoring.loan_size_fit(5e6, None, 10e6) == scoring.NEUTRAL
    assert scoring.loan_size_fit(5e6, 1e6, None) == scoring.NEUTRAL


def test_leverage_and_coverage_reward_headroom_and_penalise_breaches():
    assert scoring.leverage_fit(None, 75) is None  # no financials: not part of the fit
    assert scoring.leverage_fit(60, 75) == pytest.approx(1.0)
    assert scoring.leverage_fit(70, 75) == pytest.approx(0.8)
    assert scoring.leverage_fit(75, 75) == pytest.approx(0.6)
    assert scoring.leverage_fit(80, 75) == pytest.approx(0.2)
    assert scoring.leverage_fit(90, 75) == 0.0
    assert scoring.coverage_fit(1.50, 1.25) == pytest.approx(1.0)
    assert scoring.coverage_fit(1.10, 1.25) < 0.4 < scoring.coverage_fit(1.25, 1.25)
    assert scoring.coverage_fit(1.4, None) == scoring.NEUTRAL


def test_capital_source_fit_follows_the_business_plan():
    assert scoring.capital_fit("stabilized", "balance_sheet") > scoring.capital_fit("stabilized", "fund")
    assert scoring.capital_fit("value_add", "fund") > scoring.capital_fit("value_add", "agency")
    assert scoring.capital_fit("", "fund") == 0.5


def test_program_fit_uses_only_the_components_it_can_compute():
    without = scoring.program_fit(amount=10e6, business_plan="stabilized", ltv=None, dscr=None, row=row())
    assert without.leverage is None and without.coverage is None
    assert without.fit == pytest.approx((0.35 * 1.0 + 0.25 * 1.0) / 0.6)
    breached = scoring.program_fit(amount=10e6, business_plan="stabilized", ltv=85, dscr=1.0, row=row())
    assert breached.fit < without.fit


def test_activity_score_is_bounded():
    assert activity_score(0, 0, None) == pytest.approx(0.125)
    assert activity_score(100, 50, 1) == pytest.approx(1.0)
    assert activity_score(10, 3, 50) == pytest.approx(0.35 * 0.5 + 0.4 * 0.5 + 0.25 * 0.5)


def test_money_is_short():
    assert insights.money(18_500_000) == "$18.5M"
    assert insights.money(750_000) == "$750K"
    assert insights.money(2_000_000_000) == "$2B"
    assert insights.money(900) == "$900"


def test_match_insights_explain_each_aspect_in_short_lines():
    fit = scoring.program_fit(amount=10e6, business_plan="stabilized", ltv=70.0, dscr=1.4, row=row())
    lines = insights.match_insights(
        amount=10e6, business_plan="stabilized", ltv=70.0, dscr=1.4, states=("TX",),
        asset_types=("multifamily",), row=row(), fit=fit, lead=["Sizes to $9.2M at 1.25x DSCR"],
    )
    assert lines == [
        "Sizes to $9.2M at 1.25x DSCR",  # what separates lenders leads (the caller's: sizing, evidence)
        "Coverage: 1.40x DSCR, above this program's 1.25x min",
        "Leverage: 70% LTV, within this program's 75% max",
        "Capital: balance sheet lender, strong fit for stabilized",
        "Loan size: $10M mid-range of $1M-$100M",
        "Asset type: lends on multifamily",
        "Geography: nationwide program, covers TX",
    ]
    assert all(len(line) <= 80 for line in lines)


def test_insights_flag_breaches_and_missing_data():
    program = row(state_mask=8, min_loan_amount=9e6, max_loan_amount=None)
    fit = scoring.program_fit(amount=10e6, business_plan="", ltv=80.0, dscr=None, row=program)
    lines = insights.match_insights(amount=10e6, business_plan="", ltv=80.0, dscr=None, states=("TX", "OK"),
                                    asset_types=("office", "retail"), row=program, fit=fit)
    assert lines[0] == "Coverage: not assessed; add NOI and an interest rate to its financials"
    assert lines[1] == "Leverage: 80% LTV, over this program's 75% max (scores lower)"
    assert lines[2].startswith("Capital: balance sheet lender; set a business plan")
    assert lines[3] == "Loan size: $10M fits (from $9M)"
    assert lines[4] == "Asset type: lends on office, retail"
    assert lines[5] == "Geography: covers TX, OK"
    assert len(lines) == 6
    assert all(len(line) <= 80 for line in lines)


@pytest.mark.parametrize(("ltv", "max_ltv", "expected"), [
    (None, 75.0, "Leverage: not assessed; add the deal's value or price to its financials"),
    (65.0, 75.0, "Leverage: 65% LTV, within this program's 75% max"),
    (75.0, 75.0, "Leverage: 75% LTV, within this program's 75% max"),
    (62.5, None, "Leverage: 62.5% LTV; this program states no max LTV"),
    (80.25, 75.0, "Leverage: 80.2% LTV, over this program's 75% max (scores lower)"),
])
def test_leverage_says_the_deals_ltv_against_the_programs_max(ltv, max_ltv, expected):
    assert insights.leverage_insight(ltv, max_ltv) == expected


@pytest.mark.parametrize(("dscr", "min_dscr", "expected"), [
    (None, 1.25, "Coverage: not assessed; add NOI and an interest rate to its financials"),
    (1.4, 1.25, "Coverage: 1.40x DSCR, above this program's 1.25x min"),
    (1.25, 1.25, "Coverage: 1.25x DSCR, meets this program's 1.25x min"),
    (1.1, None, "Coverage: 1.10x DSCR; this program states no min DSCR"),
    (1.1, 1.25, "Coverage: 1.10x DSCR, below this program's 1.25x min (scores lower)"),
])
def test_coverage_says_the_deals_dscr_against_the_programs_min(dscr, min_dscr, expected):
    assert insights.coverage_insight(dscr, min_dscr) == expected
