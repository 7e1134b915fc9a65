"""What a document's file is, read from its bytes, never from its name or what the client said
(docs/documents.md "Security").

* `safe_file_name`: the name a file is kept and served with: no path, no control or bidi characters,
  bounded, never empty.
* `inspect`: one pass over the file (which stays on disk, never whole in memory) computing its size and
  sha256, its type sniffed from its first bytes (puremagic, plus plain text / CSV where the sniffer
  says nothing), and the checks that refuse a file whose bytes contradict its name's extension (a .pdf
  that is not a PDF, an .xlsx that is not a zip, an executable under any name) or a zip / XLSX bomb:
  its entries' DECLARED uncompressed sizes and ratios are read from the zip's central directory, nothing
  is extracted, and no XML is parsed here (only the first bytes of each XML part are looked at, for a
  DTD, which no Office file has and every XML entity bomb needs). A zip reader (deals.documents.figures)
  reads no more than an entry's declared size, so the declared sizes bound what is ever inflated.
"""

from __future__ import annotations

import hashlib
import unicodedata
import zipfile
from dataclasses import dataclass

import puremagic
from django.conf import settings

from lev import limits
from lev.errors import ValidationFailed

# How much of the file the sniffer reads.
HEAD_BYTES = 8192
# A zip whose entries declare more than this many times their compressed size, for an entry that
# inflates past ZIP_RATIO_FLOOR_BYTES, is a bomb: real XLSX parts compress 5-20 times.
ZIP_RATIO_MAX = 100
ZIP_RATIO_FLOOR_BYTES = 1024 * 1024
ZIP_ENTRIES_MAX = 10_000
# The first bytes of each XML part looked at for a DTD (<!DOCTYPE / <!ENTITY).
XML_HEAD_BYTES = 4096

PDF = "application/pdf"
ZIP = "application/zip"
OLE = "application/x-ole-storage"  # .xls, .doc, .ppt (Office 97-2003)
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
CSV = "text/csv"
TEXT = "text/plain"
OCTET = "application/octet-stream"
EXECUTABLE = "application/x-executable"

# Office Open XML: the part every file of that kind has.
OOXML_PARTS = {XLSX: "xl/workbook.xml", DOCX: "word/document.xml", PPTX: "ppt/presentation.xml"}

# What each known extension's bytes must be. A name with another (or no) extension is kept with the
# sniffed type; an executable is refused whatever its name.
EXTENSION_TYPES: dict[str, tuple[str, ...]] = {
    "pdf": (PDF,),
    "xlsx": (XLSX,), "xlsm": (XLSX,), "docx": (DOCX,), "pptx": (PPTX,),
    "xls": (OLE,), "doc": (OLE,), "ppt": (OLE,),
    "csv": (CSV, TEXT), "txt": (TEXT, CSV), "tsv": (TEXT, CSV),
    "zip": (ZIP, XLSX, DOCX, PPTX),
    "png": ("image/png",), "jpg": ("image/jpeg",), "jpeg": ("image/jpeg",), "gif": ("image/gif",),
    "webp": ("image/webp",), "tif": ("image/tiff",), "tiff": ("image/tiff",),
    "heic": ("image/heic", "image/heif"),
}
EXTENSION_NAMES = {"pdf": "a PDF", "xlsx": "an Excel workbook (XLSX)", "xlsm": "an Excel workbook (XLSM)",
                   "docx": "a Word document", "pptx": "a PowerPoint presentation", "xls": "an Excel 97-2003 workbook",
                   "doc": "a Word 97-2003 document", "ppt": "a PowerPoint 97-2003 presentation",
                   "csv": "a CSV text file", "txt": "a text file", "tsv": "a text file", "zip": "a zip archive"}

# Unicode categories never kept in a file name: controls (Cc: NUL, CR, LF...), formats (Cf: the bidi
# overrides and isolates U+202A-U+202E, U+2066-U+2069, the marks U+200E/U+200F/U+061C, zero-width
# characters), line and paragraph separators, surrogates and unassigned code points.
_DROPPED_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}
_RESERVED = set('<>:"|?*')


