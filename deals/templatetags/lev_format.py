"""Template filters for the admin's figures: {{ value|money }}, {{ value|percent }},
{{ value|multiple }}, {{ slug|enum_label }} (lev.formatting does the work)."""

from __future__ import annotations

from django import template

from lev import formatting
from lev.enums import RATE_INDEX_NAMES

register = template.Library()

register.filter("money", formatting.money)
register.filter("percent", formatting.percent)
register.filter("multiple", formatting.multiple)
register.filter("enum_label", formatting.label)


@register.filter
def dollars(value: object) -> str:
    """Money to the whole dollar ($1,234,568): one precision across a table of quotes."""
    number = formatting._decimal(value)
    return formatting.EMPTY if number is None else formatting.money(number.quantize(1))


@register.filter
def index_name(key: str) -> str:
    """A market rate index in words: "term_sofr_1m" → "1-month Term SOFR"."""
    return RATE_INDEX_NAMES.get(key or "", formatting.label(key) if key else formatting.EMPTY)


@register.filter
def bps_percent(bps: object) -> str:
    """A spread in basis points as a percent with two decimals: 350 → "3.50%"."""
    number = formatting._decimal(bps)
    return formatting.EMPTY if number is None else f"{number / 100:.2f}%"


@register.filter
def first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


@register.filter
def other_lines(text: str) -> str:
    lines = (text or "").strip().splitlines()
    return "\n".join(lines[1:]).strip()


@register.filter
def get_item(mapping: dict, key: object) -> object:
    return (mapping or {}).get(key)
