"""A T-12's figures (a trailing twelve months' operating statement): effective gross income, total
operating expenses and NOI over the twelve months.

The header is the first row (within `FIGURES_HEADER_ROWS`) naming at least six months (dates, "Jan 2025",
"Jan-25", "January", "01/2025", "Period 1", "Month 1"), and maybe a total column ("Total", "T-12", "YTD",
"Annual"). The line's name is the text column left of the months holding words (an account code column
beside it is passed over). Each line's amount is its total column when the file has one and the cell
holds an amount, else the sum of its months.

Sections come from label rows without amounts: "Income"/"Revenue" and "Expenses"; lines before any
section are income. Subtotals ("Total Rental Income") are not added again. The figures:

* EGI: the line named "Effective Gross Income", "Total Income", "Total Revenue", "Total Operating Income"
  (and alike) when present, else the sum of the income lines;
* operating expenses: "Total Operating Expenses" / "Total Expenses" when present, else the sum of the
  expense lines;
* NOI: "Net Operating Income" / "NOI" when present, else EGI less expenses. Lines after it (capital
  expenditures, debt service, net income) are not operating and are not read.

Where a named total differs from the sum of its lines by more than a dollar, the file's total is used and
the difference is a problem on its row; a cell that is not an amount is a problem on its row.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from deals.documents.figures.cells import NotAnAmount, amount, money, shown, text, words
from deals.documents.figures.grid import Grid
from deals.documents.figures.rent_roll import Reading
from lev import limits

MONTHS_MIN = 6
_MONTH = re.compile(
    r"^(?:(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?(?:[\s\-/']*\d{2,4})?"
    r"|\d{1,2}[/-]\d{2,4}|\d{4}[/-]\d{1,2}(?:[/-]\d{1,2})?|(?:period|month|p)\s*\d{1,2}"
    r"|(?:\d{4}\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*)$")
_TOTAL_COLUMN = {"total", "totals", "t12", "t 12", "ttm", "ytd", "annual", "12 month total", "trailing 12",
                 "total t12", "year total", "12 months", "twelve month total", "total ttm", "t12 total"}
EGI_NAMES = {"effective gross income", "egi", "total income", "total revenue", "total revenues",
             "total operating income", "total operating revenue", "total operating revenues", "gross operating income",
             "total property income", "total rental income and other income", "net rental income and other income",
             "total effective gross income", "effective gross revenue"}
OPEX_NAMES = {"total operating expenses", "total expenses", "total operating expense", "total opex",
              "operating expenses total", "total property expenses", "total operating expenditures"}
NOI_NAMES = {"net operating income", "noi", "net operating income noi", "net operating income loss",
             "net operating income/loss", "net operating income/ loss"}
LOOKED_FOR = ("a row of at least six month columns (dates, Jan 2025, Jan-25, January, 01/2025, Period 1) with "
              "the account names left of them")
_INCOME = re.compile(r"\b(income|revenues?|rents?|rental)\b")
_EXPENSE = re.compile(r"\b(expenses?|expenditures?)\b")
_NOT_OPERATING = re.compile(r"\b(non operating|nonoperating|capital|capex|below the line|debt service|"
                            r"replacement|reserves?|partnership|depreciation|amortization|interest expense)\b")


@dataclass
class Header:
    row_index: int
    months: list[int]
    total: int | None
    label: int  # the line name's column
    code: int | None  # an account code column, used when the name is empty


def _is_month(value: Any) -> bool:
    if isinstance(value, dt.date | dt.datetime):
        return True
    label = words(value)
    return bool(label) and bool(_MONTH.match(label)) and not label.isdigit()


def find_header(grid: Grid) -> Header | None:
    for index, (_, values) in enumerate(grid.rows[:limits.FIGURES_HEADER_ROWS]):
        months = [i for i, v in enumerate(values) if _is_month(v)]
        if len(months) < MONTHS_MIN:
            continue
        total = next((i for i, v in enumerate(values) if i > months[0] and words(v) in _TOTAL_COLUMN), None)
        left = list(range(months[0]))
        if not left:
            continue
        label, code = _label_columns(grid, index, left)
        return Header(index, months, total, label, code)
    return None


def _label_columns(grid: Grid, header_index: int, left: list[int]) -> tuple[int, int | None]:
    """The column of the lines' names (most cells with letters) and of their codes (digits, if any)."""
    lettered = dict.fromkeys(left, 0)
    coded = dict.fromkeys(left, 0)
    for _, values in grid.rows[header_index + 1:header_index + 200]:
        for i in left:
            cell = text(values[i]) if i < len(values) else ""
            if re.search(r"[A-Za-z]{3}", cell):
                lettered[i] += 1
            elif re.search(r"\d", cell):
                coded[i] += 1
    label = max(left, key=lambda i: (lettered[i], i))
    codes = [i for i in left if i != label and coded[i]]
    return label, (codes[0] if codes else None)


def layout_of(titles: list[str], header_labels: list[str]) -> str:
    title = " ".join(titles)
    if "12 month statement" in title or "yardi" in title:
        return "yardi"
    if "trailing twelve" in title or "realpage" in title or "gl account" in header_labels:
        return "realpage"
    if "twelve month" in title or "appfolio" in title:
        return "appfolio"
    return "generic"


