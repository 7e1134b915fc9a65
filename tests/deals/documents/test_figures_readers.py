"""The readers, pure (bytes in, a result out): each layout brokers receive gives its figures; every cell that
cannot be read is a problem with its row; a file with no recognisable header says what was looked for;
hostile files (zip bomb, XML bomb, wrong type, too big, bad encodings) are refused with a sentence."""

from __future__ import annotations

import io
import zipfile
from decimal import Decimal

import pytest

from deals.documents.figures import FiguresUnreadable, read_figures
from deals.documents.figures.cells import NotAnAmount, amount
from deals.documents.figures.grid import FileUnreadable
from lev import limits
from tests.deals.documents import figures_files as files

LAYOUTS = [
    (files.yardi_rent_roll, "rent_roll", "yardi"),
    (files.realpage_rent_roll, "rent_roll", "realpage"),
    (files.appfolio_rent_roll, "rent_roll", "appfolio"),
    (files.hand_made_rent_roll, "rent_roll", "generic"),
    (files.yardi_t12, "t12", "yardi"),
    (files.appfolio_t12, "t12", "appfolio"),
    (files.realpage_t12, "t12", "realpage"),
    (files.hand_made_t12, "t12", "generic"),
]


@pytest.mark.parametrize(("make", "kind", "layout"), LAYOUTS, ids=[m.__name__ for m, *_ in LAYOUTS])
def test_each_layout_gives_its_figures(make, kind, layout):
    data, expected = make()
    result = read_figures(data, "file", None)  # found by its header alone
    assert (result["kind"], result["layout"]) == (kind, layout)
    assert {name: result["figures"][name] for name in expected} == expected
    assert result["rows_read"] > 0
    assert read_figures(data, "file", kind)["figures"] == result["figures"]


def test_the_clean_files_have_no_problems():
    for make in (files.yardi_rent_roll, files.realpage_rent_roll, files.appfolio_rent_roll, files.yardi_t12,
                 files.appfolio_t12, files.realpage_t12):
        assert read_figures(make()[0], "f")["problems"] == [], make.__name__


def test_yardi_leaves_out_the_applicants_section_totals_and_summary_groups():
    data, _ = files.yardi_rent_roll(units=26)
    result = read_figures(data, "rent roll.xlsx", "rent_roll")
    # 26 units, the 6th and 19th vacant; the applicant for the 6th is not a 27th unit.
    assert (result["figures"]["units"], result["figures"]["occupied_units"]) == ("26", "24")
    assert result["figures"]["occupancy"] == "92.31"


def test_every_unreadable_cell_of_the_hand_made_sheet_is_said_with_its_row():
    result = read_figures(files.hand_made_rent_roll()[0], "roll.xlsx", "rent_roll")
    messages = {p["row"]: p["message"] for p in result["problems"]}
    assert messages == {
        9: "Row 9: rent '12O0' of unit 104 is not an amount; the unit is counted, its rent is not",
        10: "Row 10: unit 105 is occupied but has no rent; counted as occupied without rent",
        12: "Row 12: rent (50) of unit 107 is negative; not counted",
        13: "Row 13: a rent ($99.00) without a unit; not counted",
        14: "Row 14: unit 101 is listed again (first on row 5); counted once",
    }


def test_a_t12_cell_that_is_not_an_amount_is_said_and_the_rest_of_the_line_read():
    result = read_figures(files.hand_made_t12()[0], "t12.csv", "t12")
    assert result["problems"] == [{"row": 6, "message": "Row 6: Dec of 'Laundry' is 'l20', not an amount; the line "
                                                        "is read without it"}]


def test_a_t12_total_that_disagrees_with_its_lines_is_used_and_said():
    rows = [["Account", "Jan 2026", "Feb 2026", "Mar 2026", "Apr 2026", "May 2026", "Jun 2026", "Jul 2026",
             "Aug 2026", "Sep 2026", "Oct 2026", "Nov 2026", "Dec 2026", "Total"],
            ["Income"], ["Rent", *["100"] * 12, "1200"], ["Total Income", *[""] * 12, "1,300"],
            ["Expenses"], ["Taxes", *["10"] * 12, "120"], ["Total Expenses", *[""] * 12, "120"],
            ["Net Operating Income", *[""] * 12, "2,000"]]
    data = "\n".join(",".join(f'"{c}"' for c in row) for row in rows).encode()
    result = read_figures(data, "t12.csv", "t12")
    assert result["figures"] == {"effective_gross_income": "1300.00", "operating_expenses": "120.00",
                                 "noi": "2000.00", "months": "12"}
    assert [p["row"] for p in result["problems"]] == [4, 8]
    assert "differs from the sum of the income lines 1200.00" in result["problems"][0]["message"]
    assert "differs from income less expenses 1180.00" in result["problems"][1]["message"]


