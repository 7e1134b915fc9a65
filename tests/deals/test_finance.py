"""One amortization formula (deals.finance), to the cent: a deal's DSCR and the quote comparison
compute the annual debt service with it, and agree with an independent Decimal reference on 20,000
seeded random loans. Before, the deal's figure was computed in float and `round`ed, which put it a
cent off the comparison's on 3 of 20,000 loans a broker places (and further off on loans near the
money maximum); that cent is the only value this change moves."""

from __future__ import annotations

import random
from decimal import ROUND_HALF_UP, Decimal, localcontext

from deals.finance import amortizing_annual_payment
from deals.models import Deal, DealFinancials
from deals.placements.comparison import debt_service
from lev.limits import AMORTIZATION_YEARS_MAX, AMORTIZATION_YEARS_MIN, INTEREST_RATE_MAX, LOAN_AMOUNT_MIN, MONEY_MAX

LOANS = 20_000


def reference(loan: Decimal, rate: Decimal, months: int) -> Decimal:
    """The annuity written the other way round (P·r·(1+r)^n / ((1+r)^n - 1)) at 60 digits."""
    with localcontext() as ctx:
        ctx.prec = 60
        r = rate / 1200
        if r == 0:
            monthly = loan / months
        else:
            growth = (1 + r) ** months
            monthly = loan * r * growth / (growth - 1)
        return (monthly * 12).quantize(Decimal("0.01"), ROUND_HALF_UP)


def float_formula(loan: Decimal, rate: Decimal, months: int) -> Decimal:
    """What DealFinancials.annual_debt_service computed before (kept here only to measure the change)."""
    monthly_rate = float(rate) / 100 / 12
    payment = float(loan) / months if monthly_rate == 0 else (
        float(loan) * monthly_rate / (1 - (1 + monthly_rate) ** -months))
    return Decimal(str(round(payment * 12, 2)))


def random_loans(seed: int, *, loan_max: Decimal, rate_max: Decimal, years_max: int):
    """LOANS loans to the cent from $100,000, rates to 3 decimals (1 in 100 at 0 %), whole years."""
    rng = random.Random(seed)
    for _ in range(LOANS):
        loan = Decimal(rng.randint(int(LOAN_AMOUNT_MIN * 100), int(loan_max * 100))) / 100
        rate = Decimal(0) if rng.random() < 0.01 else Decimal(rng.randint(1, int(rate_max * 1000))) / 1000
        yield loan, rate, rng.randint(AMORTIZATION_YEARS_MIN, years_max)


def both_callers(loan: Decimal, rate: Decimal, years: int) -> tuple[Decimal | None, Decimal | None]:
    """(a deal's annual debt service, a quote's) for the same loan, rate and amortization."""
    financials = DealFinancials(deal=Deal(loan_amount=loan), interest_rate=rate, amortization_years=years)
    quote, _ = debt_service(loan=loan, rate=rate, amortization_months=years * 12, interest_only_months=0,
                            term_months=None)
    return financials.annual_debt_service, quote


def test_a_deal_and_a_quote_compute_the_same_debt_service_to_the_cent():
    # Loans of $100,000 to $100M at up to 15 %: the loans a broker places.
    changed = []
    for loan, rate, years in random_loans(21, loan_max=Decimal(100_000_000), rate_max=Decimal(15), years_max=50):
        expected = reference(loan, rate, years * 12)
        assert both_callers(loan, rate, years) == (expected, expected), (loan, rate, years)
        before = float_formula(loan, rate, years * 12)
        if before != expected:
            changed.append((loan, rate, years, before - expected))
    # The only value this moves: the deal's figure was a cent off on 3 of these 20,000 loans.
    assert len(changed) == 3, changed
    assert all(abs(diff) == Decimal("0.01") for *_, diff in changed), changed


def test_the_callers_agree_over_every_input_the_api_accepts():
    # Up to the money maximum, the highest rate and the longest amortization a deal takes (where the
    # float formula was off by dollars on the largest loans).
    for loan, rate, years in random_loans(63, loan_max=MONEY_MAX, rate_max=Decimal(INTEREST_RATE_MAX),
                                          years_max=AMORTIZATION_YEARS_MAX):
        expected = reference(loan, rate, years * 12)
        assert both_callers(loan, rate, years) == (expected, expected), (loan, rate, years)


