"""Rent rolls and T-12s as brokers receive them, generated: a Yardi rent roll export (report title rows,
a two-row header, sections including "Future Residents/Applicants", VACANT residents, totals and the
summary groups below), RealPage OneSite (statuses such as Occupied-NTV and Vacant-Leased), AppFolio (a CSV
with money as text, property group rows, Windows-1252 names), a hand-made sheet; and T-12s: Yardi's 12 Month
Statement (account codes, sections, subtotals, NOI, capital lines after it), AppFolio's Twelve Month Cash
Flow (CSV), RealPage (months as dates), a hand-made one (month names, no totals). Each returns the file's
bytes and the figures it must give. The bench (bench/rent_roll.py) uses `yardi_rent_roll` too."""

from __future__ import annotations

import csv
import datetime as dt
import io
from decimal import Decimal

from openpyxl import Workbook


def _xlsx(rows: list[list], merges: tuple[str, ...] = ()) -> bytes:
    workbook = Workbook()
    sheet = workbook.active
    for row in rows:
        sheet.append(row)
    for merge in merges:
        sheet.merge_cells(merge)
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def _csv(rows: list[list], encoding: str = "utf-8-sig") -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return out.getvalue().encode(encoding)


def unit_plan(count: int) -> list[tuple[str, bool, Decimal, Decimal]]:
    """(unit, occupied, actual rent, market rent) for `count` units: every 13th vacant."""
    plan = []
    for n in range(count):
        unit = f"{(n // 40) + 1}{n % 40 + 1:02d}"
        occupied = n % 13 != 5
        market = Decimal(1200 + (n % 7) * 75)
        plan.append((unit, occupied, market - 25 if occupied else Decimal(0), market))
    return plan


def expected(plan) -> dict[str, str]:
    occupied = [p for p in plan if p[1]]
    rent = sum((p[2] for p in occupied), Decimal(0))
    return {"units": str(len(plan)), "occupied_units": str(len(occupied)),
            "vacant_units": str(len(plan) - len(occupied)),
            "occupancy": str((Decimal(len(occupied)) * 100 / len(plan)).quantize(Decimal("0.01"))),
            "monthly_in_place_rent": str(rent.quantize(Decimal("0.01"))),
            "annual_in_place_rent": str((rent * 12).quantize(Decimal("0.01"))),
            "average_rent": str((rent / len(occupied)).quantize(Decimal("0.01")))}


# --- rent rolls -----------------------------------------------------------------------------------------
def yardi_rent_roll(units: int = 24) -> tuple[bytes, dict[str, str]]:
    plan = unit_plan(units)
    rows: list[list] = [
        ["Rent Roll"], ["Harbor View Apartments (hv01)"], ["As Of = 11/30/2026"], ["Month Year = 11/2026"], [],
        ["Unit", "Unit Type", "Unit", "Resident", "Name", "Market", "Actual", "Resident", "Other", "Move In",
         "Lease", "Move Out", "Balance"],
        [None, None, "Sq Ft", None, None, "Rent", "Rent", "Deposit", "Deposit", None, "Expiration", None, None],
        ["Current/Notice/Vacant Residents"],
    ]
    for n, (unit, occupied, rent, market) in enumerate(plan):
        if occupied:
            rows.append([unit, "2x1", 950, f"t{n:07d}", f"Resident {n}", float(market), float(rent), 500.0, 0.0,
                         dt.datetime(2025, 3, 1), dt.datetime(2027, 2, 28), None, 0.0])
            if n % 11 == 0:  # a charge detail line under the unit (Yardi's "other charges")
                rows.append([None, None, None, None, None, None, None, None, None, None, None, None, 35.0])
        else:
            rows.append([unit, "1x1", 700, "VACANT", "VACANT", float(market), 0.0, 0.0, 0.0, None, None, None, 0.0])
    rows += [
        ["Future Residents/Applicants"],
        [plan[5][0], "1x1", 700, "t9999999", "Pat Applicant", float(plan[5][3]), 1275.0, 0, 0,
         dt.datetime(2026, 12, 15), dt.datetime(2027, 12, 14), None, 0],
        ["Total", None, 950 * units, None, None, float(sum(p[3] for p in plan)), float(sum(p[2] for p in plan))],
        [],
        ["Summary Groups", None, "Square Footage", None, None, "Market Rent", "% Unit Occupancy"],
        ["Current/Notice/Vacant Residents", None, 950 * units, None, None, float(sum(p[3] for p in plan)), 92.3],
        ["Occupied Units", None, None, None, None, None, 92.3],
    ]
    return _xlsx(rows, merges=("A1:M1", "A2:M2", "A8:M8")), expected(plan)


