"""The history file's columns (docs/import-export.md) and how each cell is read: one row per placement
(a deal sent to a lender), the deal's own fields repeated on each of its rows.

`read_header` maps a file's header onto the columns (case, spaces and a few aliases forgiven; missing
and duplicated columns refused); `parse_row` turns one row into a `HistoryRow` or raises `TableError`
naming the line and the column. No database: lender names are resolved by `deals.history.lenders`,
stages and existing deals by the service.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from django.utils import timezone

from deals.history.reader import TableError
from lev import limits
from lev.enums import ASSET_TYPES, BUSINESS_PLANS, LOAN_TYPES, RATE_INDEXES, TRANSACTION_TYPES, US_STATES
from lev.vocabulary import (
    Slip,
    canonical_choice,
    loan_amount_too_small_message,
    money_from_text,
    percent_fraction_message,
)


@dataclass(frozen=True)
class Column:
    key: str
    doc: str
    aliases: tuple[str, ...] = ()


# In the order the export writes them (and the template shows them).
COLUMNS: tuple[Column, ...] = (
    Column("deal_external_id", "Your id of the deal (CRM id, file number): the key a re-import recognises. "
                               "Required.", ("external_id", "deal_id")),
    Column("deal_title", "The deal's name. Required.", ("title", "deal", "deal_name")),
    Column("loan_amount", "The loan requested, US dollars: 12500000, 12,500,000 or $12.5M."),
    Column("loan_type", "One of " + ", ".join(LOAN_TYPES) + "."),
    Column("transaction_type", "One of " + ", ".join(TRANSACTION_TYPES) + "."),
    Column("business_plan", "One of " + ", ".join(BUSINESS_PLANS) + "."),
    Column("close_date", "The deal's (estimated) close date.", ("estimated_close_date",)),
    Column("stage", "A pipeline stage of the account, by name or key (Intake, Closed, dead...)."),
    Column("property_name", "The property's name (the deal's title when empty)."),
    Column("state", "Two-letter US state (or its name)."),
    Column("asset_type", "One of " + ", ".join(ASSET_TYPES) + "."),
    Column("units", "Units (multifamily, hospitality...), a whole number."),
    Column("square_feet", "Rentable square feet, a whole number.", ("sf", "square_footage")),
    Column("noi", "In-place net operating income, US dollars a year.", ("in_place_noi",)),
    Column("value", "The property's estimated value, US dollars.", ("estimated_value",)),
    Column("description", "The deal's description, free text."),
    Column("deal_archived", "yes when the deal is archived (a past deal, kept out of the active lists); no or "
                            "empty: active.", ("archived",)),
    Column("lender", "The lender's name as you write it; matched to the directory (docs/import-export.md).",
           ("lender_name",)),
    Column("lender_id", "The directory lender's id (wins over the name when both are given)."),
    Column("lender_own", "yes: the lender is the team's own, matched by its exact name among the account's own "
                         "lenders, added as the account's own when it has none of that name.", ("own_lender",)),
    Column("sent_on", "When the deal went to the lender. Required on a placement row.", ("date_sent", "sent")),
    Column("answered_on", "When the lender first answered (quote or decline).", ("date_answered", "answered")),
    Column("decided_on", "When it was declined, won or lost (default: answered_on, else sent_on).",
           ("date_decided", "decided")),
    Column("outcome", "sent, quoted, declined, no answer, won or lost (also: draft, reviewing)."),
    Column("decline_reason", "Why the lender declined (declined rows only).", ("reason",)),
    Column("quote_amount", "The loan quoted, US dollars (quoted, won and, when quoted before, lost rows).",
           ("quoted_amount",)),
    Column("fixed_rate", "Fixed rate, percent a year: 6.125 or 6.125% (not 0.06125)."),
    Column("rate_index", "Floating: the index (" + ", ".join(RATE_INDEXES) + ")."),
    Column("spread_bps", "Floating: the spread over the index, basis points (or 2.75% as percent).",
           ("spread",)),
    Column("term_months", "The loan's term, months.", ("term",)),
    Column("amortization_months", "Amortization, months (empty: interest-only).", ("amortization",)),
    Column("max_ltv", "Maximum loan-to-value, percent: 65 or 65%."),
    Column("min_dscr", "Minimum debt service coverage, e.g. 1.25.", ("dscr",)),
    Column("origination_fee", "Origination fee, percent of the loan: 1 or 1%.", ("fee",)),
    Column("exit_fee", "Exit fee, percent of the loan."),
)
KEYS = tuple(c.key for c in COLUMNS)
QUOTE_KEYS = ("quote_amount", "fixed_rate", "rate_index", "spread_bps", "term_months", "amortization_months",
              "max_ltv", "min_dscr", "origination_fee", "exit_fee")
DEAL_KEYS = ("deal_title", "loan_amount", "loan_type", "transaction_type", "business_plan", "close_date", "stage",
             "property_name", "state", "asset_type", "units", "square_feet", "noi", "value", "description",
             "deal_archived")
# How a yes/no column's yes and no may be written (an XLSX TRUE/FALSE cell too): deal_archived also takes
# "archived"/"active", lender_own "own"/"x".
YES = ("yes", "y", "true", "1", "own", "x", "archived")
NO = ("no", "n", "false", "0", "active")

# Outcome words as people write them -> the placement status they record.
OUTCOMES = {
    "draft": "draft", "sent": "sent", "pending": "sent", "reviewing": "reviewing", "in review": "reviewing",
    "quoted": "quoted", "quote": "quoted", "declined": "declined", "passed": "declined", "decline": "declined",
    "no answer": "no_response", "no response": "no_response", "no_answer": "no_response",
    "no_response": "no_response", "won": "won", "winner": "won", "lost": "lost", "archived": "archived",
}
OUTCOME_WORDS = "sent, quoted, declined, no answer, won or lost (also draft, reviewing, archived)"
# Which outcomes carry a quote: required, allowed, or refused.
QUOTE_REQUIRED = {"quoted", "won"}
QUOTE_ALLOWED = QUOTE_REQUIRED | {"lost", "archived"}
# What the export writes for each status (the import reads it back).
OUTCOME_OF_STATUS = {"draft": "draft", "sent": "sent", "reviewing": "reviewing", "quoted": "quoted",
                     "declined": "declined", "no_response": "no answer", "won": "won", "lost": "lost",
                     "archived": "archived"}
# An Excel date stored as a number (days since 1899-12-30): 1950 to 2100 are dates; other numbers are not.
EXCEL_EPOCH = dt.date(1899, 12, 30)
EXCEL_SERIAL_RANGE = (18264, 73051)
_INERT = ("'=", "'+", "'-", "'@")
_CONTROL = re.compile(f"[{limits.CONTROL_CHARACTERS}]")


def _normal(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.strip().lower().lstrip("\ufeff")).strip("_")


_BY_NAME = {_normal(alias): c.key for c in COLUMNS for alias in (c.key, *c.aliases)}


def read_header(header: list[str]) -> dict[str, int]:
    """Column key -> index in the row. Unknown columns are ignored (a CRM export has many); a column named
    twice, or a required one missing, is refused naming it."""
    at: dict[str, int] = {}
    for index, name in enumerate(header):
        key = _BY_NAME.get(_normal(name))
        if key is None:
            continue
        if key in at:
            raise TableError(f'the column "{key}" is named twice (columns {at[key] + 1} and {index + 1})', line=1,
                             column=name or f"#{index + 1}")
        at[key] = index
    missing = [k for k in ("deal_external_id", "deal_title", "outcome") if k not in at]
    if "lender" not in at and "lender_id" not in at:
        missing.append("lender (or lender_id)")
    if missing:
        raise TableError("the header lacks the column" + ("s " if len(missing) > 1 else " ") + ", ".join(missing)
                         + " (docs/import-export.md lists every column)", line=1)
    return at


@dataclass
class Quote:
    loan_amount: Decimal
    rate_type: str
    fixed_rate: Decimal | None = None
    rate_index: str = ""
    spread_bps: int | None = None
    term_months: int | None = None
    amortization_months: int | None = None
    max_ltv: Decimal | None = None
    min_dscr: Decimal | None = None
    origination_fee_percent: Decimal | None = None
    exit_fee_percent: Decimal | None = None


@dataclass
class HistoryRow:
    """One row read: the deal's fields (`deal`: model field -> value), the lender as written, the
    placement's outcome and dates, and its quote."""

    line: int
    external_id: str
    deal: dict[str, Any] = field(default_factory=dict)
    stage: str = ""
    lender_name: str = ""
    lender_id: int | None = None
    lender_own: bool = False  # the team's own lender (lender_own yes): matched or added by its exact name
    status: str = ""
    sent_on: dt.date | None = None
    answered_on: dt.date | None = None
    decided_on: dt.date | None = None
    decline_reason: str = ""
    quote: Quote | None = None

    @property
    def has_placement(self) -> bool:
        return bool(self.status)


