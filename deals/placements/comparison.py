"""Term sheets of one deal put on one basis, best first, with short plain-language notes.

`term_sheet_comparison(deal=…)` returns plain data (dataclasses of Decimals, strings and dates), for
the REST view, the MCP tool (through REST) and an admin template alike. Per quote:

* all-in rate — the fixed rate, or the index's rate as of the quote's date (the latest market rate of
  that index dated on or before the local date the quote was received, lenders.rates) plus the spread
  (percent per year); a rate dated more than `MARKET_RATE_STALE_DAYS` before the quote says so in a note;
* all-in cost — the all-in rate plus origination and exit fees spread over the term (percent per
  year): the cost a borrower compares; equal to the all-in rate for a quote without fees;
* proceeds — the quoted loan amount, net proceeds after the origination fee, fees in dollars;
* leverage — loan / value (estimated value, else purchase price), percent;
* annual debt service — twelve amortizing monthly payments (or interest only when the loan never amortizes),
  and the interest-only service of an interest-only period (`deals.finance.debt_service`);
* coverage — NOI (in place, else stabilized) over each: `dscr_interest_only` during an interest-only
  period, `dscr_amortizing` after it, and `dscr`, the one lenders underwrite for the deal's loan type
  (`dscr_basis`; `deals.finance.underwritten_basis`), which the "below the lender's minimum" note reads;
* debt yield — NOI over the quoted loan, percent.

What cannot be computed is None, and says why: in `unavailable` for the deal (no NOI, no value) and
in a quote's notes for the quote (no rate of its index on or before its date).

Coverage and leverage at each quote's own terms: the DSCR against the quote's `min_dscr` or, where it
states none, the usual minimum of the deal's loan type (`finance.USUAL_MIN_DSCR`), and the LTV against
its `max_ltv`, each compared at the precision the limit was given with (`finance.at_precision_of`). A
quote within them is *sound*.

Like with like: quotes fall in comparable groups by rate type (fixed or floating), term band (up to 3
years, 4 to 7, 8 and more, term not given) and recourse (`group_of`). Each group's best is its first
valid, priced, sound quote in the order below (`best_in_group`). One quote is named best of the deal
(`best_term_sheet_id`) only when it stands among comparable quotes: the chosen winner; else the first
contender (valid, priced, sound) when every contender is in its group. When contenders fall in several
groups no best is named and `trade_offs` says, in words, what the leader gives and takes against each
other group's best ("$1.5M more proceeds for 1.61 points more all-in").

Order (`ORDER_RULE`, also in docs/term-sheets.md): the chosen winner first; then valid before expired,
priced before unpriced, sound before flagged, covering the requested loan before short of it; then lowest
all-in cost (the all-in rate when the cost is unknown); then highest proceeds; then the oldest quote.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from django.utils import timezone

from deals import finance
from deals.finance import debt_service, ratio
from deals.models import Deal, DealFinancials
from deals.placements import workflow
from deals.placements.models import TermSheet
from deals.searches.ranking.insights import money as money_text
from lenders.rates.selectors import rates_on_dates
from lev.enums import RATE_INDEX_NAMES
from lev.limits import MARKET_RATE_STALE_DAYS

CENT = Decimal("0.01")
RATE_PLACES = Decimal("0.001")
HUNDRED = Decimal(100)
# Placements whose quotes are no longer in the running: the lender withdrew, or the placement was filed away.
EXCLUDED_PLACEMENT_STATUSES = workflow.NOT_COMPARED_STATUSES
EXPIRES_SOON_DAYS = 14
ORDER_RULE = ("The chosen winner first; then valid before expired, priced before unpriced, within the lender's (or "
              "the loan type's usual) minimum DSCR and maximum LTV at the quote's own terms before outside them, "
              "covering the requested loan before short of it; then lowest all-in cost, highest proceeds, oldest.")
BEST_RULE = ("A best is named only among comparable quotes (same rate type, term band and recourse): the winner, "
             "else the first valid, priced, sound quote when every such quote is comparable with it; otherwise "
             "trade_offs compares the leader with each other group's best.")
TRADE_OFFS_MAX = 3
# Term bands of comparable quotes: (last month of the band, its words).
TERM_BANDS = ((36, "up to 3 years"), (84, "4 to 7 years"), (None, "8 years and more"))


@dataclass
class QuoteComparison:
    term_sheet_id: int
    placement_id: int
    lender_id: int
    lender_name: str
    placement_status: str
    quote_type: str
    winning: bool
    rate_type: str
    fixed_rate: Decimal | None
    rate_index: str
    base_rate: Decimal | None
    base_rate_as_of: dt.date | None  # the date of the index's rate used
    quoted_on: dt.date  # the local date the quote was received: its rate is read as of it
    spread_bps: int | None
    all_in_rate: Decimal | None
    all_in_cost: Decimal | None
    proceeds: Decimal
    net_proceeds: Decimal
    origination_fee: Decimal
    exit_fee: Decimal
    total_fees: Decimal
    ltv: Decimal | None
    max_ltv: Decimal | None
    annual_debt_service: Decimal | None
    interest_only_debt_service: Decimal | None
    dscr: Decimal | None
    dscr_basis: str | None
    dscr_interest_only: Decimal | None
    dscr_amortizing: Decimal | None
    debt_yield: Decimal | None
    min_dscr: Decimal | None
    term_months: int | None
    amortization_months: int | None
    interest_only_months: int
    recourse: str
    prepayment: str
    expires_on: dt.date | None
    expired: bool
    rank: int = 0
    group: str = ""  # its comparable group's words (group_of)
    sound: bool = True  # within the coverage and leverage it is held to
    best_in_group: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def contender(self) -> bool:
        return not self.expired and self.all_in_rate is not None and self.sound


@dataclass
class Comparison:
    deal_id: int
    requested_loan_amount: Decimal | None
    value: Decimal | None
    value_basis: str | None  # "estimated_value" | "purchase_price"
    noi: Decimal | None
    noi_basis: str | None  # "in_place_noi" | "stabilized_noi"
    base_rates: list[tuple[str, Decimal, dt.date]]  # (index, rate, its date): each rate a quote uses, once
    quotes: list[QuoteComparison]
    unavailable: list[str]
    best_term_sheet_id: int | None = None
    trade_offs: list[str] = field(default_factory=list)


# --- the arithmetic (pure functions, hand-checked in tests/deals/placements/test_comparison.py) --------------
def all_in_rate(*, rate_type: str, fixed_rate: Decimal | None, base_rate: Decimal | None,
                spread_bps: int | None) -> Decimal | None:
    if rate_type == "fixed":
        return fixed_rate
    if base_rate is None or spread_bps is None:
        return None
    return (base_rate + Decimal(spread_bps) / HUNDRED).quantize(RATE_PLACES, ROUND_HALF_UP)


def fee(amount: Decimal, percent: Decimal | None) -> Decimal:
    return (amount * (percent or 0) / HUNDRED).quantize(CENT, ROUND_HALF_UP)


def all_in_cost(*, rate: Decimal | None, fee_percent: Decimal, term_months: int | None) -> Decimal | None:
    """The all-in rate plus the fees (percent of the loan) spread evenly over the term's years."""
    if rate is None:
        return None
    if not fee_percent:
        return rate
    if not term_months:
        return None
    return (rate + fee_percent * 12 / Decimal(term_months)).quantize(RATE_PLACES, ROUND_HALF_UP)