def test_hand_checked_figures():
    assert amortizing_annual_payment(Decimal("10000000"), Decimal("6"), 360) == Decimal("719460.63")
    assert amortizing_annual_payment(Decimal("1200000"), Decimal("0"), 120) == Decimal("120000.00")
    financials = DealFinancials(deal=Deal(loan_amount=Decimal("10000000")), interest_rate=Decimal("6"),
                                amortization_years=30, in_place_noi=Decimal("900000"))
    assert financials.annual_debt_service == Decimal("719460.63")
    assert financials.dscr == Decimal("1.25")


# --- interest-only periods and debt yield (issue 22) ---------------------------------------------------
def test_interest_only_service_and_debt_yield_by_hand():
    from deals.finance import debt_yield, interest_only_annual_payment

    assert interest_only_annual_payment(Decimal("10000000"), Decimal("7.25")) == Decimal("725000.00")
    assert interest_only_annual_payment(Decimal("333333.33"), Decimal("6.125")) == Decimal("20416.67")  # half up
    assert debt_yield(Decimal("900000"), Decimal("10000000")) == Decimal("9.00")
    assert debt_yield(None, Decimal("1")) is None and debt_yield(Decimal("1"), None) is None


def test_lenders_underwrite_interest_only_coverage_for_bridge_loans_and_amortizing_for_the_rest():
    from deals.finance import AMORTIZING, INTEREST_ONLY, coverage, underwritten_basis

    amortizing, io = Decimal("867368.24"), Decimal("725000.00")
    for loan_type in ("light_bridge", "heavy_bridge", "construction", "land", "predevelopment"):
        assert underwritten_basis(loan_type, amortizing_service=amortizing, interest_only_service=io) == INTEREST_ONLY
    for loan_type in ("permanent", "tbd"):
        assert underwritten_basis(loan_type, amortizing_service=amortizing, interest_only_service=io) == AMORTIZING
    # No IO period: amortizing whatever the type; never amortizes: interest only; nothing known: None.
    assert underwritten_basis("light_bridge", amortizing_service=amortizing, interest_only_service=None) == AMORTIZING
    assert underwritten_basis("permanent", amortizing_service=None, interest_only_service=io) == INTEREST_ONLY
    assert underwritten_basis("permanent", amortizing_service=None, interest_only_service=None) is None
    assert coverage(Decimal("900000"), "light_bridge", amortizing_service=amortizing, interest_only_service=io) == {
        "dscr": Decimal("1.24"), "dscr_basis": INTEREST_ONLY, "dscr_interest_only": Decimal("1.24"),
        "dscr_amortizing": Decimal("1.04")}
    assert coverage(None, "light_bridge", amortizing_service=amortizing, interest_only_service=io) == {
        "dscr": None, "dscr_basis": None, "dscr_interest_only": None, "dscr_amortizing": None}


def test_a_deals_interest_only_period_changes_only_what_it_should():
    deal = Deal(loan_amount=Decimal("10000000"), loan_type="light_bridge")
    financials = DealFinancials(deal=deal, in_place_noi=Decimal("900000"), interest_rate=Decimal("7.25"),
                                amortization_years=25)
    assert (financials.dscr, financials.dscr_basis, financials.interest_only_debt_service) == (
        Decimal("1.04"), "amortizing", None)
    financials.interest_only_months = 24
    assert (financials.dscr, financials.dscr_basis, financials.dscr_amortizing) == (
        Decimal("1.24"), "interest_only", Decimal("1.04"))
    assert financials.annual_debt_service == Decimal("867368.24")  # after the IO period: amortizing
    deal.loan_type = "permanent"  # the figures follow the deal's loan type
    assert (financials.dscr, financials.dscr_basis, financials.dscr_interest_only) == (
        Decimal("1.04"), "amortizing", Decimal("1.24"))
