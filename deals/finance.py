"""Loan arithmetic shared by a deal's own figures, its lender search and the quote comparison, in
Decimal to the cent.

One amortization formula: a deal's DSCR (`DealFinancials`) and a quote's (`deals.placements.comparison`)
both call `amortizing_annual_payment`. They used to compute it apart — the deal's in binary floating
point with Python's `round` — and disagreed by a cent on about 3 of 20,000 random loans
(tests/deals/test_finance.py).

Interest-only periods (issue 22). A loan with an interest-only (IO) period pays interest only during
it (`interest_only_annual_payment`) and the amortizing payment after it. Both coverage figures are
shown wherever a DSCR is; the one lenders underwrite — the `dscr` a search scores and a quote's
"below the lender's minimum" note read — is chosen by `underwritten_basis`:

* bridge, construction, land and predevelopment loans (`INTEREST_ONLY_UNDERWRITTEN`): coverage on the
  interest-only payment while an IO period is given — their lenders size on the payment due during
  the initial term, which is usually interest only;
* permanent loans, and a loan type not yet known (`tbd`), on the amortizing payment even with an IO
  period, as agency, CMBS and bank permanent lenders do (the stricter figure while the type is unknown);
* a loan that never amortizes within its term (a quote with no amortization, or an IO period as long
  as the term) pays interest only: that is its one debt service.

Debt yield is NOI / loan amount, in percent: it needs no rate and no amortization, so it is the same
during and after an IO period.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext

CENT = Decimal("0.01")
HUNDRED = Decimal(100)
RATIO_PLACES = Decimal("0.01")
# Enough digits that (1 + r) ** -months for 600 months carries every cent of a $1T loan.
PRECISION = 34

# Loan types whose lenders underwrite coverage on the interest-only payment of an IO period.
INTEREST_ONLY_UNDERWRITTEN = frozenset({"light_bridge", "heavy_bridge", "construction", "land", "predevelopment"})
INTEREST_ONLY = "interest_only"
AMORTIZING = "amortizing"
DSCR_BASES = (INTEREST_ONLY, AMORTIZING)
# The coverage lenders of a loan type usually ask (on the basis `underwritten_basis` picks), which a quote
# that states no minimum of its own is held to (docs/finance.md, "Coverage a quote is held to"). Loans
# sized on what is to be built or bought (construction, land, predevelopment) have none: they are not
# underwritten on today's NOI.
USUAL_MIN_DSCR = {
    "permanent": Decimal("1.25"),
    "tbd": Decimal("1.25"),
    "light_bridge": Decimal("1.10"),
    "heavy_bridge": Decimal("1.00"),
}


def at_precision_of(value: Decimal, limit: Decimal) -> Decimal:
    """`value` rounded to the decimal places `limit` was given with (70.31 against a 70.3 maximum reads
    70.3): a limit is compared at the precision anyone typed, never past it."""
    places = min(limit.normalize().as_tuple().exponent, 0)
    return value.quantize(Decimal(1).scaleb(places), ROUND_HALF_UP)


def amortizing_annual_payment(loan: Decimal, rate: Decimal, months: int) -> Decimal:
    """Twelve level monthly payments that repay `loan` over `months` at `rate` percent a year, in
    US dollars, rounded half up to the cent (the monthly payment is not rounded first). At 0 % the
    loan is repaid in equal parts."""
    with localcontext() as ctx:
        ctx.prec = PRECISION
        monthly_rate = rate / HUNDRED / 12
        payment = loan / months if monthly_rate == 0 else loan * monthly_rate / (1 - (1 + monthly_rate) ** -months)
        return (payment * 12).quantize(CENT, ROUND_HALF_UP)


def interest_only_annual_payment(loan: Decimal, rate: Decimal) -> Decimal:
    """A year's interest on `loan` at `rate` percent, rounded half up to the cent."""
    with localcontext() as ctx:
        ctx.prec = PRECISION
        return (loan * rate / HUNDRED).quantize(CENT, ROUND_HALF_UP)


def debt_service(*, loan: Decimal, rate: Decimal | None, amortization_months: int | None,
                 interest_only_months: int, term_months: int | None) -> tuple[Decimal | None, Decimal | None]:
    """(annual debt service, interest-only annual debt service or None).

    The annual debt service is the amortizing one when the loan amortizes within its term (after
    any interest-only period; `term_months` None: no term stated, it amortizes), else interest only;
    the second value is the interest-only service of an interest-only period that the loan has
    before it amortizes."""
    if rate is None:
        return None, None
    interest_only = interest_only_annual_payment(loan, rate)
    amortizes = bool(amortization_months) and (term_months is None or interest_only_months < term_months)
    if not amortizes:
        return interest_only, None
    payment = amortizing_annual_payment(loan, rate, amortization_months)
    return payment, interest_only if interest_only_months else None


def ratio(numerator: Decimal | None, denominator: Decimal | None, scale: Decimal = Decimal(1)) -> Decimal | None:
    """numerator * scale / denominator to 2 places (half up); None when either is missing or 0."""
    if numerator is None or not denominator:
        return None
    with localcontext() as ctx:
        ctx.prec = PRECISION
        return (numerator * scale / denominator).quantize(RATIO_PLACES, ROUND_HALF_UP)


def debt_yield(noi: Decimal | None, loan: Decimal | None) -> Decimal | None:
    """NOI / loan amount, percent to 2 places."""
    return ratio(noi, loan, HUNDRED)


def underwritten_basis(loan_type: str, *, amortizing_service: Decimal | None,
                       interest_only_service: Decimal | None) -> str | None:
    """Which coverage lenders underwrite (see the module's docstring): INTEREST_ONLY or AMORTIZING,
    None when neither service is known. `amortizing_service` None with an interest-only service: the
    loan never amortizes."""
    if interest_only_service is None and amortizing_service is None:
        return None
    if amortizing_service is None:
        return INTEREST_ONLY
    if interest_only_service is not None and loan_type in INTEREST_ONLY_UNDERWRITTEN:
        return INTEREST_ONLY
    return AMORTIZING


def coverage(noi: Decimal | None, loan_type: str, *, amortizing_service: Decimal | None,
             interest_only_service: Decimal | None) -> dict[str, Decimal | str | None]:
    """Every coverage figure of one loan: `dscr` (the one lenders underwrite), `dscr_basis`,
    `dscr_interest_only` (None without an IO period) and `dscr_amortizing` (None when it never
    amortizes), each NOI over that year's debt service."""
    basis = underwritten_basis(loan_type, amortizing_service=amortizing_service,
                               interest_only_service=interest_only_service)
    io, amortizing = ratio(noi, interest_only_service), ratio(noi, amortizing_service)
    dscr = io if basis == INTEREST_ONLY else amortizing
    return {"dscr": dscr, "dscr_basis": basis if dscr is not None else None, "dscr_interest_only": io,
            "dscr_amortizing": amortizing}
