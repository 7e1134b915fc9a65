"""Reading a market-rate CSV (`date,index,rate`, header required) into rows, or into every bad line's
number and what is wrong with it. Used by the `import_market_rates` command; no database."""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

from lenders.rates.services import RateRow
from lev import limits
from lev.enums import RATE_INDEX_NAMES, RATE_INDEXES
from lev.vocabulary import canonical_choice, percent_fraction_message

COLUMNS = ("date", "index", "rate")
# Display names ("3-month Term SOFR") read as their keys, ignoring case and separators.
_BY_NAME = {" ".join(name.lower().replace("-", " ").split()): key for key, name in RATE_INDEX_NAMES.items()}
INDEX_CHOICES = ", ".join(f"{key} ({RATE_INDEX_NAMES[key]})" for key in RATE_INDEXES)


def index_key(text: str) -> str | None:
    """The index a key or display name names ("term_sofr_3m", "3-month Term SOFR", "sofr"), or None."""
    key = canonical_choice(text, RATE_INDEXES)
    if key in RATE_INDEXES:
        return key
    return _BY_NAME.get(" ".join(text.lower().replace("-", " ").replace("_", " ").split()))


def _rate(text: str) -> tuple[Decimal | None, str | None]:
    try:
        rate = Decimal(text.strip().removesuffix("%").strip())
    except InvalidOperation:
        return None, f'rate "{text}" is not a number (percent per year, e.g. 4.31)'
    if not rate.is_finite():
        return None, f'rate "{text}" is not a number (percent per year, e.g. 4.31)'
    fraction = percent_fraction_message(rate, floor=limits.RATE_PERCENT_FLOOR, maximum=limits.RATE_PERCENT_MAX)
    if fraction:
        return None, f"rate {text} {fraction}"
    if rate < 0 or rate > limits.RATE_PERCENT_MAX:
        return None, f"rate {text} must be 0 to {limits.RATE_PERCENT_MAX} (percent per year)"
    if rate != rate.quantize(Decimal(1).scaleb(-limits.RATE_DECIMAL_PLACES)):
        return None, f"rate {text} has more than {limits.RATE_DECIMAL_PLACES} decimals"
    return rate, None


def read_rows(lines: Iterable[str]) -> tuple[list[RateRow], list[str]]:
    """(rows, errors): errors name the line ("line 4: …"); rows are only complete when errors is empty."""
    reader = csv.reader(lines)
    header = next(reader, None)
    names = [h.strip().lower().lstrip("\ufeff") for h in header or []]
    if sorted(names) != sorted(COLUMNS):
        return [], [f"line 1: the header must name the columns {','.join(COLUMNS)} (found "
                    f"{','.join(names) or 'nothing'})"]
    at = {name: names.index(name) for name in COLUMNS}
    rows: list[RateRow] = []
    errors: list[str] = []
    seen: dict[tuple[str, dt.date], int] = {}
    while True:
        try:
            values = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            # csv refuses a field over its limit (131,072 characters) or a broken quote: the line, not a
            # traceback; nothing after it can be trusted, so the reading stops there.
            problem = ("a value is far longer than any date, index or rate" if "larger than field limit" in str(exc)
                       else "is not valid CSV (a quote left open?)")
            errors.append(f"line {reader.line_num}: {problem}")
            break
        line = reader.line_num
        if not any(v.strip() for v in values):
            continue
        if len(errors) + len(rows) >= limits.MARKET_RATE_IMPORT_ROWS_MAX:
            errors.append(f"line {line}: more than {limits.MARKET_RATE_IMPORT_ROWS_MAX} rows in one file")
            break
        if len(values) != len(COLUMNS):
            errors.append(f"line {line}: {len(values)} values, expected {len(COLUMNS)} ({','.join(names)})")
            continue
        problems = []
        date_text, index_text, rate_text = (values[at[c]].strip() for c in COLUMNS)
        try:
            on = dt.date.fromisoformat(date_text) if len(date_text) == 10 else None
        except ValueError:
            on = None
        if on is None:
            problems.append(f'date "{date_text}" is not a date YYYY-MM-DD')
        index = index_key(index_text)
        if index is None:
            problems.append(f'index "{index_text}" is not one of {INDEX_CHOICES}')
        rate, problem = _rate(rate_text)
        if problem:
            problems.append(problem)
        if not problems and (index, on) in seen:
            problems.append(f"{index} on {on.isoformat()} is already on line {seen[(index, on)]}")
        if problems:
            errors.append(f"line {line}: " + "; ".join(problems))
            continue
        seen[(index, on)] = line
        rows.append(RateRow(index=index, on=on, rate=rate))
    return rows, errors
