"""Reading a table file (CSV or XLSX) safely: a header and its rows, streamed, every refusal one
`TableError` naming the line and the column. No database; no knowledge of what the columns mean
(`deals.history.columns` reads them).

The file is hostile until read (docs/import-export.md, "Safety"):

* its size is bounded before a byte is parsed (`HISTORY_FILE_MAX_BYTES`);
* its kind comes from its bytes, not its name: a ZIP is an XLSX workbook or refused, an old .xls, a PDF
  or any other binary content is "not a spreadsheet";
* CSV: the encoding is settled by a first streaming pass (UTF-8 with or without BOM, UTF-16 with its
  BOM, else Excel's Windows-1252; bytes neither reads are refused naming their line); the delimiter is
  the one of `,` `;` tab `|` the header uses most; a physical line is read with a bound, so a file with
  no line breaks never becomes one huge string;
* XLSX: the members' declared sizes are checked before anything is inflated (total and ratio: a zip
  bomb is refused, and Python's zipfile never inflates a member past its declared size); openpyxl parses
  the XML through defusedxml (no entity expansion: an XML bomb is refused); only the header's columns
  are read (`max_col`), so a used range claiming a million columns costs nothing; the read-only reader
  streams the rows;
* every cell over `HISTORY_CELL_MAX_CHARS` characters, a header over `HISTORY_COLUMNS_MAX` columns and
  a file over `HISTORY_ROWS_MAX` rows are refused naming where.

Memory does not grow with the file: rows are yielded one at a time (an XLSX's shared strings table is
the one thing openpyxl holds whole, bounded by the uncompressed size check).
"""

from __future__ import annotations

import codecs
import csv
import datetime as dt
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException

from lev import limits, workbooks
from lev.errors import ValidationFailed
from lev.workbooks import workbook_refusal

CHUNK_BYTES = 1 << 20
DELIMITERS = (",", ";", "\t", "|")
# A physical CSV line may hold every column at the cell bound; past that it cannot be a valid row.
LINE_MAX_CHARS = limits.HISTORY_CELL_MAX_CHARS * limits.HISTORY_COLUMNS_MAX
ENCODING_NAMES = {"utf-8-sig": "UTF-8", "utf-16": "UTF-16", "cp1252": "Windows-1252 (Excel)"}


class TableError(Exception):
    """A refusal of the file: what is wrong, with the line (1 = the header) and the column where known."""

    def __init__(self, message: str, *, line: int | None = None, column: str | None = None) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column

    @property
    def app_error(self):
        """Its place in the error contract (deals.history.errors): a VALIDATION_ERROR on the file."""
        return ValidationFailed({"file": [str(self)]})

    def __str__(self) -> str:
        where = []
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.column:
            where.append(f"column {self.column}")
        return (", ".join(where) + ": " if where else "") + self.message


@dataclass
class Table:
    """A file's header (as written) and its rows: (line, values), one value per header column; a value
    is a str (CSV), or what the XLSX cell holds (str, int, float, bool, datetime, None)."""

    kind: str  # "csv" or "xlsx"
    encoding: str  # how a CSV was read ("UTF-8", ...), "" for XLSX
    header: list[str]
    rows: Iterator[tuple[int, list[Any]]]


def _too_long(line: int, column: str) -> TableError:
    return TableError(f"a cell is longer than {limits.HISTORY_CELL_MAX_CHARS:,} characters", line=line,
                      column=column)


def _column_name(header: list[str], index: int) -> str:
    return header[index] if 0 <= index < len(header) and header[index] else f"#{index + 1}"


def read_table(path: Path) -> Table:
    """The table in `path` (see the module docstring). The rows are read as they are iterated; iterate
    them once. Raises TableError for anything but a readable CSV or XLSX file."""
    try:
        size = path.stat().st_size
        with path.open("rb") as file:
            head = file.read(workbooks.HEAD_BYTES)
    except OSError as exc:
        raise TableError(f"cannot read the file ({exc.strerror or exc})") from None
    if size > limits.HISTORY_FILE_MAX_BYTES:
        raise TableError(f"the file is {size / 2**20:.0f} MB; at most "
                         f"{limits.HISTORY_FILE_MAX_BYTES // 2**20} MB is read (split it, or export fewer years)")
    if not head.strip():
        raise TableError("the file is empty")
    try:
        kind = workbooks.spreadsheet_kind(head)
    except workbooks.NotASpreadsheet as exc:
        raise TableError(str(exc)) from None
    if kind == workbooks.XLSX:
        return _xlsx(path)
    return _csv(path, "utf-16" if kind == workbooks.CSV_UTF16 else _csv_encoding(path))