def realpage_rent_roll() -> tuple[bytes, dict[str, str]]:
    rows: list[list] = [
        ["Hillcrest Commons"], ["Rent Roll with Lease Charges"], ["As of 11/30/2026"], ["OneSite Rents v3.0"], [],
        ["Bldg/Unit", "Floorplan", "Unit Designation", "SQFT", "Unit/Lease Status", "Name", "Move-In", "Move-Out",
         "Lease Start", "Lease End", "Market + Addl.", "Lease Rent", "Dep On Hand", "Balance"],
    ]
    units = [("01-101", "Occupied", "Ann Park", 1395, 1350), ("01-102", "Occupied-NTV", "Bo Chen", 1395, 1325),
             ("01-103", "Vacant", "VACANT", 1395, 0), ("01-104", "Vacant-Leased", "Cy Dunn", 1450, 0),
             ("02-201", "Occupied", "Di Ebert", 1550, 1500), ("02-202", "Model", "", 1550, 0),
             ("02-203", "Occupied", "Ed Fox", 1550, 1475), ("02-204", "Down", "", 1550, 0)]
    for unit, status, name, market, rent in units:
        rows.append([unit, "A1", "", 780, status, name, None, None, None, None, market, rent or None, 300, 0])
    rows += [["Total", None, None, 6240, None, None, None, None, None, None, 11835, 5650]]
    # Four of eight occupied, 5,650 a month.
    return _xlsx(rows), {"units": "8", "occupied_units": "4", "vacant_units": "4", "occupancy": "50.00",
                         "monthly_in_place_rent": "5650.00", "annual_in_place_rent": "67800.00",
                         "average_rent": "1412.50", "monthly_market_rent": "11835.00"}


def appfolio_rent_roll(encoding: str = "cp1252") -> tuple[bytes, dict[str, str]]:
    rows: list[list] = [
        ["Rent Roll"], ["Properties: Maple Court - 55 Maple St Springfield, IL 62701"], ["As of: 11/30/2026"], [],
        ["Unit", "BD/BA", "Tenant", "Status", "Sqft", "Market Rent", "Rent", "Deposit", "Lease From", "Lease To",
         "Move-in", "Move-out", "Past Due", "NSF Count", "Late Count"],
        ["-> Maple Court - 55 Maple St Springfield, IL 62701"],
        ["1A", "2/1.00", "José Núñez", "Current", "850", "1,450.00", "1,425.00", "1,425.00", "03/01/2025",
         "02/28/2027", "03/01/2025", "", "0.00", "0", "0"],
        ["1B", "2/1.00", "", "Vacant-Unrented", "850", "1,450.00", "", "", "", "", "", "", "", "", ""],
        ["2A", "3/2.00", "Renée Ávila", "Notice-Unrented", "1,100", "1,850.00", "1,800.00", "1,800.00",
         "06/01/2024", "05/31/2026", "06/01/2024", "12/31/2026", "125.00", "1", "2"],
        ["2B", "3/2.00", "Kai Okafor", "Evict", "1,100", "1,850.00", "1,775.50", "0.00", "", "", "", "", "3,551.00",
         "0", "3"],
        ["3A", "1/1.00", "", "Vacant-Rented", "600", "1,100.00", "", "", "", "", "", "", "", "", ""],
        ["Total", "", "", "", "4,500", "7,700.00", "5,000.50", "", "", "", "", "", "3,676.00", "", ""],
    ]
    # Three occupied of five; 1,425 + 1,800 + 1,775.50 = 5,000.50.
    return _csv(rows, encoding), {"units": "5", "occupied_units": "3", "vacant_units": "2", "occupancy": "60.00",
                                  "monthly_in_place_rent": "5000.50", "annual_in_place_rent": "60006.00",
                                  "average_rent": "1666.83", "monthly_market_rent": "7700.00"}


