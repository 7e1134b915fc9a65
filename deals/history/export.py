"""Exporting an account's history in the format the import reads (`deals.history.columns`): one row per
placement (a deal never placed: one row without a lender), CSV or XLSX, streamed a thousand deals at a
time so memory does not grow with the account.

A cell a spreadsheet would run as a formula (text starting with =, +, - or @) is written inert, with a
leading apostrophe, which the import drops again (round trip). A deal without an external id is written
with `lev-<id>`, the key a re-import of the file recognises. Each placement's quote is its winning one,
else its latest live one (a placement re-quoted keeps its last quote in the file).
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.utils import timezone

from deals.history.columns import KEYS, OUTCOME_OF_STATUS
from deals.models import Deal, DealFinancials, DealProperty
from deals.placements.models import Placement, TermSheet

DEALS_PER_READ = 1000
FORMULA_STARTS = ("=", "+", "-", "@")


@dataclass
class ExportStats:
    deals: int = 0
    rows: int = 0


def inert(value: Any) -> Any:
    """Text a spreadsheet would run as a formula, made plain text (a leading apostrophe)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _day(moment: dt.datetime | None) -> dt.date | None:
    return None if moment is None else timezone.localdate(moment)


def _rows(account) -> Iterator[dict[str, Any]]:
    deals = Deal.objects.filter(account=account).order_by("pk")
    last = 0
    while True:
        chunk = list(deals.filter(pk__gt=last).values(
            "pk", "external_id", "title", "loan_amount", "loan_type", "transaction_type", "business_plan",
            "estimated_close_date", "stage__name")[:DEALS_PER_READ])
        if not chunk:
            return
        last = chunk[-1]["pk"]
        ids = [d["pk"] for d in chunk]
        properties: dict[int, dict] = {}
        for prop in DealProperty.objects.filter(deal_id__in=ids).order_by("pk").values(
                "deal_id", "name", "state", "asset_type", "units", "square_footage"):
            properties.setdefault(prop["deal_id"], prop)
        financials = {f["deal_id"]: f for f in DealFinancials.objects.filter(deal_id__in=ids).values(
            "deal_id", "in_place_noi", "estimated_value")}
        placements: dict[int, list[dict]] = {}
        for placement in Placement.objects.filter(deal_id__in=ids).order_by("deal_id", "pk").values(
                "pk", "deal_id", "lender_id", "lender__name", "status", "sent_at", "first_response_at",
                "decided_at", "decline_reason"):
            placements.setdefault(placement["deal_id"], []).append(placement)
        quotes: dict[int, dict] = {}
        for quote in TermSheet.objects.filter(deal_id__in=ids, deleted_at=None).order_by(
                "placement_id", "winning", "received_at", "pk").values(
                "placement_id", "loan_amount", "rate_type", "fixed_rate", "rate_index", "spread_bps", "term_months",
                "amortization_months", "max_ltv", "min_dscr", "origination_fee_percent", "exit_fee_percent"):
            quotes[quote["placement_id"]] = quote  # the last wins: the winning one, else the latest
        for deal in chunk:
            prop = properties.get(deal["pk"], {})
            money = financials.get(deal["pk"], {})
            base = {
                "deal_external_id": deal["external_id"] or f"lev-{deal['pk']}", "deal_title": deal["title"],
                "loan_amount": deal["loan_amount"], "loan_type": deal["loan_type"],
                "transaction_type": deal["transaction_type"], "business_plan": deal["business_plan"],
                "close_date": deal["estimated_close_date"], "stage": deal["stage__name"],
                "property_name": prop.get("name"), "state": prop.get("state"), "asset_type": prop.get("asset_type"),
                "units": prop.get("units"), "square_feet": prop.get("square_footage"),
                "noi": money.get("in_place_noi"), "value": money.get("estimated_value"),
            }
            for placement in placements.get(deal["pk"], [None]):
                row = dict(base)
                if placement is not None:
                    row.update({
                        "lender": placement["lender__name"], "lender_id": placement["lender_id"],
                        "sent_on": _day(placement["sent_at"]), "answered_on": _day(placement["first_response_at"]),
                        "decided_on": _day(placement["decided_at"]), "outcome": OUTCOME_OF_STATUS[placement["status"]],
                        "decline_reason": placement["decline_reason"],
                    })
                    quote = quotes.get(placement["pk"])
                    if quote is not None:
                        row.update({
                            "quote_amount": quote["loan_amount"], "fixed_rate": quote["fixed_rate"],
                            "rate_index": quote["rate_index"], "spread_bps": quote["spread_bps"],
                            "term_months": quote["term_months"], "amortization_months": quote["amortization_months"],
                            "max_ltv": quote["max_ltv"], "min_dscr": quote["min_dscr"],
                            "origination_fee": quote["origination_fee_percent"],
                            "exit_fee": quote["exit_fee_percent"],
                        })
                yield row


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") if value == value.to_integral_value() else format(value, "f")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(inert(value))


def history_export(*, account, path: Path) -> ExportStats:
    """Write the account's history to `path` (.csv or .xlsx, by its suffix)."""
    stats = ExportStats(deals=Deal.objects.filter(account=account).count())
    if path.suffix.lower() == ".xlsx":
        _write_xlsx(account, path, stats)
        return stats
    with path.open("w", encoding="utf-8-sig", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(KEYS)
        for row in _rows(account):
            writer.writerow([_text(row.get(key)) for key in KEYS])
            stats.rows += 1
    return stats


def _write_xlsx(account, path: Path, stats: ExportStats) -> None:
    """XlsxWriter in constant-memory mode: each row is written out as it comes (rows in order, which is
    how this writes them). Strings are never read as formulas or links (`strings_to_*`: off), and
    formula-like text is made inert besides, as in the CSV."""
    import xlsxwriter

    workbook = xlsxwriter.Workbook(str(path), {"constant_memory": True, "strings_to_formulas": False,
                                               "strings_to_urls": False, "strings_to_numbers": False})
    try:
        sheet = workbook.add_worksheet("History")
        day = workbook.add_format({"num_format": "yyyy-mm-dd"})
        sheet.write_row(0, 0, KEYS)
        for number, row in enumerate(_rows(account), start=1):
            for column, key in enumerate(KEYS):
                value = row.get(key)
                if value is None or value == "":
                    continue
                if isinstance(value, dt.date):
                    sheet.write_datetime(number, column, dt.datetime.combine(value, dt.time()), day)
                elif isinstance(value, Decimal | int):
                    sheet.write_number(number, column, float(value))
                else:
                    sheet.write_string(number, column, inert(str(value)))
            stats.rows += 1
    finally:
        workbook.close()