def test_a_statement_of_fewer_months_says_so():
    rows = [["Account", *[f"Period {i}" for i in range(1, 8)]], ["Rent", *["10"] * 7], ["Expenses"],
            ["Repairs", *["1"] * 7]]
    result = read_figures("\n".join(",".join(r) for r in rows).encode(), "t.csv", "t12")
    assert result["figures"]["noi"] == "63.00"
    assert result["problems"][0] == {"row": None, "message": "The statement has 7 month columns, not 12; the figures "
                                                             "are over those months."}


@pytest.mark.parametrize("encoding", ["cp1252", "utf-8-sig", "utf-8", "utf-16"])
def test_csv_in_any_common_encoding(encoding):
    data, _ = files.appfolio_rent_roll(encoding)
    assert read_figures(data, "roll.csv", "rent_roll")["figures"]["monthly_in_place_rent"] == "5000.50"


def test_semicolon_csv_and_a_rent_roll_header_below_a_title():
    data = b"Rent roll Dec\n\nUnit;Tenant;Rent\n1;A;1.000,00\n"
    # "1.000,00" (a European amount) is not read as a US one: said, not guessed.
    result = read_figures(data, "r.csv", "rent_roll")
    assert result["figures"]["units"] == "1"
    assert result["problems"][0]["message"].startswith("Row 4: rent '1.000,00' of unit 1 is not an amount")


@pytest.mark.parametrize(("kind", "looked_for"), [("rent_roll", "a unit column"), ("t12", "six month columns"),
                                                   (None, "a unit column")])
def test_no_recognisable_header_says_what_was_looked_for(kind, looked_for):
    data = b"Name,Email\nAda,ada@example.com\n"
    with pytest.raises(FiguresUnreadable) as caught:
        read_figures(data, "contacts.csv", kind)
    assert "no header was recognised" in str(caught.value) and looked_for in str(caught.value)
    if kind is None:
        assert "six month columns" in str(caught.value)


@pytest.mark.parametrize(("value", "read"), [
    ("$1,234.50", Decimal("1234.50")), ("(1,234)", Decimal("-1234")), ("1,234-", Decimal("-1234")),
    ("95%", Decimal("95")), (" USD 12 ", Decimal("12")), ("-", None), ("", None), (None, None), (1200, Decimal(1200)),
    (1450.5, Decimal("1450.5")), ("$-5", Decimal("-5")), ("\u2013", None)])
def test_amounts_as_brokers_write_them(value, read):
    assert amount(value) == read


@pytest.mark.parametrize("value", ["12O0", "1,23", "abc", "1.2.3", True, "$", "1e5", float("nan")])
def test_what_is_not_an_amount(value):
    with pytest.raises(NotAnAmount):
        amount(value)