# --- notes --------------------------------------------------------------------------------------------
def _num(value: Decimal) -> str:
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _months(months: int) -> str:
    return f"{months // 12} years" if months % 12 == 0 and months >= 24 else f"{months} months"


RECOURSE_NOTES = {"full": "full recourse", "partial": "partial recourse", "non_recourse": "non-recourse"}


LOAN_TYPE_WORDS = {"permanent": "a permanent loan", "tbd": "a loan whose type is not chosen yet (as permanent)",
                   "light_bridge": "a light bridge loan", "heavy_bridge": "a heavy bridge loan"}


def _limit_notes(quote: QuoteComparison, loan_type: str) -> list[str]:
    """Coverage and leverage at the quote's own terms against the limits it is held to (the lender's
    minimum DSCR, else the loan type's usual one; its maximum LTV), each compared at the precision the
    limit was given with."""
    notes = []
    floor = quote.min_dscr if quote.min_dscr is not None else finance.USUAL_MIN_DSCR.get(loan_type)
    if quote.dscr is not None and floor is not None and finance.at_precision_of(quote.dscr, floor) < floor:
        basis = " interest-only" if quote.dscr_basis == finance.INTEREST_ONLY and quote.dscr_amortizing else ""
        if quote.min_dscr is not None:
            notes.append(f"DSCR{basis} {quote.dscr:.2f}x below the lender's {floor:.2f}x minimum")
        else:
            notes.append(f"DSCR{basis} {quote.dscr:.2f}x below the {floor:.2f}x usual for "
                         f"{LOAN_TYPE_WORDS[loan_type]} (the quote states no minimum)")
    if (quote.ltv is not None and quote.max_ltv is not None
            and finance.at_precision_of(quote.ltv, quote.max_ltv) > quote.max_ltv):
        notes.append(f"LTV {_num(quote.ltv)}% above the lender's {_num(quote.max_ltv)}% maximum")
    return notes