class _Cells:
    """One row's cells by column key, each read with the refusal naming line and column."""

    def __init__(self, line: int, values: list[Any], at: dict[str, int], header: list[str], today: dt.date):
        self.line, self.values, self.at, self.header, self.today = line, values, at, header, today

    def name(self, key: str) -> str:
        return self.header[self.at[key]] or key

    def raw(self, key: str) -> Any:
        index = self.at.get(key)
        if index is None or index >= len(self.values):
            return None
        value = self.values[index]
        if isinstance(value, str):
            value = value.strip()
            if value.startswith(_INERT):  # written inert by an export: read as typed
                value = value[1:]
            return value or None
        return value

    def refuse(self, key: str, message: str) -> TableError:
        return TableError(message, line=self.line, column=self.name(key))

    def text(self, key: str, maximum: int) -> str:
        value = self.raw(key)
        if value is None:
            return ""
        text = str(value) if not isinstance(value, float) or not value.is_integer() else str(int(value))
        if len(text) > maximum:
            raise self.refuse(key, f"is longer than {maximum} characters")
        if _CONTROL.search(text):
            raise self.refuse(key, "holds control characters")
        return text

    def number(self, key: str, *, percent: bool = False) -> Decimal | None:
        value = self.raw(key)
        if value is None:
            return None
        if isinstance(value, bool | dt.date):
            raise self.refuse(key, f'"{value}" is not a number')
        if isinstance(value, float):
            if not math.isfinite(value):
                raise self.refuse(key, "is not a finite number")
            value = repr(value)
        text = str(value).replace(",", "").replace(" ", "")
        if percent:
            text = text.removesuffix("%")
        try:
            number = Decimal(text)
        except InvalidOperation:
            raise self.refuse(key, f'"{value}" is not a number') from None
        if not number.is_finite():
            raise self.refuse(key, "is not a finite number")
        if number.adjusted() > 15:
            raise self.refuse(key, f'"{value}" is far larger than any figure this column takes')
        return number

    def money(self, key: str, *, loan: bool = False) -> Decimal | None:
        value = self.raw(key)
        if value is None:
            return None
        amount = money_from_text(value) if isinstance(value, str) else None
        if amount is None:
            amount = self.number(key)
            if isinstance(value, str) and not re.fullmatch(r"[0-9.,\s]+", value):
                raise self.refuse(key, f'"{value}" is not an amount of US dollars (12500000, 12,500,000 or $12.5M)')
        if amount is None or amount <= 0:
            raise self.refuse(key, "must be an amount above 0 US dollars")
        if amount > limits.MONEY_MAX:
            raise self.refuse(key, f"must be at most {limits.MONEY_MAX:,} US dollars")
        if loan and amount < limits.LOAN_AMOUNT_MIN:
            raise self.refuse(key, loan_amount_too_small_message(amount))
        return amount.quantize(Decimal("0.01"))

    def percent(self, key: str, *, floor: Decimal, maximum: int, places: int) -> Decimal | None:
        value = self.number(key, percent=True)
        if value is None:
            return None
        fraction = percent_fraction_message(value, floor=floor, maximum=maximum, places=places)
        if fraction:
            raise self.refuse(key, fraction)
        if value < 0 or value > maximum:
            raise self.refuse(key, f"must be 0 to {maximum} (percent)")
        if value != value.quantize(Decimal(1).scaleb(-places)):
            raise self.refuse(key, f"has more than {places} decimals")
        return value

    def whole(self, key: str, *, maximum: int, minimum: int = 0) -> int | None:
        value = self.number(key)
        if value is None:
            return None
        if value != value.to_integral_value():
            raise self.refuse(key, "must be a whole number")
        if not minimum <= value <= maximum:
            raise self.refuse(key, f"must be {minimum} to {maximum:,}")
        return int(value)

    def yes_no(self, key: str) -> bool:
        value = self.raw(key)
        if value is None or isinstance(value, bool):
            return bool(value)
        word = str(value if not isinstance(value, float) or not value.is_integer() else int(value)).strip().lower()
        if word not in YES + NO:
            raise self.refuse(key, f'"{value}" is not yes or no')
        return word in YES

    def choice(self, key: str, values: tuple[str, ...]) -> str:
        value = self.raw(key)
        if value is None:
            return ""
        try:
            chosen = canonical_choice(str(value), values)
        except Slip as slip:
            raise self.refuse(key, str(slip)) from None
        if chosen not in values:
            raise self.refuse(key, f'"{value}" is not one of ' + ", ".join(values))
        return chosen

    def date(self, key: str, *, past: bool = True) -> dt.date | None:
        value = self.raw(key)
        if value is None:
            return None
        day = None
        if isinstance(value, dt.datetime):
            day = value.date()
        elif isinstance(value, dt.date):
            day = value
        elif (isinstance(value, int | float) and not isinstance(value, bool)) or (
                isinstance(value, str) and re.fullmatch(r"[0-9]{5}(\.[0-9]+)?", value)):
            serial = float(value)
            if math.isfinite(serial) and EXCEL_SERIAL_RANGE[0] <= serial <= EXCEL_SERIAL_RANGE[1]:
                day = EXCEL_EPOCH + dt.timedelta(days=int(serial))
        elif isinstance(value, str):
            day = _date_text(value)
        if day is None:
            raise self.refuse(key, f'"{value}" is not a date (2024-03-31, 3/31/2024 or an Excel date)')
        if past and day > self.today:
            raise self.refuse(key, f"{day.isoformat()} is in the future (today is {self.today.isoformat()})")
        return day


