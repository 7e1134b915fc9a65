"""The term sheet comparison, checked against figures worked out by hand.

The deal: $10M requested on a property valued at $16M with $1M of in-place NOI.

* A — fixed 6 %, $10M, 30-year amortization, 10-year term, no fees. Monthly payment
  10,000,000 * 0.005 / (1 - 1.005^-360) = $59,955.05 (the textbook figure), so $719,460.63 a year;
  DSCR 1,000,000 / 719,460.63 = 1.39; LTV 10 / 16 = 62.5 %.
* B — SOFR (4.30 %) + 250 bp = 6.80 %, $11M, 2 years interest-only then 30-year amortization over a
  5-year term, 1 % origination + 0.5 % exit fee, full recourse, lender minimum DSCR 1.25, max LTV 65 %.
  Fees $110,000 + $55,000; net proceeds $10,890,000; all-in cost 6.80 + 1.5 / 5 years = 7.10 %;
  interest-only service 11,000,000 * 6.8 % = $748,000; amortizing $71,711.77 * 12 = $860,541.25;
  DSCR 1.16 (below 1.25); LTV 68.75 % (above 65 %).
* C — fixed 5.75 %, $8M, interest-only for its whole 3-year term, non-recourse: $460,000 a year,
  DSCR 2.17; the lowest cost, but $2M short of the request.
* D — Prime + 100 bp with no current Prime rate: cannot be priced.
* E — an expired quote.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from deals.finance import amortizing_annual_payment
from deals.models import DealFinancials, TermSheet
from deals.placements.comparison import all_in_cost, debt_service, term_sheet_comparison
from deals.placements.services import placement_update
from lenders.rates.services import market_rate_set
from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote

pytestmark = pytest.mark.django_db

TODAY = dt.date(2026, 11, 22)
D = Decimal


def test_the_arithmetic_by_hand():
    assert amortizing_annual_payment(D("10000000"), D("6"), 360) == D("719460.63")
    assert amortizing_annual_payment(D("1200000"), D("0"), 120) == D("120000.00")  # 0 %: straight-line
    # Interest-only for the whole term (no amortization, or an IO period as long as the term).
    assert debt_service(loan=D("8000000"), rate=D("5.75"), amortization_months=None, interest_only_months=0,
                        term_months=36) == (D("460000.00"), None)
    assert debt_service(loan=D("8000000"), rate=D("5.75"), amortization_months=360, interest_only_months=36,
                        term_months=36) == (D("460000.00"), None)
    assert debt_service(loan=D("11000000"), rate=D("6.8"), amortization_months=360, interest_only_months=24,
                        term_months=60) == (D("860541.25"), D("748000.00"))
    assert debt_service(loan=D("1"), rate=None, amortization_months=360, interest_only_months=0,
                        term_months=60) == (None, None)
    assert all_in_cost(rate=D("6.8"), fee_percent=D("1.5"), term_months=60) == D("7.100")
    assert all_in_cost(rate=D("6"), fee_percent=D("0"), term_months=None) == D("6")
    assert all_in_cost(rate=D("6"), fee_percent=D("1"), term_months=None) is None  # fees, but no term to spread


@pytest.fixture
def quotes(account):
    deal = deal_with_financials(account)
    market_rate_set(index="sofr", rate=D("4.30"), on=timezone.localdate() - dt.timedelta(days=2))
    ls = lenders(6)
    a = quote(place(deal, ls[0]), fixed_rate=D("6"), amortization_months=360, term_months=120)
    b = quote(place(deal, ls[1]), loan_amount=D("11000000"), rate_type="floating", fixed_rate=None, rate_index="sofr",
              spread_bps=250, interest_only_months=24, amortization_months=360, term_months=60,
              origination_fee_percent=D("1"), exit_fee_percent=D("0.5"), recourse="full", min_dscr=D("1.25"),
              max_ltv=D("65"))
    c = quote(place(deal, ls[2]), loan_amount=D("8000000"), fixed_rate=D("5.75"), amortization_months=None,
              term_months=36, recourse="non_recourse", expires_on=TODAY + dt.timedelta(days=10))
    d = quote(place(deal, ls[3]), rate_type="floating", fixed_rate=None, rate_index="prime", spread_bps=100)
    e = quote(place(deal, ls[4]), fixed_rate=D("4"), expires_on=TODAY - dt.timedelta(days=1))
    declined = place(deal, ls[5])
    quote(declined, fixed_rate=D("3"))
    placement_update(placement=declined, data={"status": "declined"})  # its quote is out of the running
    return deal, {"A": a.id, "B": b.id, "C": c.id, "D": d.id, "E": e.id}


def test_quotes_on_one_basis_best_first_with_notes(quotes):
    deal, ids = quotes
    comparison = term_sheet_comparison(deal=deal, today=TODAY)
    by_id = {q.term_sheet_id: q for q in comparison.quotes}
    name = {v: k for k, v in ids.items()}
    # B is outside its lender's limits at its own terms: after C, which is within them (if $2M short).
    assert [name[q.term_sheet_id] for q in comparison.quotes] == ["A", "C", "B", "D", "E"]
    assert [q.rank for q in comparison.quotes] == [1, 2, 3, 4, 5]
    # A (10 years fixed) and C (3 years fixed, non-recourse) are not alike: no best, the trade-off in words.
    assert comparison.best_term_sheet_id is None
    a, c = (by_id[ids[k]].lender_name for k in "AC")
    assert comparison.trade_offs == [
        f"{a} (10 years fixed, recourse not given) against {c} (3 years fixed, non-recourse): $2M more proceeds "
        "for 0.25 points more all-in"]
    groups = {name[q.term_sheet_id]: (q.group, q.sound, q.best_in_group) for q in comparison.quotes}
    assert groups == {
        "A": ("8 years and more fixed, recourse not given", True, True),
        "C": ("up to 3 years fixed, non-recourse", True, True),
        "B": ("4 to 7 years floating, full recourse", False, False),
        "D": ("8 years and more floating, recourse not given", True, False),  # unpriced: no contender
        "E": ("8 years and more fixed, recourse not given", True, False),  # expired: no contender
    }
    assert (comparison.value, comparison.value_basis, comparison.noi, comparison.noi_basis) == (
        D("16000000"), "estimated_value", D("1000000"), "in_place_noi")
    assert comparison.base_rates == [("sofr", D("4.300"), timezone.localdate() - dt.timedelta(days=2))]

    a, b, c, d, e = (by_id[ids[k]] for k in "ABCDE")
    assert (a.all_in_rate, a.all_in_cost, a.annual_debt_service, a.dscr, a.ltv, a.total_fees) == (
        D("6.000"), D("6.000"), D("719460.63"), D("1.39"), D("62.50"), D("0.00"))
    assert a.notes == []
    assert (b.base_rate, b.all_in_rate, b.all_in_cost) == (D("4.300"), D("6.800"), D("7.100"))
    assert (b.origination_fee, b.exit_fee, b.total_fees, b.net_proceeds) == (
        D("110000.00"), D("55000.00"), D("165000.00"), D("10890000.00"))
    assert (b.annual_debt_service, b.interest_only_debt_service, b.dscr, b.ltv) == (
        D("860541.25"), D("748000.00"), D("1.16"), D("68.75"))
    assert b.notes == ["highest proceeds", "full recourse", "DSCR 1.16x below the lender's 1.25x minimum",
                       "LTV 68.75% above the lender's 65% maximum", "interest-only for 2 years"]
    # A permanent loan is underwritten amortizing; the IO figure is beside it. Debt yield: NOI / quoted loan.
    assert (b.dscr_basis, b.dscr_interest_only, b.dscr_amortizing, b.debt_yield) == (
        "amortizing", D("1.34"), D("1.16"), D("9.09"))
    assert (a.dscr_basis, a.dscr_interest_only, a.dscr_amortizing, a.debt_yield) == (
        "amortizing", None, D("1.39"), D("10.00"))
    assert (c.annual_debt_service, c.interest_only_debt_service, c.dscr) == (D("460000.00"), None, D("2.17"))
    # Never amortizes: interest only is its one debt service.
    assert (c.dscr_basis, c.dscr_interest_only, c.dscr_amortizing, c.debt_yield) == (
        "interest_only", D("2.17"), None, D("12.50"))
    assert c.notes == ["lowest all-in cost", "non-recourse", "$2M short of the $10M requested",
                       "interest-only for the whole term", f"expires {(TODAY + dt.timedelta(days=10)).isoformat()}"]
    assert (d.all_in_rate, d.all_in_cost, d.annual_debt_service, d.dscr) == (None, None, None, None)
    assert d.notes == [f"no Prime rate on or before {timezone.localdate().isoformat()}: all-in rate unknown"]
    assert e.expired and e.notes == [f"expired {(TODAY - dt.timedelta(days=1)).isoformat()}"]
    assert comparison.unavailable == [
        f"All-in rate of floating quotes over Prime: no Prime rate on or before {timezone.localdate().isoformat()} "
        "(an admin adds rates under Market rates, or `manage.py import_market_rates`)"]


@pytest.mark.parametrize("loan_type", ["light_bridge", "heavy_bridge", "construction"])
def test_a_bridge_quote_with_an_interest_only_period_is_held_to_its_interest_only_coverage(quotes, loan_type):
    # Issue 22: bridge lenders underwrite the interest-only payment; B's 1.16x amortizing DSCR read as
    # "below the lender's 1.25x minimum" although the loan pays interest only for its first 2 years.
    deal, ids = quotes
    deal.loan_type = loan_type
    deal.save(update_fields=["loan_type"])
    b = next(q for q in term_sheet_comparison(deal=deal, today=TODAY).quotes if q.term_sheet_id == ids["B"])
    assert (b.dscr, b.dscr_basis, b.dscr_interest_only, b.dscr_amortizing) == (
        D("1.34"), "interest_only", D("1.34"), D("1.16"))
    assert not any(note.startswith("DSCR") for note in b.notes)
    # Its quote asking 1.40x is below, and the note says which coverage.
    TermSheet.objects.filter(pk=ids["B"]).update(min_dscr=D("1.40"))
    b = next(q for q in term_sheet_comparison(deal=deal, today=TODAY).quotes if q.term_sheet_id == ids["B"])
    assert "DSCR interest-only 1.34x below the lender's 1.40x minimum" in b.notes


def test_without_noi_or_value_the_comparison_says_so(quotes):
    deal, ids = quotes
    DealFinancials.objects.filter(deal=deal).update(in_place_noi=None, estimated_value=None, purchase_price=None)
    comparison = term_sheet_comparison(deal=deal, today=TODAY)
    assert all(q.dscr is None and q.ltv is None and q.debt_yield is None for q in comparison.quotes)
    assert comparison.unavailable[:2] == [
        "DSCR and debt yield: the deal has no NOI (set in_place_noi or stabilized_noi in its financials)",
        "LTV: the deal has no value (set estimated_value or purchase_price in its financials)",
    ]
    # Stabilized NOI and the purchase price stand in when the primary figures are missing.
    DealFinancials.objects.filter(deal=deal).update(stabilized_noi=D("2000000"), purchase_price=D("20000000"))
    again = term_sheet_comparison(deal=deal, today=TODAY)
    a = next(q for q in again.quotes if q.term_sheet_id == ids["A"])
    assert (again.noi_basis, again.value_basis, a.dscr, a.ltv) == ("stabilized_noi", "purchase_price", D("2.78"),
                                                                   D("50.00"))


def test_a_deal_without_quotes_is_an_empty_comparison(account):
    comparison = term_sheet_comparison(deal=deal_with_financials(account))
    assert comparison.quotes == [] and comparison.unavailable == [] and comparison.best_term_sheet_id is None


def test_a_lone_quote_is_not_called_highest(account):
    deal = deal_with_financials(account)
    quote(place(deal, lenders(1)[0]))
    (only,) = term_sheet_comparison(deal=deal, today=TODAY).quotes
    assert only.notes == []


def test_the_comparison_reads_a_constant_number_of_queries(quotes, django_assert_num_queries):
    deal, _ids = quotes
    with django_assert_num_queries(3):
        assert len(term_sheet_comparison(deal=deal, today=TODAY).quotes) == 5


def _floating(deal, lender, *, received: dt.date, index: str = "sofr"):
    term_sheet = quote(place(deal, lender), rate_type="floating", fixed_rate=None, rate_index=index, spread_bps=250)
    at = timezone.make_aware(dt.datetime.combine(received, dt.time(12)))
    TermSheet.objects.filter(pk=term_sheet.pk).update(received_at=at)
    return term_sheet.pk


def test_each_quote_uses_its_index_rate_as_of_its_own_date(account, django_assert_num_queries):
    deal = deal_with_financials(account)
    market_rate_set(index="sofr", on=dt.date(2026, 9, 1), rate=D("4.10"))
    market_rate_set(index="sofr", on=dt.date(2026, 9, 30), rate=D("4.40"))
    market_rate_set(index="sofr", on=dt.date(2026, 10, 5), rate=D("4.60"))  # after both quotes' dates
    market_rate_set(index="term_sofr_3m", on=dt.date(2026, 10, 9), rate=D("4.50"))
    ls = lenders(4)
    early = _floating(deal, ls[0], received=dt.date(2026, 9, 15))  # the rate of Sep 1: 14 days old
    late = _floating(deal, ls[1], received=dt.date(2026, 10, 2))  # the rate of Sep 30
    unpriced = _floating(deal, ls[2], received=dt.date(2026, 10, 2), index="term_sofr_3m")  # none that early
    fresh = _floating(deal, ls[3], received=dt.date(2026, 10, 9), index="term_sofr_3m")  # the rate of its own day
    with django_assert_num_queries(3):
        comparison = term_sheet_comparison(deal=deal, today=TODAY)
    by_id = {q.term_sheet_id: q for q in comparison.quotes}
    assert (by_id[early].base_rate, by_id[early].base_rate_as_of, by_id[early].all_in_rate) == (
        D("4.100"), dt.date(2026, 9, 1), D("6.600"))
    assert (by_id[late].base_rate, by_id[late].base_rate_as_of, by_id[late].all_in_rate) == (
        D("4.400"), dt.date(2026, 9, 30), D("6.900"))
    assert (by_id[fresh].base_rate, by_id[fresh].base_rate_as_of) == (D("4.500"), dt.date(2026, 10, 9))
    assert (by_id[unpriced].base_rate, by_id[unpriced].base_rate_as_of, by_id[unpriced].all_in_rate) == (
        None, None, None)
    # Stale: more than MARKET_RATE_STALE_DAYS (7) before the quote's date; 2 days is not.
    assert "SOFR of 2026-09-01 used, the latest on or before the quote's 2026-09-15" in by_id[early].notes
    assert not any("used, the latest" in note for note in by_id[late].notes + by_id[fresh].notes)
    assert "no 3-month Term SOFR rate on or before 2026-10-02: all-in rate unknown" in by_id[unpriced].notes
    assert comparison.unavailable == [
        "All-in rate of floating quotes over 3-month Term SOFR: no 3-month Term SOFR rate on or before 2026-10-02 "
        "(an admin adds rates under Market rates, or `manage.py import_market_rates`)"]
    assert comparison.base_rates == [("sofr", D("4.100"), dt.date(2026, 9, 1)),
                                     ("sofr", D("4.400"), dt.date(2026, 9, 30)),
                                     ("term_sofr_3m", D("4.500"), dt.date(2026, 10, 9))]


def _broker_deal(account):
    """Issue 39's deal: a $24M permanent multifamily acquisition on a $32M value, $2.1M of NOI, with a
    3-year floating quote (SOFR 4.61 % + 285, interest only, partial recourse, 1 % + 0.5 % fees, no minimum
    DSCR of its own) and a 10-year fixed 5.85 % non-recourse quote of $22.5M with a 70.3 % maximum LTV."""
    deal = deal_with_financials(account, loan_amount=D("24000000"), loan_type="permanent")
    DealFinancials.objects.filter(deal=deal).update(estimated_value=D("32000000"), in_place_noi=D("2100000"))
    market_rate_set(index="sofr", rate=D("4.61"), on=timezone.localdate() - dt.timedelta(days=1))
    soft, fixed = lenders(2)
    floating = quote(place(deal, soft), loan_amount=D("24000000"), rate_type="floating", fixed_rate=None,
                     rate_index="sofr", spread_bps=285, term_months=36, amortization_months=None,
                     recourse="partial", origination_fee_percent=D("1"), exit_fee_percent=D("0.5"))
    ten_year = quote(place(deal, fixed), loan_amount=D("22500000"), fixed_rate=D("5.85"), term_months=120,
                     amortization_months=360, recourse="non_recourse", max_ltv=D("70.3"))
    return deal, floating, ten_year


def test_a_quote_is_held_to_the_loan_types_usual_coverage_and_limits_at_their_own_precision(account):
    # Issue 39: the floating quote led because it covered the ask, although its own terms give a coverage no
    # permanent lender takes; the fixed quote read "LTV 70.31% above the lender's 70.3% maximum".
    deal, floating, ten_year = _broker_deal(account)
    comparison = term_sheet_comparison(deal=deal)
    first, second = comparison.quotes
    assert (first.term_sheet_id, second.term_sheet_id) == (ten_year.pk, floating.pk)
    assert first.ltv == D("70.31") and first.sound
    assert not any(note.startswith("LTV") for note in first.notes)
    assert first.dscr == D("1.32") and second.dscr == D("1.17") and not second.sound
    assert "DSCR 1.17x below the 1.25x usual for a permanent loan (the quote states no minimum)" in second.notes
    # The one quote within its limits is the best; nothing to trade off.
    assert comparison.best_term_sheet_id == ten_year.pk and comparison.trade_offs == []
    # A limit typed with two places is compared with two: 70.31 is above 70.30.
    TermSheet.objects.filter(pk=ten_year.pk).update(max_ltv=D("70.25"))
    first = term_sheet_comparison(deal=deal).quotes[1]
    assert "LTV 70.31% above the lender's 70.25% maximum" in first.notes and not first.sound


def test_quotes_not_alike_are_not_ranked_into_one_best_but_traded_off_in_words(account):
    deal, floating, ten_year = _broker_deal(account)
    DealFinancials.objects.filter(deal=deal).update(in_place_noi=D("2400000"))  # both quotes within limits now
    comparison = term_sheet_comparison(deal=deal)
    assert [q.term_sheet_id for q in comparison.quotes] == [floating.pk, ten_year.pk]  # it covers the ask
    assert all(q.sound and q.best_in_group for q in comparison.quotes)
    assert comparison.best_term_sheet_id is None
    soft, fixed = floating.placement.lender.name, ten_year.placement.lender.name
    # 7.46 % + 1.5 points of fees over 3 years = 7.96 % all-in, against 5.85 %.
    assert comparison.trade_offs == [
        f"{soft} (3 years floating, partial recourse) against {fixed} (10 years fixed, non-recourse): "
        "$1.5M more proceeds for 2.11 points more all-in"]


def test_the_chosen_winner_comes_first_and_is_the_best(account):
    from deals.placements.services import term_sheet_select_winner

    deal, floating, _ten_year = _broker_deal(account)
    term_sheet_select_winner(term_sheet=floating)
    comparison = term_sheet_comparison(deal=deal)
    assert comparison.quotes[0].term_sheet_id == floating.pk and comparison.quotes[0].winning
    assert comparison.best_term_sheet_id == floating.pk and comparison.trade_offs == []