def _notes(quote: QuoteComparison, *, requested: Decimal | None, today: dt.date,
           best: dict[str, set[int]], limit_notes: list[str]) -> list[str]:
    notes: list[str] = []
    if quote.winning:
        notes.append("winning quote")
    if quote.term_sheet_id in best["proceeds"]:
        notes.append("highest proceeds")
    if quote.term_sheet_id in best["cost"]:
        notes.append("lowest all-in cost")
    if quote.term_sheet_id in best["rate"] and quote.term_sheet_id not in best["cost"]:
        notes.append("lowest all-in rate")
    if quote.rate_type == "floating":
        index = RATE_INDEX_NAMES.get(quote.rate_index, quote.rate_index)
        if quote.base_rate_as_of is None:
            notes.append(f"no {index} rate on or before {quote.quoted_on.isoformat()}: all-in rate unknown")
        elif (quote.quoted_on - quote.base_rate_as_of).days > MARKET_RATE_STALE_DAYS:
            notes.append(f"{index} of {quote.base_rate_as_of.isoformat()} used, the latest on or before the "
                         f"quote's {quote.quoted_on.isoformat()}")
    if quote.recourse in RECOURSE_NOTES:
        notes.append(RECOURSE_NOTES[quote.recourse])
    if requested and quote.proceeds < requested:
        notes.append(f"{money_text(float(requested - quote.proceeds))} short of the "
                     f"{money_text(float(requested))} requested")
    notes.extend(limit_notes)
    if not _amortizes(quote.amortization_months, quote.interest_only_months, quote.term_months):
        notes.append("interest-only for the whole term")
    elif quote.interest_only_months:
        notes.append(f"interest-only for {_months(quote.interest_only_months)}")
    if quote.expires_on is not None:
        if quote.expired:
            notes.append(f"expired {quote.expires_on.isoformat()}")
        elif (quote.expires_on - today).days <= EXPIRES_SOON_DAYS:
            notes.append(f"expires {quote.expires_on.isoformat()}")
    return notes


def _best(quotes: list[QuoteComparison]) -> dict[str, set[int]]:
    """Ids of the quotes that lead on proceeds, cost and rate, among the valid ones (only when at
    least two quotes are compared: a lone quote is not 'highest')."""
    valid = [q for q in quotes if not q.expired]
    best: dict[str, set[int]] = {"proceeds": set(), "cost": set(), "rate": set()}
    if len(valid) < 2:
        return best
    top = max(q.proceeds for q in valid)
    best["proceeds"] = {q.term_sheet_id for q in valid if q.proceeds == top}
    for key, attr in (("cost", "all_in_cost"), ("rate", "all_in_rate")):
        priced = [q for q in valid if getattr(q, attr) is not None]
        if len(priced) >= 2:
            low = min(getattr(q, attr) for q in priced)
            best[key] = {q.term_sheet_id for q in priced if getattr(q, attr) == low}
    return best


def _order(requested: Decimal | None):
    """ORDER_RULE as a sort key."""
    def key(quote: QuoteComparison):
        priced = quote.all_in_rate is not None
        covers = requested is None or quote.proceeds >= requested
        cost = quote.all_in_cost if quote.all_in_cost is not None else quote.all_in_rate
        return (not quote.winning, quote.expired, not priced, not quote.sound, not covers,
                cost if cost is not None else Decimal("Infinity"), -quote.proceeds, quote.term_sheet_id)
    return key


# --- like with like ------------------------------------------------------------------------------------
def group_of(*, rate_type: str, term_months: int | None, recourse: str) -> str:
    """The words of a quote's comparable group: rate type, term band, recourse."""
    band = "term not given"
    if term_months:
        band = next(words for last, words in TERM_BANDS if last is None or term_months <= last)
    return f"{band} {rate_type}, {RECOURSE_NOTES.get(recourse, 'recourse not given')}"


