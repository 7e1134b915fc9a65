"""Loan arithmetic shared by a deal's own figures and the quote comparison, in Decimal to the cent.

One amortization formula: a deal's DSCR (`DealFinancials.annual_debt_service`) and a quote's
(`deals.placements.comparison`) both call `amortizing_annual_payment`. They used to compute it apart
— the deal's in binary floating point with Python's `round` — and disagreed by a cent on about 3 of
20,000 random loans (tests/deals/test_finance.py).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext

CENT = Decimal("0.01")
HUNDRED = Decimal(100)
# Enough digits that (1 + r) ** -months for 600 months carries every cent of a $1T loan.
PRECISION = 34


def amortizing_annual_payment(loan: Decimal, rate: Decimal, months: int) -> Decimal:
    """Twelve level monthly payments that repay `loan` over `months` at `rate` percent a year, in
    US dollars, rounded half up to the cent (the monthly payment is not rounded first). At 0 % the
    loan is repaid in equal parts."""
    with localcontext() as ctx:
        ctx.prec = PRECISION
        monthly_rate = rate / HUNDRED / 12
        payment = loan / months if monthly_rate == 0 else loan * monthly_rate / (1 - (1 + monthly_rate) ** -months)
        return (payment * 12).quantize(CENT, ROUND_HALF_UP)
