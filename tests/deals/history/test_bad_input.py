"""Every bad input of issue 38 through manage.py import_history: a CommandError naming the line and the
column, no traceback, nothing written. Each file is made here, for real."""

from __future__ import annotations

import os
import tracemalloc
import zipfile

import pytest

from deals.history.reader import read_table
from tests.deals.history.helpers import HEADER, counts, refused, rows_ab, run_import, write_csv, write_xlsx
from tests.factories import AccountFactory, LenderFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def account():
    for name in ("JPMorgan Chase Bank, N.A.", "Wells Fargo Bank", "Arbor Realty Trust"):
        LenderFactory(name=name)
    return AccountFactory()


def _rows(change: dict, index: int = 0) -> list[dict]:
    rows = rows_ab()
    rows[index] = {**rows[index], **change}
    return rows


@pytest.mark.parametrize(("change", "index", "expected"), [
    ({"outcome": "ghosted"}, 0, 'line 2, column outcome: "ghosted" is not an outcome: sent, quoted, declined'),
    ({"quote_amount": "$10M", "fixed_rate": "6.5"}, 2,
     "line 4, column quote_amount: a quote on a row whose outcome is Declined"),
    ({"quote_amount": "", "fixed_rate": "", "term_months": "", "amortization_months": "", "max_ltv": "",
      "min_dscr": "", "origination_fee": ""}, 0, "line 2, column quote_amount: a won row needs its quote"),
    ({"answered_on": "2999-01-01"}, 0, "line 2, column answered_on: 2999-01-01 is in the future"),
    ({"loan_amount": "1e400"}, 1, "line 3, column loan_amount: \"1e400\" is far larger than any figure"),
    ({"fixed_rate": "0.065"}, 0,
     "line 2, column fixed_rate: must be a percent, not a fraction: 0, or 1 to 30; did you mean 6.5?"),
    ({"max_ltv": "0.65"}, 0, "line 2, column max_ltv: must be a percent, not a fraction: 0, or 1 to 100; did you "
                             "mean 65?"),
    ({"sent_on": "last spring"}, 3, 'line 5, column sent_on: "last spring" is not a date'),
    ({"loan_amount": "$20M"}, 1, "line 3, column loan_amount: the deal CRM-1 says otherwise on line 2"),
    ({"lender": "JPMorgan Chase", "outcome": "declined", "quote_amount": "", "rate_index": "", "spread_bps": "",
      "term_months": ""}, 1, "line 3, column lender: JPMorgan Chase Bank, N.A. is already placed on the deal CRM-1"),
    ({"stage": "Nowhere"}, 3, 'line 5, column stage: "Nowhere" is not a stage of this account'),
    ({"decline_reason": "Out\x07side"}, 2, "line 4, column decline_reason: holds control characters"),
    ({"deal_archived": "maybe"}, 0, 'line 2, column deal_archived: "maybe" is not yes or no'),
    ({"deal_archived": "yes"}, 1, "line 3, column deal_archived: the deal CRM-1 says otherwise on line 2"),
])
def test_a_bad_row_is_refused_naming_line_and_column_and_nothing_is_written(tmp_path, account, change, index,
                                                                         expected):
    path = write_csv(tmp_path / "history.csv", _rows(change, index))

    message = refused(path, account)

    assert expected in message
    assert "nothing was imported" in message and "Traceback" not in message
    assert counts(account) == (0, 0, 0)


def test_every_bad_row_is_reported_at_once(tmp_path, account):
    rows = rows_ab()
    rows[0]["outcome"] = "maybe"
    rows[4]["sent_on"] = "2999-12-31"
    message = refused(write_csv(tmp_path / "h.csv", rows), account)
    assert "line 2, column outcome" in message and "line 6, column sent_on" in message
    assert "2 bad row(s)" in message


@pytest.mark.parametrize(("header", "expected"), [
    ([h for h in HEADER if h != "outcome"], "line 1: the header lacks the column outcome"),
    ([h for h in HEADER if h not in ("lender", "lender_id")], "the header lacks the column lender (or lender_id)"),
    ([*HEADER, "Outcome"], 'line 1, column Outcome: the column "outcome" is named twice (columns '
                           f'{HEADER.index("outcome") + 1} and {len(HEADER) + 1})'),
])
def test_a_header_with_missing_or_duplicated_columns_is_refused(tmp_path, account, header, expected):
    message = refused(write_csv(tmp_path / "h.csv", rows_ab(), header=header), account)
    assert expected in message and counts(account) == (0, 0, 0)


def test_wrong_encoding_empty_and_not_a_spreadsheet(tmp_path, account):
    # Bytes that are neither UTF-8 nor Windows-1252 (0x81 is undefined there), on the third line.
    path = tmp_path / "weird.csv"
    path.write_bytes(write_csv(tmp_path / "ok.csv", rows_ab()).read_bytes().replace(b"Wells Fargo", b"W\x81lls", 1))
    assert 'line 3: the file is neither UTF-8 nor Windows-1252 (Excel) text: save it as "CSV UTF-8"' in refused(
        path, account)
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    assert "empty.csv: the file is empty; nothing was imported." in refused(empty, account)
    picture = tmp_path / "history.csv"  # its name says CSV; its bytes say otherwise
    picture.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + os.urandom(2000))
    assert "the file is not a spreadsheet (binary content" in refused(picture, account)
    archive = tmp_path / "history.xlsx"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("readme.txt", "hello")
    assert "a ZIP archive without an Excel workbook in it" in refused(archive, account)
    assert counts(account) == (0, 0, 0)