def _terms(quote: QuoteComparison) -> str:
    """A quote's own terms in words: '3 years floating, partial recourse'."""
    term = _months(quote.term_months) if quote.term_months else "term not given"
    text = f"{term} {quote.rate_type}, {RECOURSE_NOTES.get(quote.recourse, 'recourse not given')}"
    return text + (f", prepayment: {quote.prepayment}" if quote.prepayment else "")


def trade_off(leader: QuoteComparison, other: QuoteComparison) -> str:
    """What the leader gives and takes against another group's best, in words."""
    more = leader.proceeds - other.proceeds
    proceeds = ("the same proceeds" if not more else
                f"{money_text(float(abs(more)))} {'more' if more > 0 else 'less'} proceeds")
    lead_cost = leader.all_in_cost if leader.all_in_cost is not None else leader.all_in_rate
    other_cost = other.all_in_cost if other.all_in_cost is not None else other.all_in_rate
    dearer = (lead_cost - other_cost) if lead_cost is not None and other_cost is not None else None
    if dearer is None:
        cost = "an all-in cost that cannot be compared"
    elif not dearer:
        cost = "the same all-in cost"
    else:
        cost = f"{_num(abs(dearer).quantize(CENT, ROUND_HALF_UP))} points {'more' if dearer > 0 else 'less'} all-in"
    # "for" when one side is given for the other; "and" when both go the same way.
    joiner = "for" if dearer is not None and more and (more > 0) == (dearer > 0) else "and"
    return (f"{leader.lender_name} ({_terms(leader)}) against {other.lender_name} ({_terms(other)}): "
            f"{proceeds} {joiner} {cost}")


def _best_and_trade_offs(quotes: list[QuoteComparison]) -> tuple[int | None, list[str]]:
    """Marks each group's best; returns the deal's best (BEST_RULE) and, without one, the trade-offs.
    `quotes` are in order."""
    bests: dict[str, QuoteComparison] = {}
    for quote in quotes:
        if quote.contender and quote.group not in bests:
            bests[quote.group] = quote
            quote.best_in_group = True
    winner = next((q for q in quotes if q.winning), None)
    if winner is not None:
        return winner.term_sheet_id, []
    if not bests:
        return None, []
    leader = next(iter(bests.values()))
    if len(bests) == 1:
        return leader.term_sheet_id, []
    return None, [trade_off(leader, other) for other in list(bests.values())[1:TRADE_OFFS_MAX + 1]]


# --- the comparison ---------------------------------------------------------------------------------------
def _amortizes(amortization_months: int | None, interest_only_months: int, term_months: int | None) -> bool:
    """The quote amortizes within its term (after any interest-only period), as debt_service decides."""
    return bool(amortization_months) and (term_months is None or interest_only_months < term_months)


def _basis(financials: DealFinancials | None, *names: str) -> tuple[Decimal | None, str | None]:
    for name in names:
        value = getattr(financials, name, None) if financials is not None else None
        if value:
            return value, name
    return None, None


