"""Building history files for the tests: rows as dicts, written as CSV (any delimiter, encoding) or XLSX."""

from __future__ import annotations

import csv
import io
from io import StringIO
from pathlib import Path

from django.core.management import call_command
from django.core.management.base import CommandError

HEADER = ["deal_external_id", "deal_title", "loan_amount", "loan_type", "transaction_type", "business_plan",
          "close_date", "stage", "property_name", "state", "asset_type", "units", "square_feet", "noi", "value",
          "description", "deal_archived", "lender", "lender_id", "sent_on", "answered_on", "decided_on", "outcome",
          "decline_reason",
          "quote_amount", "fixed_rate", "rate_index", "spread_bps", "term_months", "amortization_months", "max_ltv",
          "min_dscr", "origination_fee", "exit_fee"]

DEAL_A = {"deal_external_id": "CRM-1", "deal_title": "Oak Street Apartments", "loan_amount": "$12.5M",
          "loan_type": "permanent", "transaction_type": "acquisition", "business_plan": "stabilized",
          "close_date": "2025-06-30", "property_name": "Oak Street", "state": "Texas", "asset_type": "multifamily",
          "units": "120", "noi": "1,050,000", "value": "$19M"}
DEAL_B = {"deal_external_id": "CRM-2", "deal_title": "Harbor Industrial", "loan_amount": "8,000,000",
          "loan_type": "light bridge", "transaction_type": "refinance", "state": "FL", "asset_type": "industrial",
          "square_feet": "250000"}


def rows_ab() -> list[dict[str, str]]:
    """Two deals, five placements: won (fixed quote), lost with a quote (floating), declined, no answer."""
    return [
        {**DEAL_A, "lender": "JP Morgan", "sent_on": "2025-01-10", "answered_on": "2025-01-20", "outcome": "won",
         "quote_amount": "$12M", "fixed_rate": "6.125%", "term_months": "120", "amortization_months": "360",
         "max_ltv": "65%", "min_dscr": "1.25", "origination_fee": "1%", "decided_on": "2025-02-15"},
        {**DEAL_A, "lender": "Wells Fargo", "sent_on": "45667", "answered_on": "2025-01-25", "outcome": "lost",
         "quote_amount": "11,500,000", "rate_index": "SOFR", "spread_bps": "275", "term_months": "36",
         "decided_on": "2025-02-15"},
        {**DEAL_A, "lender": "Arbor Realty", "sent_on": "2025-01-10", "answered_on": "2025-01-12",
         "outcome": "Declined", "decline_reason": "Outside our box"},
        {**DEAL_B, "lender": "Wells Fargo Bank", "sent_on": "2025-03-01", "outcome": "no answer"},
        {**DEAL_B, "lender": "Arbor Realty Trust", "sent_on": "2025-03-01", "answered_on": "2025-03-09",
         "outcome": "quoted", "quote_amount": "7.5M", "fixed_rate": "7.25", "term_months": "60"},
    ]


def write_csv(path: Path, rows: list[dict[str, str]], *, header: list[str] | None = None, delimiter: str = ",",
              encoding: str = "utf-8") -> Path:
    header = header or HEADER
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([row.get(name, "") for name in header])
    path.write_bytes(buffer.getvalue().encode(encoding))
    return path


def write_xlsx(path: Path, rows: list[list], header: list[str] | None = None) -> Path:
    from openpyxl import Workbook

    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet("History")
    sheet.append(header or HEADER)
    for row in rows:
        sheet.append(row)
    workbook.save(path)
    return path


def run_import(path: Path, account, *args: str) -> str:
    out = StringIO()
    call_command("import_history", str(path), "--account", account.slug, *args, stdout=out, stderr=out)
    return out.getvalue()


def refused(path: Path, account, *args: str) -> str:
    """The CommandError's message and what the command wrote to stderr before it."""
    out = StringIO()
    try:
        call_command("import_history", str(path), "--account", account.slug, *args, stdout=out, stderr=out)
    except CommandError as exc:
        return out.getvalue() + "\n" + str(exc)
    raise AssertionError("the import was not refused:\n" + out.getvalue())


def counts(account) -> tuple[int, int, int]:
    from deals.models import Deal, Placement, TermSheet

    return (Deal.objects.filter(account=account).count(), Placement.objects.filter(deal__account=account).count(),
            TermSheet.objects.filter(deal__account=account).count())


__all__ = ["StringIO"]
