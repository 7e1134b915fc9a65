"""`match_insights`: short reasons (one line each, under ~70 characters) for a lender's score."""

from __future__ import annotations

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


def leverage_insight(ltv: float | None, max_ltv: float | None) -> str:
    """The deal's LTV against the program's max LTV, in words."""
    if ltv is None:
        return "Leverage: not assessed; add the deal's value or price to its financials"
    if max_ltv is None:
        return f"Leverage: {_num(ltv)}% LTV; this program states no max LTV"
    if ltv <= max_ltv:
        return f"Leverage: {_num(ltv)}% LTV, within this program's {_num(max_ltv)}% max"
    return f"Leverage: {_num(ltv)}% LTV, over this program's {_num(max_ltv)}% max (scores lower)"


def coverage_insight(dscr: float | None, min_dscr: float | None) -> str:
    """The deal's DSCR against the program's min DSCR, in words."""
    if dscr is None:
        return "Coverage: not assessed; add NOI and an interest rate to its financials"
    if min_dscr is None:
        return f"Coverage: {dscr:.2f}x DSCR; this program states no min DSCR"
    if dscr >= min_dscr:
        verb = "meets" if dscr == min_dscr else "above"
        return f"Coverage: {dscr:.2f}x DSCR, {verb} this program's {min_dscr:.2f}x min"
    return f"Coverage: {dscr:.2f}x DSCR, below this program's {min_dscr:.2f}x min (scores lower)"


def capital_insight(business_plan: str, row: ProgramRow, fit: ProgramFit) -> str:
    source = (row.capital_source_type or "unstated").replace("_", " ")
    if not business_plan:
        return f"Capital: {source} lender; set a business plan to assess fit"
    quality = "strong" if fit.capital >= 0.85 else "fair" if fit.capital >= 0.5 else "weak"
    return f"Capital: {source} lender, {quality} fit for {business_plan.replace('_', ' ')}"


def activity_insight(state: str | None, activity: tuple[int, int, float | None] | None) -> str:
    if state is None or activity is None:
        return "Activity: none recorded in the deal's markets (90d)"
    quotes, closings, hours = activity
    text = f"Activity: {quotes} quotes, {closings} closings in {state} (90d)"
    if hours is not None:
        text += f"; replies ~{hours:.0f}h"
    return text


class InsightWriter:
    """Writes the reasons of every stored match of one run (the top N): asset type, geography,
    loan size, leverage (LTV), coverage (DSCR), capital source, activity — from the lender's best
    program. The parts that depend only on the deal (or on a handful of values) are built once
    per run."""

    def __init__(self, *, amount: float, business_plan: str, ltv: float | None, dscr: float | None,
                 states: tuple[str, ...], asset_types: tuple[str, ...]):
        self.amount, self.business_plan, self.ltv, self.dscr = amount, business_plan, ltv, dscr
        self.amount_text = money(amount)
        self.asset = asset_type_insight(asset_types)
        self.geography = {True: geography_insight(states, True), False: geography_insight(states, False)}
        self._cache: dict[tuple, str] = {}

    def _cached(self, key: tuple, build) -> str:
        text = self._cache.get(key)
        if text is None:
            text = self._cache[key] = build()
        return text

    def write(self, row: ProgramRow, fit: ProgramFit, activity_state: str | None,
              activity: tuple[int, int, float | None] | None) -> list[str]:
        capital_key = ("capital", row.capital_source_type, fit.capital)
        return [
            self.asset,
            self.geography[row.state_mask == 0],
            loan_size_insight(self.amount, row, self.amount_text),
            self._cached(("leverage", row.max_ltv), lambda: leverage_insight(self.ltv, row.max_ltv)),
            self._cached(("coverage", row.min_dscr), lambda: coverage_insight(self.dscr, row.min_dscr)),
            self._cached(capital_key, lambda: capital_insight(self.business_plan, row, fit)),
            activity_insight(activity_state, activity),
        ]


def match_insights(*, amount: float, business_plan: str, ltv: float | None, dscr: float | None,
                   states: tuple[str, ...], asset_types: tuple[str, ...], row: ProgramRow, fit: ProgramFit,
                   activity_state: str | None, activity: tuple[int, int, float | None] | None) -> list[str]:
    """The reasons for one match (see InsightWriter, which the runner uses for many)."""
    writer = InsightWriter(amount=amount, business_plan=business_plan, ltv=ltv, dscr=dscr, states=states,
                           asset_types=asset_types)
    return writer.write(row, fit, activity_state, activity)
