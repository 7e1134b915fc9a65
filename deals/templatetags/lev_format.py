"""Template filters for the admin's figures: {{ value|money }}, {{ value|percent }},
{{ value|multiple }}, {{ slug|enum_label }}, {{ value|dollars }} (whole dollars), {{ bps|bps_percent }},
{{ index|index_name }} (lev.formatting does the work)."""

from __future__ import annotations

from django import template

from lev import formatting
from lev.enums import RATE_INDEX_NAMES

register = template.Library()

register.filter("money", formatting.money)
register.filter("percent", formatting.percent)
register.filter("multiple", formatting.multiple)
register.filter("enum_label", formatting.label)
register.filter("dollars", formatting.dollars)
register.filter("bps_percent", formatting.basis_points)


@register.filter
def index_name(key: str) -> str:
    """A market rate index in words: "term_sofr_1m" → "1-month Term SOFR"."""
    return RATE_INDEX_NAMES.get(key or "", formatting.label(key) if key else formatting.EMPTY)


@register.filter
def first_line(text: str) -> str:
    """The first non-empty line of a note (the rest is shown behind "more")."""
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


@register.filter
def get_item(mapping: dict, key: object) -> object:
    """{{ notes_by_id|get_item:quote.term_sheet_id }}"""
    return (mapping or {}).get(key)