def read_sheet(path: Path, name: str) -> Table | None:
    """The sheet `name` of the XLSX workbook at `path`, read as its first sheet is (`read_table`); None
    when the file is not a workbook or has no such sheet."""
    with path.open("rb") as file:
        if not workbooks.is_xlsx(file.read(4)):
            return None
    return _xlsx(path, name)


# --- CSV ----------------------------------------------------------------------------------------------
def _csv_encoding(path: Path) -> str:
    """UTF-8 (BOM or not) when the whole file decodes as UTF-8, else Windows-1252 when it decodes as
    that; else TableError naming the line of the first byte UTF-8 refused. One streaming pass."""
    line = 1
    decoder = codecs.getincrementaldecoder("utf-8")()
    with path.open("rb") as file:
        while chunk := file.read(CHUNK_BYTES):
            if b"\x00" in chunk:
                raise TableError("the file is not a spreadsheet (binary content)", line=line + chunk[
                    :chunk.index(b"\x00")].count(b"\n"))
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                bad_line = line + chunk[:exc.start].count(b"\n")
                break
            line += chunk.count(b"\n")
        else:
            try:
                decoder.decode(b"", final=True)
                return "utf-8-sig"
            except UnicodeDecodeError:
                bad_line = line
    with path.open("rb") as file:
        decoder = codecs.getincrementaldecoder("cp1252")()
        line = 1
        while chunk := file.read(CHUNK_BYTES):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError:
                raise TableError("the file is neither UTF-8 nor Windows-1252 (Excel) text: save it as "
                                 "\"CSV UTF-8\"", line=bad_line) from None
            line += chunk.count(b"\n")
    return "cp1252"


def _delimiter(first_line: str) -> str:
    counts = {d: first_line.count(d) for d in DELIMITERS}
    best = max(DELIMITERS, key=lambda d: counts[d])
    return best if counts[best] else ","


def _bounded_lines(text, delimiter_holder: list[str], header: list[str], position: list[int]) -> Iterator[str]:
    """The file's physical lines, each read with a bound: a line longer than any valid row is refused
    naming its line and the column holding the long cell. `position[0]`: the physical line last read."""
    while True:
        line = text.readline(LINE_MAX_CHARS + 1)
        if not line:
            return
        position[0] += 1
        position[1] = line
        if len(line) > LINE_MAX_CHARS and not line.endswith(("\n", "\r")):
            raise _long_cell_in(line, delimiter_holder[0], header, position[0])
        yield line


def _long_cell_in(text: str, delimiter: str, header: list[str], line: int) -> TableError:
    """The long cell of a line csv could not read: its column by the delimiters before it, outside quotes."""
    index, start, quoted = 0, 0, False
    for at, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif char == delimiter and not quoted:
            if at - start > limits.HISTORY_CELL_MAX_CHARS:
                break
            index, start = index + 1, at + 1
    else:
        if len(text) - start <= limits.HISTORY_CELL_MAX_CHARS:
            return TableError(f"a cell is longer than {limits.HISTORY_CELL_MAX_CHARS:,} characters", line=line)
    return _too_long(line, _column_name(header, index))


def _csv(path: Path, encoding: str) -> Table:
    file = path.open("r", encoding=encoding, newline="")
    try:
        first = file.readline(LINE_MAX_CHARS + 1)
    except UnicodeDecodeError:
        file.close()
        raise TableError("the file's text cannot be read as " + ENCODING_NAMES[encoding], line=1) from None
    file.seek(0)
    delimiter = [_delimiter(first)]
    header: list[str] = []
    position: list[Any] = [0, ""]  # the physical line last read, and its text

    def rows() -> Iterator[tuple[int, list[Any]]]:
        with file:
            reader = csv.reader(_bounded_lines(file, delimiter, header, position), delimiter=delimiter[0])
            count = 0
            while True:
                start = position[0] + 1
                try:
                    values = next(reader)
                except StopIteration:
                    return
                except csv.Error:
                    # csv's own field bound (131,072 characters) or a malformed quote: say where.
                    raise _long_cell_in(position[1], delimiter[0], header, start) from None
                except UnicodeDecodeError:
                    raise TableError("the text cannot be read as " + ENCODING_NAMES[encoding],
                                     line=position[0] + 1) from None
                if start == 1:
                    header.extend(v.strip() for v in values)
                    _check_header_size(header)
                    yield 1, list(header)
                    continue
                if not any(v.strip() for v in values):
                    continue
                count += 1
                if count > limits.HISTORY_ROWS_MAX:
                    raise TableError(f"more than {limits.HISTORY_ROWS_MAX:,} rows in one file; split it", line=start)
                for index, value in enumerate(values):
                    if len(value) > limits.HISTORY_CELL_MAX_CHARS:
                        raise _too_long(start, _column_name(header, index))
                yield start, values

    iterator = rows()
    try:
        _, header_row = next(iterator)
    except StopIteration:
        raise TableError("the file is empty") from None
    return Table("csv", ENCODING_NAMES[encoding], header_row, iterator)


