"""Files for the documents' tests: real bytes of each kind, made here (nothing mocked)."""

from __future__ import annotations

import io
import zipfile

from django.core.files.uploadedfile import SimpleUploadedFile

PDF_BYTES = (b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
             b"2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
# A PDF whose catalog runs JavaScript when opened: kept as any PDF, served only as an attachment.
PDF_WITH_JS = (b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R /OpenAction 3 0 R >> endobj\n"
               b"2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n"
               b"3 0 obj << /S /JavaScript /JS (app.alert('pwned');) >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
EXE_BYTES = (b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00" + b"\x00" * 48
             + b"This program cannot be run in DOS mode.")
CSV_BYTES = b"Unit,Tenant,Rent\n101,Smith,1450\n102,Vacant,0\n"


def xlsx_bytes(*, sheet: bytes = b"<worksheet/>", extra: dict[str, bytes] | None = None) -> bytes:
    """A minimal Office Open XML workbook (the parts every XLSX has)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", b'<?xml version="1.0"?><Types/>')
        archive.writestr("xl/workbook.xml", b'<?xml version="1.0"?><workbook/>')
        archive.writestr("xl/worksheets/sheet1.xml", sheet)
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


def zip_bomb_xlsx(inflated: int = 64 * 1024 * 1024) -> bytes:
    """An XLSX whose one sheet inflates about a thousand times (zeros deflate to almost nothing)."""
    return xlsx_bytes(sheet=b"\x00" * inflated)


def xml_bomb_xlsx() -> bytes:
    laughs = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
              + b"".join(b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10)
                         for i in range(1, 10))
              + b']><worksheet>&lol9;</worksheet>')
    return xlsx_bytes(sheet=laughs)


def upload(name: str, data: bytes, content_type: str = "application/octet-stream") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type=content_type)
