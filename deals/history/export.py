"""Exporting an account's history in the format the import reads (`deals.history.columns`): one row per
placement (a deal never placed: one row without a lender), CSV or XLSX, streamed a thousand deals at a
time so memory does not grow with the account; the whole account, or the deals given.

The team's own lenders travel with it (deals.history.own): a row whose lender is the account's own says
`lender_own` yes and names it without its id (the id is this account's; the name is what another account
matches or adds), and the account's own lenders and programs are written as a second table: the
workbook's second sheet (XLSX), or a companion file beside a CSV (`deals.history.own.companion_path`).

A cell a spreadsheet would run as a formula (text starting with =, +, - or @) is written inert, with a
leading apostrophe, which the import drops again (round trip), in every column of both tables. A deal
without an external id is written with `lev-<id>`, the key a re-import of the file recognises. Each
placement's quote is its winning one, else its latest live one (a placement re-quoted keeps its last
quote in the file).
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from deals.history.columns import KEYS, OUTCOME_OF_STATUS
from deals.history.own import OWN_KEYS, OWN_SHEET, companion_path, has_own, own_rows
from deals.models import Deal, DealFinancials, DealProperty
from deals.placements.models import Placement, TermSheet

DEALS_PER_READ = 1000
FORMULA_STARTS = ("=", "+", "-", "@")
FORMATS = ("csv", "xlsx")
CONTENT_TYPES = {"csv": "text/csv; charset=utf-8",
                 "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}


@dataclass
class ExportStats:
    deals: int = 0
    rows: int = 0
    own_rows: int = 0  # rows of the own lenders table (its lenders and programs)
    companion: Path | None = None  # a CSV export's own lenders table, when the account has own lenders


def inert(value: Any) -> Any:
    """Text a spreadsheet would run as a formula, made plain text (a leading apostrophe)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _deal_ids(account, deals: Iterable[int] | QuerySet | None) -> QuerySet:
    chosen = Deal.objects.filter(account=account)  # the account's alone, whatever ids are given
    if deals is not None:
        chosen = chosen.filter(pk__in=deals.values("pk") if isinstance(deals, QuerySet) else list(deals))
    return chosen.order_by("pk")


def _rows(account, deals: Iterable[int] | QuerySet | None = None) -> Iterator[list[Any]]:
    """Each row's values in the order of KEYS (None for an empty cell): dates as dates, amounts as
    Decimals, text as stored."""
    width = len(KEYS)
    chosen = _deal_ids(account, deals)
    today_zone = timezone.get_current_timezone()
    days: dict[Any, dt.date] = {}  # placements share their days: one conversion each

    def day(moment: dt.datetime | None) -> dt.date | None:
        if moment is None:
            return None
        found = days.get(moment)
        if found is None:
            found = days[moment] = moment.astimezone(today_zone).date()
        return found

    last = 0
    while True:
        chunk = list(chosen.filter(pk__gt=last).values_list(
            "pk", "external_id", "title", "loan_amount", "loan_type", "transaction_type", "business_plan",
            "estimated_close_date", "stage__name", "description", "archived")[:DEALS_PER_READ])
        if not chunk:
            return
        last = chunk[-1][0]
        ids = [d[0] for d in chunk]
        days.clear()
        properties: dict[int, tuple] = {}
        for prop in DealProperty.objects.filter(deal_id__in=ids).order_by("pk").values_list(
                "deal_id", "name", "state", "asset_type", "units", "square_footage"):
            properties.setdefault(prop[0], prop[1:])
        financials = {f[0]: f[1:] for f in DealFinancials.objects.filter(deal_id__in=ids).values_list(
            "deal_id", "in_place_noi", "estimated_value")}
        placements: dict[int, list[tuple]] = {}
        for placement in Placement.objects.filter(deal_id__in=ids).order_by("deal_id", "pk").values_list(
                "pk", "deal_id", "lender_id", "lender__name", "lender__account_id", "status", "sent_at",
                "first_response_at", "decided_at", "decline_reason"):
            placements.setdefault(placement[1], []).append(placement)
        quotes: dict[int, tuple] = {}
        for quote in TermSheet.objects.filter(deal_id__in=ids, deleted_at=None).order_by(
                "placement_id", "winning", "received_at", "pk").values_list(
                "placement_id", "loan_amount", "fixed_rate", "rate_index", "spread_bps", "term_months",
                "amortization_months", "max_ltv", "min_dscr", "origination_fee_percent", "exit_fee_percent"):
            quotes[quote[0]] = quote[1:]  # the last wins: the winning one, else the latest
        for (pk, external_id, title, amount, loan_type, transaction_type, plan, close, stage, description,
             archived) in chunk:
            prop = properties.get(pk) or (None,) * 5
            money = financials.get(pk) or (None, None)
            base = [external_id or f"lev-{pk}", title, amount, loan_type, transaction_type, plan or None, close,
                    stage, *prop, *money, description or None, "yes" if archived else None]
            for placement in placements.get(pk, (None,)):
                if placement is None:
                    yield base + [None] * (width - len(base))
                    continue
                _pk, _deal, lender_id, name, owner, status, sent, answered, decided, reason = placement
                row = [*base, name, None if owner else lender_id, "yes" if owner else None, day(sent),
                       day(answered), day(decided), OUTCOME_OF_STATUS[status], reason or None]
                quote = quotes.get(_pk)
                row.extend(quote if quote is not None else (None,) * 10)
                yield row


