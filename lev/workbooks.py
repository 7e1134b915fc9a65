"""An XLSX workbook's ZIP checked from its central directory alone, before anything is unpacked (the
history import's reader and a rent roll's or T-12's): a damaged ZIP, a ZIP with no workbook in it, one
that would unpack past a bound, or a member compressed far more than spreadsheet XML ever is (a zip bomb)
is refused unopened. Each caller raises the refusal as its own error."""

from __future__ import annotations

import zipfile
from typing import IO

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