def hand_made_rent_roll() -> tuple[bytes, dict[str, str]]:
    rows: list[list] = [
        ["Maple Court — rent roll, Nov 2026"], ["prepared by the owner"], [],
        ["Unit #", "Tenant", "Monthly Rent", "Lease End", "Notes"],
        [101, "A. Baker", "$1,234.50", "2027-01-31", None],
        [102, "Vacant", None, None, "turning"],
        [103, "C. Diaz", "$1,300", "2027-06-30", None],
        [],
        [104, "E. Evans", "12O0", "2027-03-31", "rent typo in the file"],
        [105, "F. Ford", None, "2027-04-30", None],
        [106, "G. Grant", 1150, "2027-05-31", None],
        [107, "H. Hill", "(50)", None, "credit"],
        [None, None, "$99.00", None, "late fees"],
        [101, "A. Baker", "$1,234.50", None, "pasted twice"],
        ["Totals", None, "$4,934.50", None, None],
    ]
    return _xlsx(rows, merges=("A1:E1",)), {
        "units": "7", "occupied_units": "6", "vacant_units": "1", "occupancy": "85.71",
        "monthly_in_place_rent": "3684.50", "annual_in_place_rent": "44214.00", "average_rent": "1228.17"}


# --- T-12s ----------------------------------------------------------------------------------------------
MONTHS = [dt.date(2025, 12, 1)] + [dt.date(2026, m, 1) for m in range(1, 12)]
INCOME_LINES = [("4010-0000", "Gross Potential Rent", 100_000), ("4020-0000", "Loss to Lease", -2_000),
                ("4030-0000", "Vacancy Loss", -6_000), ("4040-0000", "Concessions", -500)]
OTHER_INCOME = [("4410-0000", "Utility Reimbursement", 3_000), ("4420-0000", "Late Fees", 400),
                ("4430-0000", "Pet Rent", 600)]
EXPENSE_LINES = [("5010-0000", "Payroll", 12_000), ("5020-0000", "Repairs & Maintenance", 5_000),
                 ("5030-0000", "Utilities", 6_500), ("5040-0000", "Real Estate Taxes", 11_000),
                 ("5050-0000", "Insurance", 3_500), ("5060-0000", "Management Fee", 3_800)]
EGI = 12 * sum(v for *_, v in INCOME_LINES + OTHER_INCOME)  # 1,146,000
OPEX = 12 * sum(v for *_, v in EXPENSE_LINES)  # 501,600
T12_FIGURES = {"effective_gross_income": f"{EGI}.00", "operating_expenses": f"{OPEX}.00",
               "noi": f"{EGI - OPEX}.00", "months": "12"}


def yardi_t12() -> tuple[bytes, dict[str, str]]:
    month_names = [m.strftime("%b %Y") for m in MONTHS]
    rows: list[list] = [
        ["Harbor View Apartments (hv01)"], ["12 Month Statement"], ["Period = Dec 2025-Nov 2026"],
        ["Book = Accrual ; Tree = ysi_is"], [],
        [None, None, *month_names, "Total"],
        ["4000-0000", "INCOME"], ["4001-0000", "RENTAL INCOME"],
    ]
    def line(code, name, value):
        return [code, name, *[float(value)] * 12, float(value * 12)]

    rows += [line(*item) for item in INCOME_LINES]
    rows.append(["4099-0000", "TOTAL RENTAL INCOME", *[None] * 12, float(12 * sum(v for *_, v in INCOME_LINES))])
    rows.append(["4400-0000", "OTHER INCOME"])
    rows += [line(*item) for item in OTHER_INCOME]
    rows.append(["4499-0000", "TOTAL OTHER INCOME", *[None] * 12, float(12 * sum(v for *_, v in OTHER_INCOME))])
    rows.append(["4999-0000", "TOTAL INCOME", *[None] * 12, float(EGI)])
    rows.append([])
    rows.append(["5000-0000", "OPERATING EXPENSES"])
    rows += [line(*item) for item in EXPENSE_LINES]
    rows.append(["5999-0000", "TOTAL OPERATING EXPENSES", *[None] * 12, float(OPEX)])
    rows.append([])
    rows.append(["6000-0000", "NET OPERATING INCOME", *[None] * 12, float(EGI - OPEX)])
    rows.append(["7000-0000", "CAPITAL EXPENDITURES"])
    rows.append(line("7010-0000", "Roof Replacement", 9_000))
    rows.append(["9999-0000", "NET INCOME", *[None] * 12, float(EGI - OPEX - 108_000)])
    return _xlsx(rows, merges=("A1:O1", "A2:O2")), dict(T12_FIGURES)


