"""A lender program's terms (pricing, term, amortization, interest-only, leverage and coverage limits):
the rule that refuses nonsense, and the terms in a deal team's words.

One rule for every door that writes a program: `LenderProgram.clean_fields()` and `clean()` call
`field_errors` and `pair_errors`, and the admin's program form (the program page and the lender page's
inline) shows their messages as they are, so a person reads the same words wherever a program is
written. The percent rule and its words are the API's (`lev.limits` floors, `lev.vocabulary`'s
`percent_fraction_message`): a rate of 0.0625 is refused with "did you mean 6.25?", as a quote's is.

Values are judged as given, before a model field coerces them: an integer field turns 2.85 into 2
without a word, so a spread typed as a percent (2.85 for 285 bps) would be stored as 2 bps.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from lev import limits
from lev.enums import RATE_INDEX_NAMES
from lev.formatting import EMPTY, decimal_or_none, percent
from lev.vocabulary import WHOLE_NUMBER_MESSAGE, bps_message, percent_fraction_message, sentence

# The terms sizing reads (deals.searches.ranking.sizing), beside the program's max LTV and min DSCR.
TERM_FIELDS = ("rate_type", "rate_index", "spread_min_bps", "spread_max_bps", "fixed_rate_min", "fixed_rate_max",
               "term_months_min", "term_months_max", "amortization_years", "interest_only_months", "min_debt_yield")

# Percent fields: (floor under which a value is a fraction, maximum, decimal places of the column).
PERCENTS = {
    "max_ltv": (limits.LTV_PERCENT_FLOOR, limits.LTV_PERCENT_MAX, limits.LTV_PERCENT_COLUMN["decimal_places"]),
    "fixed_rate_min": (limits.RATE_PERCENT_FLOOR, limits.RATE_PERCENT_MAX, limits.RATE_DECIMAL_PLACES),
    "fixed_rate_max": (limits.RATE_PERCENT_FLOOR, limits.RATE_PERCENT_MAX, limits.RATE_DECIMAL_PLACES),
    "min_debt_yield": (limits.DEBT_YIELD_PERCENT_FLOOR, limits.DEBT_YIELD_PERCENT_MAX,
                       limits.LTV_PERCENT_COLUMN["decimal_places"]),
}
# Whole-number fields: (least, most).
WHOLE_NUMBERS = {
    "spread_min_bps": (0, limits.SPREAD_BPS_MAX),
    "spread_max_bps": (0, limits.SPREAD_BPS_MAX),
    "term_months_min": (1, limits.TERM_MONTHS_MAX),
    "term_months_max": (1, limits.TERM_MONTHS_MAX),
    "amortization_years": (limits.AMORTIZATION_YEARS_MIN, limits.AMORTIZATION_YEARS_MAX),
    "interest_only_months": (0, limits.INTEREST_ONLY_MONTHS_MAX),
}
# (the low end, the high end, what the high end's message calls the low end)
RANGES = (("spread_min_bps", "spread_max_bps", "min spread"), ("fixed_rate_min", "fixed_rate_max", "min fixed rate"),
          ("term_months_min", "term_months_max", "min term"))

MORE_THAN_ZERO = sentence("must be greater than 0")
ZERO_OR_MORE = sentence("must be 0 or more")
WHOLE_NUMBER = sentence(WHOLE_NUMBER_MESSAGE)
LEFT_OUT_FIXED = "Must be left out for a fixed rate."
LEFT_OUT_FLOATING = "Must be left out for a floating rate."
INDEX_NEEDED = "This is required with a spread: the index the spread is over."


def at_most(maximum: object) -> str:
    return sentence(f"must be at most {maximum}")


def at_least(minimum: object) -> str:
    return sentence(f"must be at least {minimum}")


def field_errors(values: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each field's own refusal, judged on the value as given: a percent sent as a fraction (with the
    value probably meant), a percent out of its bounds, a min DSCR of 0 or less, a count or a spread
    that is not a whole number or out of its bounds. Fields absent from `values` are not judged."""
    errors: dict[str, list[str]] = {}
    for name, (floor, maximum, places) in PERCENTS.items():
        value = decimal_or_none(values.get(name))
        if value is None:
            continue
        fraction = percent_fraction_message(value, floor=floor, maximum=maximum, places=places)
        if fraction is not None:
            errors[name] = [sentence(fraction)]
        elif value < 0:
            errors[name] = [ZERO_OR_MORE]
        elif value > maximum:
            errors[name] = [at_most(maximum)]
    dscr = decimal_or_none(values.get("min_dscr"))
    if dscr is not None and dscr <= 0:
        errors["min_dscr"] = [MORE_THAN_ZERO]
    elif dscr is not None and dscr > limits.DSCR_INPUT_MAX:
        errors["min_dscr"] = [at_most(limits.DSCR_INPUT_MAX)]
    for name, (least, most) in WHOLE_NUMBERS.items():
        value = decimal_or_none(values.get(name))
        if value is None:
            continue
        if value != value.to_integral_value():
            # A spread typed as a percent (2.85) names the basis points meant, at every door alike.
            errors[name] = [sentence(bps_message(value, maximum=most)) if name.startswith("spread_")
                            else WHOLE_NUMBER]
        elif value < least:
            errors[name] = [at_least(least)]
        elif value > most:
            errors[name] = [at_most(most)]
    return errors


