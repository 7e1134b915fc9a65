"""Spreadsheet files as the history import's reader and a rent roll's or T-12's reader take them: what the
first bytes say a file is (`spreadsheet_kind`: XLSX, CSV in UTF-16, other CSV text, or refused in words),
and an XLSX workbook's ZIP checked from its central directory alone, before anything is unpacked
(`workbook_refusal`): a damaged ZIP, a ZIP with no workbook in it, one that would unpack past a bound, or
a member compressed far more than spreadsheet XML ever is (a zip bomb) is refused unopened. Each caller
raises a refusal as its own error."""

from __future__ import annotations

import zipfile
from typing import IO

# How much of a file's start `spreadsheet_kind` is given (and looks at for binary content).
HEAD_BYTES = 8192
XLSX, CSV_UTF16, CSV = "xlsx", "csv-utf-16", "csv"


class NotASpreadsheet(ValueError):
    """The file is no XLSX or CSV: its message says what it is instead, in words a person can act on."""


def is_xlsx(head: bytes) -> bool:
    """The file starts as a ZIP does (an XLSX workbook is one; `workbook_refusal` checks the rest)."""
    return head.startswith(b"PK\x03\x04")


def spreadsheet_kind(head: bytes) -> str:
    """XLSX (a ZIP), CSV_UTF16 (text with a UTF-16 byte order mark) or CSV (other text, its encoding still
    to be found) from the file's first HEAD_BYTES bytes, not its name; NotASpreadsheet for an Excel
    97-2003 .xls, a PDF or other binary content. `head` holds something besides whitespace."""
    if is_xlsx(head):
        return XLSX
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        raise NotASpreadsheet("this is an Excel 97-2003 .xls file; save it as .xlsx or CSV")
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return CSV_UTF16
    if b"\x00" in head[:HEAD_BYTES] or head.startswith(b"%PDF"):
        raise NotASpreadsheet("the file is not a spreadsheet (binary content, neither CSV text nor an XLSX "
                              "workbook)")
    return CSV


# A member this small is never a bomb, whatever its ratio (XML compresses 20-50x).
RATIO_FREE_BYTES = 1 << 20


def workbook_refusal(source: str | IO[bytes], *, unpacked_max: int, ratio_max: int) -> str | None:
    """Why the workbook at `source` (a path or a binary file) is refused, in a sentence; None when it
    may be opened."""
    try:
        with zipfile.ZipFile(source) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return "the file is not a spreadsheet (a damaged ZIP, not an XLSX workbook)"
    if not any(m.filename == "xl/workbook.xml" for m in members):
        return "the file is not a spreadsheet (a ZIP archive without an Excel workbook in it)"
    total = sum(m.file_size for m in members)
    if total > unpacked_max:
        return (f"the workbook unpacks to {total / 2**20:.0f} MB; at most {unpacked_max // 2**20} MB is read "
                "(refused unopened)")
    for member in members:
        if member.file_size > RATIO_FREE_BYTES and member.file_size > ratio_max * max(member.compress_size, 1):
            return "the workbook is compressed beyond what a spreadsheet is (a zip bomb?); refused unopened"
    return None
