"""A spreadsheet's cells as rows of values, read safely from bytes: XLSX or CSV, nothing else.

The file is hostile until read (CONVENTIONS 21): its size is bounded before it is parsed; its kind comes
from its bytes (a ZIP is an XLSX workbook or refused; an old .xls, a PDF or other binary is "not a
spreadsheet"); an XLSX's members' declared sizes are checked before anything is inflated (total and
ratio: a zip bomb is refused unopened, and zipfile never inflates a member past its declared size);
openpyxl parses the XML through defusedxml (installed: entities and DTDs are refused, so an XML bomb is
refused); only `FIGURES_COLUMNS_MAX` columns and `FIGURES_ROWS_MAX` rows are read, whatever range the
file claims. A CSV is read as UTF-8 (with or without BOM), UTF-16 (with its BOM) or Windows-1252
(Excel's), its delimiter the one of `,` `;` tab `|` its first lines use most.

Merged cells need nothing: a merged range's value is in its first cell, the others read as empty, which
is what a title or section row looks like anyway. No meaning here (rent_roll and t12 read the rows).
"""

from __future__ import annotations

import csv
import io
import zipfile
import zlib
from dataclasses import dataclass
from typing import Any
from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException

from lev import limits, workbooks
from lev.workbooks import workbook_refusal

DELIMITERS = (",", ";", "\t", "|")
# Blank rows cost little but are not free: a sheet claiming a cell at row 1,048,576 stops here.
LINES_MAX = 4 * limits.FIGURES_ROWS_MAX


class FileUnreadable(Exception):
    """The file as a whole cannot be read (not a spreadsheet, too big, a bomb): one sentence for the
    person, no internals."""


@dataclass
class Grid:
    kind: str  # "xlsx" or "csv"
    rows: list[tuple[int, list[Any]]]  # (row number as the spreadsheet shows it, values); blank rows left out
    encoding: str = ""


def read_grid(data: bytes, file_name: str = "") -> Grid:
    """The rows of the workbook's first sheet, or of the CSV, in `data`. Raises FileUnreadable."""
    if len(data) > limits.FIGURES_FILE_MAX_BYTES:
        raise FileUnreadable(f"the file is {len(data) / 2**20:.0f} MB; figures are read from files of at most "
                             f"{limits.FIGURES_FILE_MAX_BYTES // 2**20} MB")
    if not data.strip():
        raise FileUnreadable("the file is empty")
    try:
        kind = workbooks.spreadsheet_kind(data[:workbooks.HEAD_BYTES])
    except workbooks.NotASpreadsheet as exc:
        raise FileUnreadable(str(exc)) from None
    if kind == workbooks.XLSX:
        return _xlsx(data)
    if kind == workbooks.CSV_UTF16:
        return _csv(data.decode("utf-16", errors="strict"), "UTF-16")
    try:
        return _csv(data.decode("utf-8-sig"), "UTF-8")
    except UnicodeDecodeError:
        pass
    try:
        return _csv(data.decode("cp1252"), "Windows-1252")
    except UnicodeDecodeError:
        raise FileUnreadable("the file's text is neither UTF-8 nor Windows-1252 (Excel): save it as "
                             "\"CSV UTF-8\" or as .xlsx") from None


# --- CSV ----------------------------------------------------------------------------------------------
def _delimiter(text: str) -> str:
    lines = [line for line in text[:20000].splitlines()[:30] if line.strip()]
    counts = {d: sum(line.count(d) for line in lines) for d in DELIMITERS}
    best = max(DELIMITERS, key=lambda d: counts[d])
    return best if counts[best] else ","


def _csv(text: str, encoding: str) -> Grid:
    if "\x00" in text:
        raise FileUnreadable("the file is not a spreadsheet (binary content)")
    rows: list[tuple[int, list[Any]]] = []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text))
    try:
        for values in reader:
            line = reader.line_num
            if not any(v.strip() for v in values):
                continue
            _check_row(line, len(rows))
            rows.append((line, [_cell(v, line) for v in values[:limits.FIGURES_COLUMNS_MAX]]))
    except csv.Error:
        raise FileUnreadable(f"line {reader.line_num}: the CSV cannot be read (an unclosed quote, or a cell "
                             "far too long)") from None
    return Grid("csv", rows, encoding)


def _check_row(line: int, count: int) -> None:
    if count >= limits.FIGURES_ROWS_MAX:
        raise FileUnreadable(f"row {line}: more than {limits.FIGURES_ROWS_MAX:,} rows; figures are read from "
                             "one property's rent roll or T-12")


def _cell(value: Any, line: int) -> Any:
    if isinstance(value, str) and len(value) > limits.FIGURES_CELL_MAX_CHARS:
        raise FileUnreadable(f"row {line}: a cell is longer than {limits.FIGURES_CELL_MAX_CHARS:,} characters")
    return value


# --- XLSX ---------------------------------------------------------------------------------------------
# What a damaged or hostile workbook makes openpyxl or zipfile raise: each is "not a readable workbook".
_BROKEN_WORKBOOK = (DefusedXmlException, ParseError, zipfile.BadZipFile, zlib.error, KeyError, ValueError,
                    TypeError, IndexError, AttributeError, EOFError, OSError, UnicodeError,
                    NotImplementedError)


def check_zip(data: bytes) -> None:
    """Refuse a ZIP that is not a workbook, or that would unpack past the bounds, from its directory alone."""
    refusal = workbook_refusal(io.BytesIO(data), unpacked_max=limits.FIGURES_XLSX_UNCOMPRESSED_MAX_BYTES,
                               ratio_max=limits.FIGURES_XLSX_RATIO_MAX)
    if refusal:
        raise FileUnreadable(refusal)


def _xlsx(data: bytes) -> Grid:
    from openpyxl import load_workbook  # only when a workbook is read (the import's cost)

    check_zip(data)
    rows: list[tuple[int, list[Any]]] = []
    try:
        workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        try:
            sheet = workbook.worksheets[0]
            # The rows actually present, not the range the file claims (which may say a million of each).
            sheet.reset_dimensions()
            # The read-only reader yields the rows in order, an empty one for each row the file skips.
            for line, values in enumerate(sheet.iter_rows(max_col=limits.FIGURES_COLUMNS_MAX, values_only=True),
                                          start=1):
                if line > LINES_MAX:
                    raise FileUnreadable(f"the sheet goes on past row {LINES_MAX:,}; figures are read from one "
                                         "property's rent roll or T-12")
                if not any(v is not None and (not isinstance(v, str) or v.strip()) for v in values):
                    continue
                _check_row(line, len(rows))
                rows.append((line, [_cell(v, line) for v in values]))
        finally:
            workbook.close()
    except FileUnreadable:
        raise
    except _BROKEN_WORKBOOK as exc:
        raise FileUnreadable(_workbook_problem(exc)) from None
    return Grid("xlsx", rows)


def _workbook_problem(exc: BaseException) -> str:
    seen = 0
    cause: BaseException | None = exc
    while cause is not None and seen < 5:  # openpyxl wraps what the parser raised in a ValueError
        if isinstance(cause, DefusedXmlException):
            return "the workbook's XML declares entities or a DTD (an XML bomb?); refused"
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return "the file is not a readable XLSX workbook (damaged, or not made by a spreadsheet program)"