def _check_header_size(header: list[str]) -> None:
    while header and not header[-1]:
        header.pop()
    if len(header) > limits.HISTORY_COLUMNS_MAX:
        raise TableError(f"the header has {len(header)} columns; at most {limits.HISTORY_COLUMNS_MAX} are read",
                         line=1)
    if not header:
        raise TableError("the first line is empty: it must be the header naming the columns", line=1)


# --- XLSX ---------------------------------------------------------------------------------------------
# What a damaged or hostile workbook makes openpyxl or zipfile raise: each is "not a readable workbook".
_BROKEN_WORKBOOK = (DefusedXmlException, ParseError, zipfile.BadZipFile, zlib.error, KeyError, ValueError,
                    TypeError, IndexError, AttributeError, EOFError, OSError, UnicodeError,
                    NotImplementedError)


def _check_zip(path: Path) -> None:
    refusal = workbook_refusal(str(path), unpacked_max=limits.HISTORY_XLSX_UNCOMPRESSED_MAX_BYTES,
                               ratio_max=limits.HISTORY_XLSX_RATIO_MAX)
    if refusal:
        raise TableError(refusal)


def _xlsx(path: Path, name: str | None = None) -> Table | None:
    from openpyxl import load_workbook  # only when a workbook is read (the import's cost)

    _check_zip(path)
    try:
        workbook = load_workbook(path, read_only=True, data_only=True)
        if name is not None and name not in workbook.sheetnames:
            workbook.close()
            return None
        sheet = workbook.worksheets[0] if name is None else workbook[name]
        # The rows actually present, not the range the file claims (which may say a million of each).
        sheet.reset_dimensions()
        first = next(sheet.iter_rows(min_row=1, max_row=1, max_col=limits.HISTORY_COLUMNS_MAX + 1,
                                     values_only=True), ())
    except TableError:
        raise
    except _BROKEN_WORKBOOK as exc:
        raise TableError(_workbook_problem(exc)) from None
    header = ["" if v is None else str(v).strip() for v in first]
    for index, value in enumerate(header):
        if len(value) > limits.HISTORY_CELL_MAX_CHARS:
            raise _too_long(1, f"#{index + 1}")
    _check_header_size(header)
    width = len(header)

    def rows() -> Iterator[tuple[int, list[Any]]]:
        count = 0
        try:
            for line, values in enumerate(sheet.iter_rows(min_row=2, max_col=width, values_only=True), start=2):
                if all(v is None or (isinstance(v, str) and not v.strip()) for v in values):
                    continue
                count += 1
                if count > limits.HISTORY_ROWS_MAX:
                    raise TableError(f"more than {limits.HISTORY_ROWS_MAX:,} rows in one file; split it", line=line)
                values = list(values) + [None] * (width - len(values))
                for index, value in enumerate(values):
                    if isinstance(value, str) and len(value) > limits.HISTORY_CELL_MAX_CHARS:
                        raise _too_long(line, _column_name(header, index))
                    if isinstance(value, dt.time | dt.timedelta):
                        values[index] = str(value)
                yield line, values
        except TableError:
            raise
        except _BROKEN_WORKBOOK as exc:
            raise TableError(_workbook_problem(exc)) from None
        finally:
            workbook.close()

    return Table("xlsx", "", header, rows())


def _workbook_problem(exc: BaseException) -> str:
    seen = 0
    cause: BaseException | None = exc
    while cause is not None and seen < 5:  # openpyxl wraps what the parser raised in a ValueError
        if isinstance(cause, DefusedXmlException):
            return "the workbook's XML declares entities or a DTD (an XML bomb?); refused"
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return "the file is not a readable XLSX workbook (damaged, or not made by a spreadsheet program)"