@dataclass
class _Named:
    row: int
    value: Decimal
    label: str


def read_t12(grid: Grid, header: Header) -> dict[str, Any]:
    reading = Reading()
    header_values = grid.rows[header.row_index][1]
    titles = [words(" ".join(text(v) for v in values)) for _, values in grid.rows[:header.row_index]]
    if len(header.months) != 12:
        reading.problem(None, f"The statement has {len(header.months)} month columns, not 12; the figures are over "
                              "those months.")
    section = "income"
    sums = {"income": Decimal(0), "expense": Decimal(0)}
    lines = {"income": 0, "expense": 0}
    egi: _Named | None = None
    opex: _Named | None = None
    noi: _Named | None = None
    rows_read = 0
    for line, values in grid.rows[header.row_index + 1:]:
        rows_read += 1
        label = text(values[header.label]) if header.label < len(values) else ""
        if not label and header.code is not None and header.code < len(values):
            label = text(values[header.code])
        name = words(label)
        cells = [(i, values[i] if i < len(values) else None) for i in header.months]
        total_cell = values[header.total] if header.total is not None and header.total < len(values) else None
        value, bad = _line_value(cells, total_cell, header_values)
        for column, cell in bad:
            reading.problem(line, f"{shown(column)} of '{shown(label) or 'a line'}' is '{shown(cell)}', not an "
                                  "amount; the line is read without it")
        if value is None and not bad:  # a label row: a section, a heading, or nothing
            if _NOT_OPERATING.search(name):
                section = "other"
            elif _EXPENSE.search(name) and _INCOME.search(name):  # "Operating Income & Expense": both follow
                pass
            elif _EXPENSE.search(name):
                section = "expense"
            elif _INCOME.search(name) and section != "expense" and not name.startswith("net"):
                section = "income"
            continue
        if value is None:
            continue
        if name in NOI_NAMES or "net operating income" in name:
            noi = _Named(line, value, label)
            break
        if name in EGI_NAMES:
            egi = _Named(line, value, label)
            section = "expense"  # what follows the income's grand total is expenses
            continue
        if name in OPEX_NAMES:
            opex = _Named(line, value, label)
            continue
        if name.startswith(("total", "subtotal", "sub total")) or not label:
            if not label:
                reading.problem(line, "amounts without a line name; not counted")
            continue
        if _NOT_OPERATING.search(name):
            continue
        if section in sums:
            sums[section] += value
            lines[section] += 1
    nothing = not any(lines.values()) and egi is None and opex is None and noi is None
    if nothing:
        reading.problem(None, "No income or expense lines were found below the header "
                              f"(row {grid.rows[header.row_index][0]}).")
    egi_value = _checked(reading, egi, sums["income"], lines["income"], "the income lines")
    opex_value = _checked(reading, opex, sums["expense"], lines["expense"], "the expense lines")
    computed_noi = egi_value - opex_value
    if noi is not None:
        if abs(noi.value - computed_noi) > 1 and (lines["income"] or egi) and (lines["expense"] or opex):
            reading.problem(noi.row, f"{shown(noi.label)} {money(noi.value)} differs from income less expenses "
                                     f"{money(computed_noi)}; the file's NOI is used")
        noi_value = noi.value
    else:
        noi_value = computed_noi
    if reading.more_problems:
        reading.problems.append({"row": None, "message": f"…and {reading.more_problems} more problems."})
    figures = {} if nothing else {  # nothing to apply: the problem says why
        "effective_gross_income": money(egi_value), "operating_expenses": money(opex_value), "noi": money(noi_value),
        "months": str(len(header.months))}
    return {"kind": "t12", "layout": layout_of(titles, [words(v) for v in header_values]), "figures": figures,
            "problems": reading.problems, "rows_read": rows_read}


def _line_value(cells: list[tuple[int, Any]], total_cell: Any, header_values: list[Any]) -> tuple[
        Decimal | None, list[tuple[str, Any]]]:
    """The line's amount (its total cell, else the sum of its months; None when it has none) and the cells
    that are not amounts, named by their column's header."""
    bad: list[tuple[str, Any]] = []
    try:
        total = amount(total_cell)
    except NotAnAmount:
        bad.append(("the total", total_cell))
        total = None
    found, months = False, Decimal(0)
    for index, cell in cells:
        try:
            value = amount(cell)
        except NotAnAmount:
            column = header_values[index]
            bad.append((text(column) if not isinstance(column, dt.date) else column.strftime("%b %Y"), cell))
            continue
        if value is not None:
            found, months = True, months + value
    if total is not None:
        return total, bad
    return (months if found else None), bad


def _checked(reading: Reading, named: _Named | None, total: Decimal, count: int, what: str) -> Decimal:
    if named is None:
        return total
    if count and abs(named.value - total) > 1:
        reading.problem(named.row, f"{shown(named.label)} {money(named.value)} differs from the sum of {what} "
                                   f"{money(total)}; the file's total is used")
    return named.value