def _date_text(text: str) -> dt.date | None:
    text = text.strip()
    try:
        return dt.date.fromisoformat(text[:10]) if re.match(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text) else (
            dt.datetime.strptime(text, "%m/%d/%Y").date())  # noqa: DTZ007 (a day, no time)
    except ValueError:
        return None


def _quote(cells: _Cells) -> Quote | None:
    given = [k for k in QUOTE_KEYS if k in cells.at and cells.raw(k) is not None]
    if not given:
        return None
    amount = cells.money("quote_amount", loan=True)
    if amount is None:
        raise cells.refuse("quote_amount" if "quote_amount" in cells.at else given[0],
                           "a quote needs its amount (quote_amount)")
    fixed = cells.percent("fixed_rate", floor=limits.RATE_PERCENT_FLOOR, maximum=limits.RATE_PERCENT_MAX,
                          places=limits.RATE_DECIMAL_PLACES)
    index = cells.choice("rate_index", RATE_INDEXES)
    spread = _spread(cells)
    if fixed is not None and (index or spread is not None):
        raise cells.refuse("fixed_rate", "a quote is fixed (fixed_rate) or floating (rate_index and spread_bps), "
                                         "not both")
    if fixed is None and not (index and spread is not None):
        missing = "rate_index" if not index else "spread_bps"
        raise cells.refuse(missing if missing in cells.at or not index else "fixed_rate",
                           "a quote needs its rate: fixed_rate, or rate_index and spread_bps")
    return Quote(
        loan_amount=amount, rate_type="fixed" if fixed is not None else "floating", fixed_rate=fixed,
        rate_index=index, spread_bps=spread,
        term_months=cells.whole("term_months", minimum=1, maximum=limits.TERM_MONTHS_MAX),
        amortization_months=cells.whole("amortization_months", minimum=1, maximum=limits.AMORTIZATION_MONTHS_MAX),
        max_ltv=cells.percent("max_ltv", floor=limits.LTV_PERCENT_FLOOR, maximum=limits.LTV_PERCENT_MAX, places=2),
        min_dscr=_dscr(cells),
        origination_fee_percent=cells.percent("origination_fee", floor=limits.FEE_PERCENT_FLOOR,
                                              maximum=limits.FEE_PERCENT_MAX, places=3),
        exit_fee_percent=cells.percent("exit_fee", floor=limits.FEE_PERCENT_FLOOR, maximum=limits.FEE_PERCENT_MAX,
                                       places=3),
    )