def pair_errors(values: Mapping[str, Any]) -> dict[str, list[str]]:
    """Refusals across fields: a range's min above its max (said on the max), a spread without the
    index it is over, pricing of the other rate type (a fixed program's spread, a floating one's
    fixed rate)."""
    errors: dict[str, list[str]] = {}
    for low_name, high_name, low_words in RANGES:
        low, high = decimal_or_none(values.get(low_name)), decimal_or_none(values.get(high_name))
        if low is not None and high is not None and low > high:
            errors[high_name] = [f"Must be at least the {low_words}."]
    rate_type = values.get("rate_type") or ""
    spreads = [n for n in ("spread_min_bps", "spread_max_bps") if values.get(n) is not None]
    fixed = [n for n in ("fixed_rate_min", "fixed_rate_max") if values.get(n) is not None]
    if rate_type == "fixed":
        for name in [*spreads, *(["rate_index"] if values.get("rate_index") else [])]:
            errors.setdefault(name, []).append(LEFT_OUT_FIXED)
    elif rate_type == "floating":
        for name in fixed:
            errors.setdefault(name, []).append(LEFT_OUT_FLOATING)
    if spreads and not values.get("rate_index") and rate_type != "fixed":
        errors.setdefault("rate_index", []).append(INDEX_NEEDED)
    return errors


# --- in words -------------------------------------------------------------------------------------
def _rate(value: Any) -> str:
    """6.1 -> 6.10, 6.125 -> 6.125: two decimals, three when the third is not 0."""
    number = decimal_or_none(value)
    text = f"{number:.3f}"
    return text[:-1] if text.endswith("0") else text


def _span(low: Any, high: Any, shown) -> str:
    ends = [shown(v) for v in (low, high) if v is not None]
    if len(ends) == 2 and ends[0] != ends[1]:
        return f"{ends[0]}\N{EN DASH}{ends[1]}"
    return ends[0]


def pricing_in_words(program: Any) -> str:
    """"SOFR + 2.50-3.25%", "6.10-6.60% fixed" (an en dash between the ends), both with "or", or a
    dash when no pricing is stated."""
    parts = []
    if program.fixed_rate_min is not None or program.fixed_rate_max is not None:
        parts.append(f"{_span(program.fixed_rate_min, program.fixed_rate_max, _rate)}% fixed")
    spread = (_span(program.spread_min_bps, program.spread_max_bps, lambda bps: f"{Decimal(bps) / 100:.2f}")
              if program.spread_min_bps is not None or program.spread_max_bps is not None else None)
    index = RATE_INDEX_NAMES.get(program.rate_index, "")
    if spread is not None:
        parts.append(f"{index} + {spread}%" if index else f"{spread}% over the index")
    elif index:
        parts.append(f"floating over {index}")
    elif program.rate_type and not parts:
        parts.append(f"{program.rate_type} rate")
    return " or ".join(parts) or EMPTY


def _months(low: Any, high: Any) -> str:
    """A term in months: 120 -> "10-yr", 60-120 -> "5-10-yr" (en dash), 18 -> "18 mo"."""
    ends = [v for v in (low, high) if v is not None]
    if all(v % 12 == 0 for v in ends):
        return _span(low, high, lambda v: str(v // 12)) + "-yr"
    return _span(low, high, str) + " mo"


def terms_in_words(program: Any, *, empty: str = EMPTY) -> str:
    """"10-yr term, 30-yr amortization, 24 mo IO, min DY 8%", the stated ones only; `empty` for none."""
    parts = []
    if program.term_months_min is not None or program.term_months_max is not None:
        parts.append(f"{_months(program.term_months_min, program.term_months_max)} term")
    if program.amortization_years is not None:
        parts.append(f"{program.amortization_years}-yr amortization")
    if program.interest_only_months:
        parts.append(f"{program.interest_only_months} mo IO")
    if program.min_debt_yield is not None:
        parts.append(f"min DY {percent(program.min_debt_yield)}")
    return ", ".join(parts) or empty
