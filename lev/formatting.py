"""How figures read for a person (the admin): money as money, ratios as percentages or multiples,
enum slugs as words, a state list as the coverage it is. Pure functions; None reads as a dash."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

from lev.limits import COVERAGE_STATES_SHOWN

EMPTY = "—"


def decimal_or_none(value: object) -> Decimal | None:
    """The value as a finite Decimal, or None when it is empty or no number."""
    if value is None or value == "":
        return None
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


def money(value: object) -> str:
    """$18,500,000 (cents only when there are some: $1,250.50); negative as -$5,000."""
    number = decimal_or_none(value)
    if number is None:
        return EMPTY
    sign = "-" if number < 0 else ""
    number = abs(number).quantize(Decimal("0.01"))
    text = f"{number:,.0f}" if number == number.to_integral_value() else f"{number:,.2f}"
    return f"{sign}${text}"


def _trimmed(number: Decimal, places: int) -> str:
    text = f"{number:,.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def dollars(value: object) -> str:
    """Money to the whole dollar ($1,352,487): one precision across a table of figures."""
    number = decimal_or_none(value)
    return EMPTY if number is None else money(number.quantize(Decimal(1)))


def basis_points(value: object) -> str:
    """A spread in basis points as a percent: 350 → 3.50%."""
    number = decimal_or_none(value)
    return EMPTY if number is None else f"{number / 100:.2f}%"


def percent(value: object, places: int = 2) -> str:
    """A value already in percent: 71.15%, 65% (no trailing zeros)."""
    number = decimal_or_none(value)
    return EMPTY if number is None else f"{_trimmed(number, places)}%"


def multiple(value: object) -> str:
    """A coverage ratio such as DSCR: 1.25x (always two decimals, as lenders quote it)."""
    number = decimal_or_none(value)
    return EMPTY if number is None else f"{number:,.2f}x"


# Slugs whose words are acronyms or hyphenated, as a lender would write them.
SPECIAL_LABELS = {"cmbs": "CMBS", "sba": "SBA", "non_recourse": "Non-recourse", "tbd": "To be decided"}


def label(slug: str) -> str:
    """An enum slug as words: heavy_bridge -> Heavy Bridge, cmbs -> CMBS; codes such as states keep
    their case."""
    if slug in SPECIAL_LABELS:
        return SPECIAL_LABELS[slug]
    return slug if slug.isupper() else slug.replace("_", " ").title()


def label_choices(values: tuple[str, ...]) -> list[tuple[str, str]]:
    """(slug, label) pairs for a form or a list filter."""
    return [(v, label(v)) for v in values]


def labels(slugs: Iterable[str] | None, universe: tuple[str, ...] | None = None) -> str:
    """Slugs as words, in the universe's order when one is given (the order of the checkboxes)."""
    values = list(slugs or ())
    if universe is not None:
        values.sort(key=lambda v: universe.index(v) if v in universe else len(universe))
    return ", ".join(label(v) for v in values) or EMPTY


def coverage(states: Iterable[str] | None, limit: int = COVERAGE_STATES_SHOWN) -> str:
    """Sponsor states as coverage: an empty list means nationwide; a long list is shortened."""
    values = sorted(set(states or ()))
    if not values:
        return "Nationwide"
    shown = ", ".join(values[:limit])
    more = len(values) - limit
    return f"{shown} +{more} more" if more > 0 else shown


def money_short(value: object) -> str:
    """Money as a list column reads it: $18.5M, $850K, $1.25B, $900 (two significant decimals at
    most, trailing zeros dropped); None as a dash."""
    number = decimal_or_none(value)
    if number is None:
        return EMPTY
    sign = "-" if number < 0 else ""
    number = abs(number)
    units = ((Decimal(10) ** 9, "B"), (Decimal(10) ** 6, "M"), (Decimal(10) ** 3, "K"))
    for i, (size, suffix) in enumerate(units):
        if number >= size or (number / size).quantize(Decimal("0.01")) >= 1:
            scaled = (number / size).quantize(Decimal("0.01"))
            if scaled >= 1000 and i > 0:  # $999,999,999 rounds up to $1B
                size, suffix = units[i - 1]
                scaled = (number / size).quantize(Decimal("0.01"))
            return f"{sign}${_trimmed(scaled, 2)}{suffix}"
    return f"{sign}${_trimmed(number.quantize(Decimal('0.01')), 2)}"


def money_range(low: object, high: object) -> str:
    """$1M to $25M as "$1M\N{EN DASH}$25M"; one end missing reads as "up to $25M" or "$1M+"."""
    if decimal_or_none(low) is None and decimal_or_none(high) is None:
        return EMPTY
    if decimal_or_none(low) is None:
        return f"up to {money_short(high)}"
    if decimal_or_none(high) is None:
        return f"{money_short(low)}+"
    return f"{money_short(low)}\N{EN DASH}{money_short(high)}"


def day(value) -> str:
    """A date (or a moment, in the current time zone) as a list reads it: Nov 24 this year, Nov 24,
    2025 another year; None as a dash."""
    if value is None:
        return EMPTY
    from django.utils import timezone

    if hasattr(value, "hour"):
        value = timezone.localtime(value) if timezone.is_aware(value) else value
        value = value.date()
    text = f"{value:%b} {value.day}"
    return text if value.year == timezone.localdate().year else f"{text}, {value.year}"