def term_sheet_comparison(*, deal: Deal, today: dt.date | None = None) -> Comparison:
    """Every live quote of the deal (not those of declined or archived placements), compared.
    Three queries whatever the number of quotes (at most TERM_SHEETS_PER_DEAL_MAX): the financials,
    the quotes, and the market rates as of every floating quote's date."""
    today = today or timezone.localdate()
    financials = DealFinancials.objects.filter(deal=deal).first()
    value, value_basis = _basis(financials, "estimated_value", "purchase_price")
    noi, noi_basis = _basis(financials, "in_place_noi", "stabilized_noi")
    term_sheets = list(
        TermSheet.objects.filter(deal=deal, deleted_at=None)
        .exclude(placement__status__in=EXCLUDED_PLACEMENT_STATUSES)
        .select_related("placement__lender")
        .order_by("id")
    )
    quoted_on = {ts.pk: timezone.localdate(ts.received_at) for ts in term_sheets}
    wanted: dict[str, set[dt.date]] = {}
    for ts in term_sheets:
        if ts.rate_type == "floating":
            wanted.setdefault(ts.rate_index, set()).add(quoted_on[ts.pk])
    rates = rates_on_dates(dates=wanted)
    quotes = []
    for ts in term_sheets:
        market = rates.get((ts.rate_index, quoted_on[ts.pk])) if ts.rate_type == "floating" else None
        base = market.rate if market is not None else None
        rate = all_in_rate(rate_type=ts.rate_type, fixed_rate=ts.fixed_rate, base_rate=base, spread_bps=ts.spread_bps)
        origination, exit_ = fee(ts.loan_amount, ts.origination_fee_percent), fee(ts.loan_amount, ts.exit_fee_percent)
        fee_percent = (ts.origination_fee_percent or 0) + (ts.exit_fee_percent or 0)
        annual, interest_only = debt_service(loan=ts.loan_amount, rate=rate, amortization_months=ts.amortization_months,
                                             interest_only_months=ts.interest_only_months, term_months=ts.term_months)
        # A loan that never amortizes pays interest only: its one debt service is the interest-only one.
        amortizes = _amortizes(ts.amortization_months, ts.interest_only_months, ts.term_months)
        cover = finance.coverage(noi, deal.loan_type, amortizing_service=annual if amortizes else None,
                                 interest_only_service=interest_only if amortizes else annual)
        quotes.append(QuoteComparison(
            term_sheet_id=ts.pk, placement_id=ts.placement_id, lender_id=ts.placement.lender_id,
            lender_name=ts.placement.lender.name, placement_status=ts.placement.status, quote_type=ts.quote_type,
            winning=ts.winning, rate_type=ts.rate_type, fixed_rate=ts.fixed_rate, rate_index=ts.rate_index,
            base_rate=base, base_rate_as_of=market.on if market is not None else None, quoted_on=quoted_on[ts.pk],
            spread_bps=ts.spread_bps, all_in_rate=rate,
            all_in_cost=all_in_cost(rate=rate, fee_percent=fee_percent, term_months=ts.term_months),
            proceeds=ts.loan_amount, net_proceeds=ts.loan_amount - origination, origination_fee=origination,
            exit_fee=exit_, total_fees=origination + exit_, ltv=ratio(ts.loan_amount, value, HUNDRED),
            max_ltv=ts.max_ltv, annual_debt_service=annual, interest_only_debt_service=interest_only, **cover,
            debt_yield=finance.debt_yield(noi, ts.loan_amount), min_dscr=ts.min_dscr, term_months=ts.term_months,
            amortization_months=ts.amortization_months, interest_only_months=ts.interest_only_months,
            recourse=ts.recourse, prepayment=ts.prepayment, expires_on=ts.expires_on,
            expired=ts.expires_on is not None and ts.expires_on < today,
        ))
    requested = deal.loan_amount
    best = _best(quotes)
    limit_notes = {}  # each quote's limits read once: its `sound` and its notes
    for quote in quotes:
        limit_notes[quote.term_sheet_id] = _limit_notes(quote, deal.loan_type)
        quote.sound = not limit_notes[quote.term_sheet_id]
        quote.group = group_of(rate_type=quote.rate_type, term_months=quote.term_months, recourse=quote.recourse)
    quotes.sort(key=_order(requested))
    best_id, trade_offs = _best_and_trade_offs(quotes)
    for rank, quote in enumerate(quotes, start=1):
        quote.rank = rank
        quote.notes = _notes(quote, requested=requested, today=today, best=best,
                             limit_notes=limit_notes[quote.term_sheet_id])
    unavailable = []
    if quotes and noi is None:
        unavailable.append("DSCR and debt yield: the deal has no NOI (set in_place_noi or stabilized_noi in its "
                           "financials)")
    if quotes and value is None:
        unavailable.append("LTV: the deal has no value (set estimated_value or purchase_price in its financials)")
    # Per index, the last date with no rate on or before it: no earlier date of that index has one either.
    missing: dict[str, dt.date] = {}
    for (index, day), market in rates.items():
        if market is None:
            missing[index] = max(day, missing.get(index, day))
    for index in sorted(missing):
        name = RATE_INDEX_NAMES.get(index, index)
        unavailable.append(f"All-in rate of floating quotes over {name}: no {name} rate on or before "
                           f"{missing[index].isoformat()} (an admin adds rates under Market rates, or "
                           "`manage.py import_market_rates`)")
    used = sorted({(m.index, m.rate, m.on) for m in rates.values() if m is not None})
    return Comparison(deal_id=deal.pk, requested_loan_amount=requested, value=value, value_basis=value_basis,
                      noi=noi, noi_basis=noi_basis, base_rates=used, quotes=quotes, unavailable=unavailable,
                      best_term_sheet_id=best_id, trade_offs=trade_offs)
