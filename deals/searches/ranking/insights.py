"""`match_insights`: short reasons (one line each, under ~70 characters) for a lender's score."""

from __future__ import annotations

from typing import Any

from deals.finance import INTEREST_ONLY
from deals.searches.ranking.scoring import ProgramFit, ProgramRow, loan_position


def money(value: float) -> str:
    """$750K, $18.5M, $1.2B."""
    for divisor, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if value >= divisor:
            text = f"{value / divisor:.1f}".removesuffix(".0")
            return f"${text}{suffix}"
    return f"${value:,.0f}"


def _names(values: tuple[str, ...], limit: int = 3) -> str:
    shown = [v.replace("_", " ") for v in values[:limit]]
    more = len(values) - limit
    return ", ".join(shown) + (f" +{more} more" if more > 0 else "")


def asset_type_insight(asset_types: tuple[str, ...]) -> str:
    return f"Asset type: lends on {_names(asset_types)}"


def geography_insight(states: tuple[str, ...], nationwide: bool) -> str:
    where = _names(states, 4)
    return f"Geography: nationwide program, covers {where}" if nationwide else f"Geography: covers {where}"


def loan_size_insight(amount: float, row: ProgramRow, amount_text: str | None = None) -> str:
    low, high = row.min_loan_amount, row.max_loan_amount
    amount_text = amount_text or money(amount)
    position = loan_position(amount, low, high)
    if position is None:
        bounds = (f"from {money(low)}" if low else f"up to {money(high)}") if (low or high) else "any size"
        return f"Loan size: {amount_text} fits ({bounds})"
    where = "near the low end of" if position < 0.25 else "near the top of" if position > 0.75 else "mid-range of"
    return f"Loan size: {amount_text} {where} {money(low or 0)}-{money(high or 0)}"