def safe_file_name(name: str | None, *, default: str = "document") -> str:
    """`name` as a file name that is safe to keep and to serve: its last path component (either
    separator), NFC, without control, bidi, format or reserved characters, without leading dots or
    spaces (no hidden or relative name), at most DOCUMENT_FILE_NAME_MAX characters with its extension
    kept, and never empty (`default`, with the extension when there is one)."""
    text = unicodedata.normalize("NFC", str(name or ""))
    text = text.replace("\\", "/").rsplit("/", 1)[-1]
    text = "".join(" " if ch in "\t\r\n\v\f" else ch for ch in text
                   if ch in "\t\r\n\v\f" or (unicodedata.category(ch) not in _DROPPED_CATEGORIES
                                              and ch not in _RESERVED))
    text = " ".join(text.split())  # runs of whitespace as one space
    text = text.strip(" ").rstrip(". ")
    stem, dot, suffix = text.rpartition(".")
    if not dot:
        stem, suffix = text, ""
    suffix = suffix.strip(" ")[:16]
    stem = stem.lstrip(". ") or default
    room = limits.DOCUMENT_FILE_NAME_MAX - (len(suffix) + 1 if suffix else 0)
    stem = stem[:room].rstrip(". ") or default
    return f"{stem}.{suffix}" if suffix else stem


def clean_text(text: str) -> str:
    """A document's name as the team sees it: without control, bidi or format characters, its runs of
    whitespace as one space."""
    text = unicodedata.normalize("NFC", str(text))
    return " ".join("".join(" " if ch in "\t\r\n" else ch for ch in text
                            if ch in "\t\r\n" or unicodedata.category(ch) not in _DROPPED_CATEGORIES).split())


def extension(file_name: str) -> str:
    stem, dot, suffix = file_name.rpartition(".")
    return suffix.lower() if dot and stem else ""


@dataclass(frozen=True)
class Inspection:
    size: int
    sha256: str
    content_type: str


def _refuse(message: str, *, status: int = 400) -> ValidationFailed:
    error = ValidationFailed({"file": [message]})
    error.http_status = status
    return error


def too_large(limit: int | None = None) -> ValidationFailed:
    """The 413 of the error contract: the upload is larger than LEV_DOCUMENT_UPLOAD_MAX_BYTES."""
    limit = settings.LEV_DOCUMENT_UPLOAD_MAX_BYTES if limit is None else limit
    return _refuse(f"is too large: a document may be at most {limit} bytes ({limit // (1024 * 1024)} MB)",
                   status=413)


def _is_text(head: bytes) -> bool:
    if not head or b"\x00" in head:
        return False
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut by the head's end is still text.
        if exc.start < len(head) - 4:
            try:
                text = head.decode("cp1252")
            except UnicodeDecodeError:
                return False
        else:
            text = head[:exc.start].decode("utf-8")
    controls = sum(1 for ch in text if unicodedata.category(ch) == "Cc" and ch not in "\t\r\n\f")
    return controls == 0