def appfolio_t12() -> tuple[bytes, dict[str, str]]:
    month_names = [m.strftime("%b %Y") for m in MONTHS]
    rows: list[list] = [
        ["Twelve Month Cash Flow"], ["Properties: Maple Court - 55 Maple St Springfield, IL 62701"],
        ["Period Range: Dec 2025 to Nov 2026"], ["Accounting Basis: Cash"], [],
        ["Account Name", *month_names, "Total"],
        ["Operating Income & Expense"], ["Income"],
    ]
    def line(name, value):
        return [name, *[f"{value:,.2f}"] * 12, f"{value * 12:,.2f}"]

    rows += [line(name, value) for _, name, value in INCOME_LINES + OTHER_INCOME]
    rows.append(["Total Operating Income", *[""] * 12, f"{EGI:,.2f}"])
    rows.append(["Expense"])
    rows += [line(name, value) for _, name, value in EXPENSE_LINES]
    rows.append(["Total Operating Expense", *[""] * 12, f"{OPEX:,.2f}"])
    rows.append(["NOI - Net Operating Income", *[""] * 12, f"{EGI - OPEX:,.2f}"])
    rows.append(["Other Items"])
    rows.append(["Capital Expenditures", *["750.00"] * 12, "9,000.00"])
    return _csv(rows), dict(T12_FIGURES)


def realpage_t12() -> tuple[bytes, dict[str, str]]:
    rows: list[list] = [["Hillcrest Commons"], ["Trailing Twelve Months Income Statement"], [],
                        ["GL Account", "Description", *[dt.datetime(m.year, m.month, 1) for m in MONTHS], "Total"],
                        [None, "Revenue"]]
    rows += [[code, name, *[value] * 12, value * 12] for code, name, value in INCOME_LINES + OTHER_INCOME]
    rows += [[None, "Total Revenue", *[None] * 12, EGI], [None, "Expenses"]]
    rows += [[code, name, *[value] * 12, value * 12] for code, name, value in EXPENSE_LINES]
    rows += [[None, "Total Expenses", *[None] * 12, OPEX], [None, "Net Operating Income", *[None] * 12, EGI - OPEX]]
    return _xlsx(rows), dict(T12_FIGURES)


def hand_made_t12() -> tuple[bytes, dict[str, str]]:
    """Month names without years, no total column, no totals: the sums are the figures; money as text,
    "(500)" for a negative month; one cell that is not an amount."""
    names = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    rows: list[list] = [["2026 operating statement - Maple Court"], [], ["Line item", *names]]
    rows.append(["Rents collected", *["$9,000.00"] * 12])
    rows.append(["Concessions", "(500)", *["-"] * 11])
    rows.append(["Laundry", *["120"] * 11, "l20"])
    rows.append(["Expenses"])
    rows.append(["Taxes", *["1,000"] * 12])
    rows.append(["Insurance", *["$250"] * 12])
    # Income 108,000 - 500 + 1,320 (the "l20" is a problem, left out) = 108,820; expenses 15,000.
    return _csv(rows), {"effective_gross_income": "108820.00", "operating_expenses": "15000.00",
                        "noi": "93820.00", "months": "12"}


# --- a document of a deal, its file stored for real -----------------------------------------------------
def stored(deal, data: bytes, file_name: str, kind: str = "rent_roll", document=None):
    """A version (the next, or the first of a new document of `kind`) of `deal` holding `data`, written to
    the deal documents' storage as an upload would."""
    import hashlib

    from django.core.files.base import ContentFile

    from deals.documents.models import Document, DocumentVersion

    if document is None:
        document = Document.objects.create(account=deal.account, deal=deal, kind=kind, name=file_name)
    number = document.versions_count + 1
    version = DocumentVersion(document=document, number=number, file_name=file_name, size=len(data),
                              sha256=hashlib.sha256(data).hexdigest(), content_type="application/octet-stream")
    version.file.save(file_name, ContentFile(data), save=False)
    version.save()
    document.current, document.versions_count = version, number
    document.save(update_fields=["current", "versions_count", "updated_at"])
    return version