def _spread(cells: _Cells) -> int | None:
    raw = cells.raw("spread_bps")
    if isinstance(raw, str) and raw.endswith("%"):  # 2.75% written as percent: 275 bps
        value = cells.number("spread_bps", percent=True)
        bps = value * 100
        if bps != bps.to_integral_value() or not 0 <= bps <= limits.SPREAD_BPS_MAX:
            raise cells.refuse("spread_bps", f"must be 0 to {limits.SPREAD_BPS_MAX} basis points, whole")
        return int(bps)
    return cells.whole("spread_bps", maximum=limits.SPREAD_BPS_MAX)


def _dscr(cells: _Cells) -> Decimal | None:
    value = cells.number("min_dscr")
    if value is None:
        return None
    if not 0 < value <= limits.DSCR_INPUT_MAX:
        raise cells.refuse("min_dscr", f"must be above 0 and at most {limits.DSCR_INPUT_MAX} (e.g. 1.25)")
    if value != value.quantize(Decimal("0.01")):
        raise cells.refuse("min_dscr", "has more than 2 decimals")
    return value


def parse_row(line: int, values: list[Any], at: dict[str, int], header: list[str],
              today: dt.date | None = None) -> HistoryRow:
    """One row as a HistoryRow; TableError (line, column, what) for the first cell that is wrong."""
    cells = _Cells(line, values, at, header, today or timezone.localdate())
    external_id = cells.text("deal_external_id", limits.DEAL_EXTERNAL_ID_MAX)
    if not external_id:
        raise cells.refuse("deal_external_id", "is required: your id of the deal, the key a re-import recognises")
    title = cells.text("deal_title", limits.DEAL_TITLE_MAX)
    if not title:
        raise cells.refuse("deal_title", "is required")
    deal = {
        "title": title,
        "loan_amount": cells.money("loan_amount", loan=True),
        "loan_type": cells.choice("loan_type", LOAN_TYPES) or "tbd",
        "transaction_type": cells.choice("transaction_type", TRANSACTION_TYPES) or "tbd",
        "business_plan": cells.choice("business_plan", BUSINESS_PLANS),
        "estimated_close_date": cells.date("close_date", past=False),
        "property_name": cells.text("property_name", limits.PROPERTY_NAME_MAX),
        "state": cells.choice("state", US_STATES),
        "asset_type": cells.choice("asset_type", ASSET_TYPES),
        "units": cells.whole("units", maximum=limits.UNITS_MAX),
        "square_footage": cells.whole("square_feet", maximum=limits.SQUARE_FOOTAGE_MAX),
        "in_place_noi": cells.money("noi"),
        "estimated_value": cells.money("value"),
        "description": cells.text("description", limits.DEAL_DESCRIPTION_MAX),
        "archived": cells.yes_no("deal_archived"),
    }
    row = HistoryRow(line=line, external_id=external_id, deal=deal, stage=cells.text("stage", 100))
    row.lender_name = cells.text("lender", 200)
    if "lender_id" in at and cells.raw("lender_id") is not None:
        row.lender_id = cells.whole("lender_id", minimum=1, maximum=limits.MAX_ID)
    row.lender_own = cells.yes_no("lender_own")
    outcome = cells.raw("outcome")
    if outcome is None:
        if row.lender_name or row.lender_id:
            raise cells.refuse("outcome", "is required on a row with a lender: " + OUTCOME_WORDS)
        if any(cells.raw(k) is not None for k in ("sent_on", "answered_on", "decline_reason", *QUOTE_KEYS)):
            raise cells.refuse("lender", "a placement row needs its lender (or lender_id)")
        return row  # the deal alone, not placed
    status = OUTCOMES.get(" ".join(str(outcome).lower().replace("_", " ").split()))
    if status is None:
        raise cells.refuse("outcome", f'"{outcome}" is not an outcome: {OUTCOME_WORDS}')
    if not (row.lender_name or row.lender_id):
        raise cells.refuse("lender" if "lender" in at else "lender_id", "is required on a placement row")
    row.status = status
    row.sent_on = cells.date("sent_on")
    if row.sent_on is None and status != "draft":
        raise cells.refuse("sent_on" if "sent_on" in at else "outcome",
                           "is required: when the deal went to the lender (the ranking learns from it)")
    row.answered_on = cells.date("answered_on")
    row.decided_on = cells.date("decided_on")
    for key, day in (("answered_on", row.answered_on), ("decided_on", row.decided_on)):
        if day is not None and row.sent_on is not None and day < row.sent_on:
            raise cells.refuse(key, f"{day.isoformat()} is before sent_on ({row.sent_on.isoformat()})")
    row.decline_reason = cells.text("decline_reason", limits.DECLINE_REASON_MAX)
    if row.decline_reason and status != "declined":
        raise cells.refuse("decline_reason", f"is for declined rows; this row says {outcome}")
    row.quote = _quote(cells)
    if row.quote is not None and status not in QUOTE_ALLOWED:
        first = next(k for k in QUOTE_KEYS if k in at and cells.raw(k) is not None)
        raise cells.refuse(first, f"a quote on a row whose outcome is {outcome}: only quoted, won or lost rows "
                                  "carry a quote")
    if row.quote is None and status in QUOTE_REQUIRED:
        raise cells.refuse("quote_amount" if "quote_amount" in at else "outcome",
                           f"a {status} row needs its quote (quote_amount and the rate)")
    return row
