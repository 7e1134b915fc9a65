"""How a cell of a rent roll or T-12 is read: amounts as brokers receive them ("$1,234.50", "(1,234)",
"1,234-", "95%", a number), header words, and totals or section labels. Pure functions."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal, InvalidOperation
from typing import Any

CENTS = Decimal("0.01")
_SPACES = re.compile(r"\s+")
_AMOUNT = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
_GROUPED = re.compile(r"^\d{1,3}(,\d{3})+(\.\d*)?$")
# What stands for nothing in an amount column.
_NOTHING = {"", "-", "--", "\u2014", "\u2013", "n/a", "na", "none", "nil"}


class NotAnAmount(ValueError):
    pass


def text(value: Any) -> str:
    """A cell as one line of text (a date as its ISO form)."""
    if value is None:
        return ""
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()[:10]
    return _SPACES.sub(" ", str(value)).strip()


def words(value: Any) -> str:
    """A header or label as comparable words: lower case, punctuation but '#' and '/' as spaces."""
    return _SPACES.sub(" ", re.sub(r"[^a-z0-9#/%+]+", " ", text(value).lower())).strip()


def amount(value: Any) -> Decimal | None:
    """The amount in a cell, None when it is empty (or a dash); NotAnAmount when it is something else.
    Accepts numbers, "$1,234.50", "(1,234)" and "1,234-" (negatives), "USD 12", "12.5%" (12.5)."""
    if value is None or isinstance(value, bool):
        if isinstance(value, bool):
            raise NotAnAmount(str(value))
        return None
    if isinstance(value, int | float | Decimal):
        try:
            number = Decimal(str(value))
        except InvalidOperation:
            raise NotAnAmount(str(value)) from None
        if not number.is_finite():
            raise NotAnAmount(str(value))
        return number
    if isinstance(value, dt.date | dt.datetime | dt.time | dt.timedelta):
        raise NotAnAmount(text(value))
    raw = text(value)
    cleaned = raw.lower().replace(" ", "").replace("\u00a0", "")
    if cleaned in _NOTHING:
        return None
    negative = False
    if cleaned.startswith("(") and cleaned.endswith(")"):
        negative, cleaned = True, cleaned[1:-1]
    if cleaned.endswith("-") and len(cleaned) > 1:
        negative, cleaned = True, cleaned[:-1]
    if cleaned.startswith("-"):
        negative, cleaned = not negative, cleaned[1:]
    for prefix in ("usd", "$", "us$"):
        if cleaned.startswith(prefix):
            cleaned = cleaned[len(prefix):]
    if cleaned.startswith("-"):  # "$-1,234"
        negative, cleaned = not negative, cleaned[1:]
    cleaned = cleaned.removesuffix("%")
    if "," in cleaned:
        if not _GROUPED.match(cleaned):
            raise NotAnAmount(raw)
        cleaned = cleaned.replace(",", "")
    if not _AMOUNT.match(cleaned):
        raise NotAnAmount(raw)
    number = Decimal(cleaned)
    return -number if negative else number


def money(value: Decimal) -> str:
    """A Decimal as the figures store it: cents, as a string."""
    return str(value.quantize(CENTS))


def shown(value: Any, limit: int = 40) -> str:
    """A cell as a problem quotes it."""
    words_ = text(value)
    return words_ if len(words_) <= limit else words_[:limit - 1] + "…"


def is_total(label: str) -> bool:
    """A totals or summary line ("Total", "Grand Total", "Subtotal - Building A", "Totals:")."""
    first = words(label).split(" ")[0] if label else ""
    return first in {"total", "totals", "subtotal", "subtotals", "grand", "sum", "summary"}