def _num(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


# An insight is one short line; the "(scores lower)" of a limit passed is left out when the figures
# beside it (debt yield, the second DSCR) would take the line past this.
LINE_MAX = 80


def _line(text: str, suffix: str = "") -> str:
    return text + suffix if len(text + suffix) <= LINE_MAX else text


def leverage_insight(ltv: float | None, max_ltv: float | None, debt_yield: float | None = None) -> str:
    """The deal's LTV against the program's max LTV, with its debt yield, in words."""
    yield_text = "" if debt_yield is None else f", {_num(debt_yield)}% debt yield"
    if ltv is None:
        if debt_yield is not None:
            return f"Leverage: {_num(debt_yield)}% debt yield; add the deal's value or price for LTV"
        return "Leverage: not assessed; add the deal's value or price to its financials"
    if max_ltv is None:
        return f"Leverage: {_num(ltv)}% LTV{yield_text}; this program states no max LTV"
    if ltv <= max_ltv:
        return f"Leverage: {_num(ltv)}% LTV{yield_text}, within this program's {_num(max_ltv)}% max"
    return _line(f"Leverage: {_num(ltv)}% LTV{yield_text}, over this program's {_num(max_ltv)}% max", " (scores lower)")


def coverage_insight(dscr: float | None, min_dscr: float | None, *, basis: str | None = None,
                     interest_only: float | None = None, amortizing: float | None = None) -> str:
    """The deal's DSCR (the one lenders underwrite, deals.finance) against the program's min DSCR, in
    words; with an interest-only period, which one it is and the other beside it."""
    if dscr is None:
        return "Coverage: not assessed; add NOI and an interest rate to its financials"
    figure = f"{dscr:.2f}x DSCR"
    if interest_only is not None and amortizing is not None:
        figure = (f"{dscr:.2f}x IO DSCR ({amortizing:.2f}x amortizing)" if basis == INTEREST_ONLY
                  else f"{dscr:.2f}x amortizing DSCR ({interest_only:.2f}x IO)")
    if min_dscr is None:
        return f"Coverage: {figure}; this program states no min DSCR"
    if dscr >= min_dscr:
        verb = "meets" if dscr == min_dscr else "above"
        return f"Coverage: {figure}, {verb} this program's {min_dscr:.2f}x min"
    return _line(f"Coverage: {figure}, below this program's {min_dscr:.2f}x min", " (scores lower)")


def capital_insight(business_plan: str, row: ProgramRow, fit: ProgramFit) -> str:
    source = (row.capital_source_type or "unstated").replace("_", " ")
    if not business_plan:
        return f"Capital: {source} lender; set a business plan to assess fit"
    quality = "strong" if fit.capital >= 0.85 else "fair" if fit.capital >= 0.5 else "weak"
    return f"Capital: {source} lender, {quality} fit for {business_plan.replace('_', ' ')}"


def sizing_line(result) -> str:
    """What the best program would lend, in the sizing's own sentence (deals.searches.ranking.sizing)."""
    text = result.summary
    return text[:1].upper() + text[1:]


def _label(dimension_value: str) -> str:
    return dimension_value.replace("_", " ")


def _year(t) -> tuple[int, int, int, int] | None:
    """(sent, quoted, declined, no answer) over the last 12 months, or None when none was sent."""
    if t is None or t.sent_12m <= 0:
        return None
    return t.sent_12m, t.quoted_12m, t.declined_12m, t.no_answer_12m


REASON_SHOWN_CHARS = 60


def _reason(text: str | None) -> str:
    """': “Outside our box”' for a decline line, the team's own words cut to REASON_SHOWN_CHARS."""
    text = " ".join((text or "").split())
    if not text:
        return ""
    if len(text) > REASON_SHOWN_CHARS:
        text = text[:REASON_SHOWN_CHARS - 1].rstrip() + "\N{HORIZONTAL ELLIPSIS}"
    return f": last reason \N{LEFT DOUBLE QUOTATION MARK}{text}\N{RIGHT DOUBLE QUOTATION MARK}"


def evidence_lines(own: dict, pooled: dict, criteria, *, outside_box: bool = False,
                   decline_reason: str | None = None) -> list[str]:
    """What the account's own record with the lender says of deals like this one, most telling first
    (at most three lines): quotes beyond its stated programs, a run of unanswered placements, declines
    of every such deal, quotes of similar deals; with no record of its own, what 3 or more teams' pooled
    figures say (rates only: no team's counts). `decline_reason`: the account's own latest reason for a
    decline of such a deal by this lender, said beside the declines."""
    lines: list[str] = []
    assets = criteria.asset_types
    asset_tallies = [own[("asset_type", a)] for a in assets if ("asset_type", a) in own]
    asset_year = [y for y in map(_year, asset_tallies) if y]
    asset_name = _label(assets[0]) if len(assets) == 1 else "similar"
    if outside_box:
        sent, quoted = sum(y[0] for y in asset_year), sum(y[1] for y in asset_year)
        lines.append(f"Quotes outside its stated programs: {quoted} of {sent} similar deals (12 months)" if quoted
                     else "Outside its stated programs: quoted such deals over a year ago")
    overall = own.get(("all", ""))
    if overall is not None:
        streak = len(overall.recent) - len(overall.recent.lstrip("n"))
        if streak >= 2:
            lines.append(f"No answer on the last {streak} placements")
    for a, t in zip(assets, asset_tallies, strict=False):
        year = _year(t)
        if year and year[0] >= 2 and year[2] == year[0]:
            lines.append(f"Declined {year[2]} of {year[0]} {_label(a)} deals (last 12 months){_reason(decline_reason)}")
    similar = None
    for a in assets:
        for state in criteria.states:
            year = _year(own.get(("asset_state", f"{a}:{state}")))
            if year and (similar is None or year[0] > similar[1][0]):
                similar = (f"similar {_label(a)} deals in {state}", year)
    if similar is None and asset_year:
        similar = (f"{asset_name} deals", tuple(map(sum, zip(*asset_year, strict=True))))
    if similar is None:
        year = _year(overall)
        if year:
            similar = ("deals placed with it", year)
    if similar is not None and not outside_box:
        what, (sent, quoted, _declined, _silent) = similar
        if not any(line.startswith("Declined") for line in lines) or quoted:
            lines.append(f"Quoted {quoted} of {sent} {what} (last 12 months)")
    if not own:
        shared = [pooled[key] for key in (("asset_type", a) for a in assets) if key in pooled] or (
            [pooled[("all", "")]] if ("all", "") in pooled else [])
        if shared:
            sent = sum(t.sent for t in shared)
            rate = sum(t.quoted for t in shared) / sent if sent else 0.0
            teams = min(t.accounts for t in shared)
            lines.append(f"Across {teams}+ teams: quotes about {round(100 * rate)}% of {asset_name} deals")
    return lines[:3]


class InsightWriter:
    """Writes the reasons of every stored match of one run (the top N): the lines that separate lenders
    first (`lead`: sizing and evidence, from the caller), then coverage (DSCR; both with an IO period),
    leverage (LTV, debt yield), capital source and loan size from the lender's best program, and last
    what every row shares (asset type, geography). The parts that depend only on the deal (or on a
    handful of values) are built once per run."""

    def __init__(self, *, amount: float, business_plan: str, ltv: float | None, dscr: float | None,
                 states: tuple[str, ...], asset_types: tuple[str, ...], debt_yield: float | None = None,
                 dscr_basis: str | None = None, dscr_interest_only: float | None = None,
                 dscr_amortizing: float | None = None):
        self.amount, self.business_plan, self.ltv, self.dscr = amount, business_plan, ltv, dscr
        self.debt_yield = debt_yield
        self.coverage = {"basis": dscr_basis, "interest_only": dscr_interest_only, "amortizing": dscr_amortizing}
        self.amount_text = money(amount)
        self.asset = asset_type_insight(asset_types)
        self.geography = {True: geography_insight(states, True), False: geography_insight(states, False)}
        self._cache: dict[tuple, str] = {}

    def _cached(self, key: tuple, build) -> str:
        text = self._cache.get(key)
        if text is None:
            text = self._cache[key] = build()
        return text

    def write(self, row: ProgramRow, fit: ProgramFit, lead: list[str] | None = None) -> list[str]:
        capital_key = ("capital", row.capital_source_type, fit.capital)
        return [
            *(lead or ()),
            self._cached(("coverage", row.min_dscr), lambda: coverage_insight(self.dscr, row.min_dscr,
                                                                               **self.coverage)),
            self._cached(("leverage", row.max_ltv), lambda: leverage_insight(self.ltv, row.max_ltv, self.debt_yield)),
            self._cached(capital_key, lambda: capital_insight(self.business_plan, row, fit)),
            loan_size_insight(self.amount, row, self.amount_text),
            self.asset,
            self.geography[row.state_mask == 0],
        ]


def match_insights(*, amount: float, business_plan: str, ltv: float | None, dscr: float | None,
                   states: tuple[str, ...], asset_types: tuple[str, ...], row: ProgramRow, fit: ProgramFit,
                   lead: list[str] | None = None, **figures: Any) -> list[str]:
    """The reasons for one match (see InsightWriter, which the runner uses for many); `figures`:
    debt_yield, dscr_basis, dscr_interest_only, dscr_amortizing."""
    writer = InsightWriter(amount=amount, business_plan=business_plan, ltv=ltv, dscr=dscr, states=states,
                           asset_types=asset_types, **figures)
    return writer.write(row, fit, lead)