def test_excel_windows_1252_and_other_delimiters_and_a_bom_are_read(tmp_path, account):
    rows = rows_ab()
    rows[0]["deal_title"] = rows[1]["deal_title"] = rows[2]["deal_title"] = "Café Lofts, Phase II"
    path = write_csv(tmp_path / "excel.csv", rows, delimiter=";", encoding="cp1252")
    out = run_import(path, account)
    assert "(Windows-1252 (Excel))" in out and counts(account) == (2, 5, 3)
    other = AccountFactory()
    bom = tmp_path / "bom.tsv"
    bom.write_bytes(b"\xef\xbb\xbf" + write_csv(tmp_path / "t.tsv", rows_ab(), delimiter="\t").read_bytes())
    assert "(UTF-8)" in run_import(bom, other) and counts(other) == (2, 5, 3)


def test_a_cell_of_200000_characters_is_refused_naming_line_and_column(tmp_path, account):
    rows = rows_ab()
    rows[3]["property_name"] = "x" * 200_000
    message = refused(write_csv(tmp_path / "long.csv", rows), account)
    assert "line 5, column property_name: a cell is longer than 10,000 characters" in message
    workbook = write_xlsx(tmp_path / "long.xlsx", [[r.get(h, "") for h in HEADER] for r in rows])
    assert "line 5, column property_name: a cell is longer than 10,000 characters" in refused(workbook, account)
    assert counts(account) == (0, 0, 0)


def test_a_200_mb_file_is_refused_before_it_is_read(tmp_path, account):
    path = tmp_path / "huge.csv"
    with path.open("wb") as file:  # sparse: 200 MB on paper, nothing on disk
        file.write(",".join(HEADER).encode() + b"\n")
        file.truncate(200 * 2**20)
    message = refused(path, account)
    assert "the file is 200 MB; at most 50 MB is read" in message


def _xlsx_with(tmp_path, name: str, sheet_xml: bytes, extra: dict[str, bytes] | None = None):
    """A real workbook (openpyxl's) whose first sheet's XML is replaced."""
    good = write_xlsx(tmp_path / f"good-{name}", [[r.get(h, "") for h in HEADER] for r in rows_ab()])
    path = tmp_path / name
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = sheet_xml if item.filename == "xl/worksheets/sheet1.xml" else src.read(item.filename)
            dst.writestr(item.filename, data)
        for member, data in (extra or {}).items():
            dst.writestr(member, data)
    return path


def test_a_zip_bomb_disguised_as_xlsx_is_refused_unopened(tmp_path, account):
    bomb = _xlsx_with(tmp_path, "bomb.xlsx", b"<worksheet/>", {"xl/media/padding.bin": b"\0" * (60 * 2**20)})
    message = refused(bomb, account)
    assert "compressed beyond what a spreadsheet is (a zip bomb?); refused unopened" in message
    assert counts(account) == (0, 0, 0)


def test_an_xml_bomb_disguised_as_xlsx_is_refused(tmp_path, account):
    laughs = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
              + b"".join(b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10)
                         for i in range(1, 10))
              + b']><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
                b'<row r="1"><c r="A1" t="inlineStr"><is><t>&lol9;</t></is></c></row></sheetData></worksheet>')
    message = refused(_xlsx_with(tmp_path, "laughs.xlsx", laughs), account)
    assert "the workbook's XML declares entities or a DTD (an XML bomb?); refused" in message
    assert counts(account) == (0, 0, 0)


def test_a_sheet_claiming_a_million_columns_reads_only_the_headers(tmp_path, account):
    ns = b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    cells = lambda values, r: b"".join(  # noqa: E731
        b'<c r="%s%d" t="inlineStr"><is><t>%s</t></is></c>' % (_col(i).encode(), r, str(v).encode())
        for i, v in enumerate(values) if v != "")
    body = b'<row r="1">' + cells(HEADER, 1) + b"</row>"
    for r, row in enumerate(rows_ab(), start=2):
        body += b'<row r="%d">' % r + cells([row.get(h, "") for h in HEADER], r)
        body += b'<c r="XFD%d" t="inlineStr"><is><t>far away</t></is></c></row>' % r
    sheet = (b'<?xml version="1.0"?><worksheet ' + ns + b'><dimension ref="A1:XFD1048576"/><sheetData>' + body
             + b"</sheetData></worksheet>")
    path = _xlsx_with(tmp_path, "wide.xlsx", sheet)
    tracemalloc.start()
    try:
        table = read_table(path)
        rows = list(table.rows)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(table.header) == len(HEADER) and all(len(values) == len(HEADER) for _, values in rows)
    assert peak < 20 * 2**20  # a million empty cells per row would be hundreds of MB
    assert "2 new deal(s)" in run_import(path, account)


def _col(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(65 + rest) + name
    return name



def test_a_line_without_end_and_a_header_of_too_many_columns_are_refused(tmp_path, account):
    endless = tmp_path / "endless.csv"  # 3 MB on one line: read with a bound, never whole
    endless.write_bytes(",".join(HEADER).encode() + b"\nCRM-1,Title," + b"9" * (3 * 2**20))
    assert "line 2, column loan_amount: a cell is longer than 10,000 characters" in refused(endless, account)
    wide = tmp_path / "wide.csv"
    wide.write_text(",".join([*HEADER, *(f"extra{i}" for i in range(80))]) + "\n", encoding="utf-8")
    assert f"line 1: the header has {len(HEADER) + 80} columns; at most 100 are read" in refused(wide, account)
    assert counts(account) == (0, 0, 0)