# --- hostile files ----------------------------------------------------------------------------------------
def _zip(members: dict[str, bytes], method=zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as archive:
        for name, body in members.items():
            archive.writestr(name, body)
    return out.getvalue()


def test_a_zip_bomb_is_refused_unopened():
    bomb = _zip({"xl/workbook.xml": b"<workbook/>", "xl/worksheets/sheet1.xml": b"\0" * (60 * 2**20)})
    assert len(bomb) < 200_000
    with pytest.raises(FileUnreadable, match="zip bomb"):
        read_figures(bomb, "bomb.xlsx")


def test_a_workbook_unpacking_past_the_bound_is_refused(settings, monkeypatch):
    monkeypatch.setattr(limits, "FIGURES_XLSX_UNCOMPRESSED_MAX_BYTES", 1000)
    data, _ = files.yardi_rent_roll()
    with pytest.raises(FileUnreadable, match="unpacks to"):
        read_figures(data, "r.xlsx")


def test_an_xml_bomb_is_refused():
    data, _ = files.realpage_rent_roll()
    source = zipfile.ZipFile(io.BytesIO(data))
    members = {name: source.read(name) for name in source.namelist()}
    members["xl/worksheets/sheet1.xml"] = (
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">'
        b'<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;">]><worksheet xmlns="http://schemas.openxmlformats.org/'
        b'spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>&lol3;</t></is></c></row>'
        b"</sheetData></worksheet>")
    with pytest.raises(FileUnreadable, match="XML bomb"):
        read_figures(_zip(members), "bomb.xlsx")


@pytest.mark.parametrize(("data", "says"), [
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>", "not a spreadsheet"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 100, "Excel 97-2003"),
    (b"PK\x03\x04garbage", "damaged ZIP"),
    (b"", "empty"),
    (b"   \n  ", "empty"),
    (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "not a spreadsheet"),
])
def test_files_that_are_not_spreadsheets(data, says):
    with pytest.raises(FileUnreadable, match=says):
        read_figures(data, "roll.xlsx")


def test_a_zip_that_is_no_workbook():
    with pytest.raises(FileUnreadable, match="without an Excel workbook"):
        read_figures(_zip({"word/document.xml": b"<w/>"}), "roll.xlsx")


def test_a_file_over_the_size_bound_is_refused_before_it_is_parsed(monkeypatch):
    monkeypatch.setattr(limits, "FIGURES_FILE_MAX_BYTES", 100)
    with pytest.raises(FileUnreadable, match="of at most 0 MB"):
        read_figures(b"Unit,Rent\n" + b"1,100\n" * 50, "r.csv")


def test_too_many_rows_and_too_long_cells_are_refused(monkeypatch):
    monkeypatch.setattr(limits, "FIGURES_ROWS_MAX", 10)
    with pytest.raises(FileUnreadable, match="more than 10 rows"):
        read_figures(b"Unit,Rent\n" + b"1,100\n" * 20, "r.csv")
    monkeypatch.setattr(limits, "FIGURES_ROWS_MAX", 1000)
    with pytest.raises(FileUnreadable, match="row 2: a cell is longer"):
        read_figures(b"Unit,Rent\n1," + b"9" * 2000 + b"\n", "r.csv")


def test_bytes_that_no_common_encoding_reads_are_refused():
    with pytest.raises(FileUnreadable, match="neither UTF-8 nor Windows-1252"):
        read_figures(b"Unit,Rent\n1,\x81\x8d\x8f\n", "r.csv")


def test_a_sheet_claiming_a_far_row_is_refused_quickly(monkeypatch):
    from openpyxl import Workbook

    monkeypatch.setattr("deals.documents.figures.grid.LINES_MAX", 500)
    workbook = Workbook()
    workbook.active["A1"], workbook.active["A100000"] = "Unit", "x"
    out = io.BytesIO()
    workbook.save(out)
    with pytest.raises(FileUnreadable, match="past row 500"):
        read_figures(out.getvalue(), "r.xlsx")


def test_a_header_with_nothing_below_gives_no_figures_and_says_why():
    roll = read_figures(b"Rent roll\nUnit,Tenant,Rent\nTotal,,0\n", "r.csv", "rent_roll")
    assert roll["figures"] == {}
    assert roll["problems"] == [{"row": None, "message": "No unit rows were found below the header (row 2)."}]
    months = ",".join(f"Jan {y}" for y in range(2015, 2027))
    t12 = read_figures(f"Account,{months}\n".encode() + b"Notes only\n", "t.csv", "t12")
    assert t12["figures"] == {}
    assert "No income or expense lines were found" in t12["problems"][0]["message"]


def test_a_long_unit_name_with_a_rent_is_a_unit_and_a_section_label_is_not():
    data = (b"Unit,Tenant,Rent\n"
            b"Building C - Garden Level Unit 12,A. Lee,900\n"  # words, but a rent: a unit
            b"Building D residents,,\n"  # a section label: passed over
            b"D-1,B. Cho,1000\n")
    result = read_figures(data, "r.csv", "rent_roll")
    assert (result["figures"]["units"], result["figures"]["monthly_in_place_rent"]) == ("2", "1900.00")
    assert result["problems"] == []