def _sniff_magic(head: bytes) -> str | None:
    if head[:5] == b"%PDF-" or (b"%PDF-" in head[:1024]):  # a PDF's header may follow some junk
        return PDF
    if head[:4] == b"PK\x03\x04" or head[:4] == b"PK\x05\x06":
        return ZIP
    if head[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
        return OLE
    if head[:2] == b"MZ" or head[:4] in (b"\x7fELF", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe",
                                         b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe"):
        return EXECUTABLE
    if head[:2] == b"#!":
        return "text/x-script"
    try:
        found = puremagic.magic_string(head)
    except (puremagic.PureError, ValueError):
        return None
    found = [match for match in found if match.mime_type]
    if not found:
        return None
    return max(found, key=lambda match: match.confidence).mime_type


def _zip_type(upload, name_ext: str) -> str:
    """The zip's kind (an Office Open XML file or a plain zip), refusing a bomb: read from the central
    directory without extracting."""
    upload.seek(0)
    try:
        with zipfile.ZipFile(upload) as archive:
            entries = archive.infolist()
            if len(entries) > ZIP_ENTRIES_MAX:
                raise _refuse(f"is refused: the archive holds more than {ZIP_ENTRIES_MAX} entries")
            total = 0
            for entry in entries:
                total += entry.file_size
                if (entry.file_size > ZIP_RATIO_FLOOR_BYTES
                        and entry.file_size > ZIP_RATIO_MAX * max(entry.compress_size, 1)):
                    raise _refuse("is refused: it is a zip bomb (an entry inflates more than "
                                  f"{ZIP_RATIO_MAX} times its compressed size)")
            if total > settings.LEV_DOCUMENT_UNZIPPED_MAX_BYTES:
                raise _refuse("is refused: its contents would inflate to more than "
                              f"{settings.LEV_DOCUMENT_UNZIPPED_MAX_BYTES} bytes (a zip bomb)")
            names = {entry.filename for entry in entries}
            kind = next((kind for kind, part in OOXML_PARTS.items() if part in names), ZIP)
            if kind != ZIP:
                for entry in entries:
                    if entry.filename.endswith((".xml", ".rels")) and not entry.is_dir():
                        with archive.open(entry) as part:
                            start = part.read(XML_HEAD_BYTES)
                        if b"<!DOCTYPE" in start or b"<!ENTITY" in start:
                            raise _refuse("is refused: one of its XML parts declares a DTD (an XML entity "
                                          "bomb); an Office file never does")
            return kind
    except ValidationFailed:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError, EOFError, ValueError,
            RuntimeError):  # RuntimeError: an encrypted entry
        if name_ext in ("xlsx", "xlsm", "docx", "pptx", "zip"):
            raise _refuse(f"is not {EXTENSION_NAMES[name_ext]}: it is not a readable zip archive") from None
        return ZIP
    finally:
        upload.seek(0)


def inspect(upload, file_name: str, *, max_bytes: int | None = None) -> Inspection:
    """Size, sha256 and sniffed type of `upload` (a Django File), streamed in chunks; refuses a file
    too large, empty, an executable, a bomb, or whose bytes are not what its extension says."""
    max_bytes = settings.LEV_DOCUMENT_UPLOAD_MAX_BYTES if max_bytes is None else max_bytes
    digest, size, head = hashlib.sha256(), 0, b""
    upload.seek(0)
    for chunk in upload.chunks():
        size += len(chunk)
        if size > max_bytes:
            raise too_large(max_bytes)
        if len(head) < HEAD_BYTES:
            head += chunk[:HEAD_BYTES - len(head)]
        digest.update(chunk)
    upload.seek(0)
    if size == 0:
        raise _refuse("is empty")

    name_ext = extension(file_name)
    sniffed = _sniff_magic(head)
    if sniffed == EXECUTABLE:
        raise _refuse("is refused: it is an executable program, not a document"
                      + (f" (whatever its name says: .{name_ext})" if name_ext else ""))
    if sniffed == ZIP:
        sniffed = _zip_type(upload, name_ext)
    elif sniffed is None:
        sniffed = (CSV if name_ext in ("csv", "tsv") else TEXT) if _is_text(head) else OCTET

    allowed = EXTENSION_TYPES.get(name_ext)
    if allowed is not None and sniffed not in allowed:
        what = EXTENSION_NAMES.get(name_ext, f"a .{name_ext} file")
        raise _refuse(f"is not {what}: its content is {describe(sniffed)}; rename it or upload the right file")
    return Inspection(size=size, sha256=digest.hexdigest(), content_type=sniffed)


def describe(content_type: str) -> str:
    return {PDF: "a PDF", ZIP: "a zip archive", OLE: "an Office 97-2003 file", XLSX: "an Excel workbook",
            DOCX: "a Word document", PPTX: "a PowerPoint presentation", CSV: "CSV text", TEXT: "plain text",
            OCTET: "unrecognised binary data", "text/x-script": "a script"}.get(content_type, content_type)