def _text(value: Any) -> str:
    if value is None:
        return ""
    if value.__class__ is str:
        return "'" + value if value.startswith(FORMULA_STARTS) else value
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") if value == value.to_integral_value() else format(value, "f")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(inert(value))


def history_export(*, account, path: Path, deals: Iterable[int] | QuerySet | None = None) -> ExportStats:
    """Write the account's history (or the `deals` given, of the account) to `path`, .csv or .xlsx by its
    suffix. An XLSX carries the own lenders table as its second sheet; a CSV export of an account that has
    own lenders or programs writes it beside, to `companion_path(path)` (ExportStats.companion)."""
    kind = "xlsx" if path.suffix.lower() == ".xlsx" else "csv"
    stats = history_write(account=account, path=path, kind=kind, deals=deals)
    if kind == "csv" and has_own(account):
        stats.companion = companion_path(path)
        stats.own_rows = history_write(account=account, path=stats.companion, kind="csv", table="own").own_rows
    return stats


def history_write(*, account, path: Path, kind: str, deals: Iterable[int] | QuerySet | None = None,
                  table: str = "history") -> ExportStats:
    """Write to `path` the account's history (`table` "history": the deals given, else all; an XLSX with
    the own lenders sheet) or its own lenders table alone (`table` "own")."""
    stats = ExportStats(deals=0 if table == "own" else _deal_ids(account, deals).count())
    if kind == "xlsx":
        _write_xlsx(account, path, stats, deals, history=table != "own")
        return stats
    with path.open("w", encoding="utf-8-sig", newline="") as file:
        writer = csv.writer(file)
        if table == "own":
            writer.writerow(OWN_KEYS)
            for row in own_rows(account):
                writer.writerow([_text(row.get(key)) for key in OWN_KEYS])
                stats.own_rows += 1
        else:
            writer.writerow(KEYS)
            for row in _rows(account, deals):
                writer.writerow([_text(v) for v in row])
                stats.rows += 1
    return stats


def _write_xlsx(account, path: Path, stats: ExportStats, deals, *, history: bool = True) -> None:
    """rustpy-xlsxwriter (rust_xlsxwriter's binding): each sheet's rows taken from a generator and written
    in constant memory, strings always as strings (never formulas or links), dates as date cells; text a
    spreadsheet would run as a formula is made inert besides, as in the CSV. XlsxWriter's per-cell Python
    took 30 s of CPU for 100,000 rows, past the 20 s budget; this takes about 5 (docs/benchmarks.md)."""
    from rustpy_xlsxwriter import write_worksheets

    def history_rows() -> Iterator[dict[str, Any]]:
        for row in _rows(account, deals):
            stats.rows += 1
            yield dict(zip(KEYS, [_cell(v) for v in row], strict=True))
        if not stats.rows:  # the header comes from the first row: an empty export is its header alone
            yield dict.fromkeys(KEYS)

    def own() -> Iterator[dict[str, Any]]:
        for row in own_rows(account):
            stats.own_rows += 1
            yield {key: _cell(row.get(key)) for key in OWN_KEYS}
        if not stats.own_rows:
            yield dict.fromkeys(OWN_KEYS)

    sheets = [("History", history_rows())] if history else []
    write_worksheets([*sheets, (OWN_SHEET, own())], str(path), datetime_format="yyyy-mm-dd")


def _cell(value: Any) -> Any:
    """A value as the XLSX writer takes it: text made inert, a Decimal as a float (every amount and rate
    of the format fits a float's 15 digits), an empty text as an empty cell."""
    if value is None or value.__class__ is dt.date:
        return value
    if value.__class__ is str:
        if not value:
            return None
        return "'" + value if value.startswith(FORMULA_STARTS) else value
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, int | float):
        return value
    return inert(str(value))
