"""manage.py import_market_rates on the real database: a good file, re-imported (updates), bad lines
reported by number with nothing written, a fraction refused, a dry run writing nothing, --help true."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from lenders.rates.models import MarketRate

pytestmark = pytest.mark.django_db

SAMPLE = Path(__file__).resolve().parents[3] / "lenders" / "rates" / "data" / "market_rates_sample.csv"


def run(path: Path, *args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import_market_rates", str(path), *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def refused(path: Path) -> tuple[str, list[str]]:
    """The command's failure and the lines it wrote to stderr."""
    err = StringIO()
    with pytest.raises(CommandError) as failure:
        call_command("import_market_rates", str(path), stdout=StringIO(), stderr=err)
    return str(failure.value), err.getvalue().splitlines()


def write(tmp_path: Path, text: str, name: str = "rates.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_sample_imports_and_a_reimport_updates(tmp_path):
    out, _ = run(SAMPLE)
    assert "14 created, 0 updated, 0 unchanged" in out
    assert MarketRate.objects.count() == 14
    row = MarketRate.objects.get(index="term_sofr_3m", on=dt.date(2026, 11, 16))  # by display name
    assert (row.rate, row.source) == (Decimal("4.350"), "csv market_rates_sample.csv")
    again = write(tmp_path, "index,date,rate\nSOFR,2026-11-17,4.29%\nprime,2026-11-17,7.5\nsofr,2026-11-18,4.28\n")
    out, _ = run(again)
    assert "1 created, 1 updated, 1 unchanged" in out
    assert MarketRate.objects.get(index="sofr", on=dt.date(2026, 11, 17)).rate == Decimal("4.29")


def test_bad_lines_are_reported_by_number_and_nothing_is_written(tmp_path):
    path = write(tmp_path, "date,index,rate\n2026-11-16,sofr,4.31\n2026-13-01,sofr,4.3\n2026-11-16,libor,4.3\n"
                           "\n2026-11-17,prime,0.075\n2026-11-18,sofr,abc\n2026-11-16,SOFR,4.32\n2026-11-19,sofr\n")
    message, lines = refused(path)
    assert message == "6 bad line(s); nothing was imported."
    assert MarketRate.objects.count() == 0
    assert lines[0] == 'rates.csv: line 3: date "2026-13-01" is not a date YYYY-MM-DD'
    assert lines[1].startswith('rates.csv: line 4: index "libor" is not one of sofr (SOFR), ')
    assert lines[2] == ("rates.csv: line 6: rate 0.075 must be a percent, not a fraction: 0, or 1 to 30; "
                        "did you mean 7.5?")
    assert lines[3] == 'rates.csv: line 7: rate "abc" is not a number (percent per year, e.g. 4.31)'
    assert lines[4] == "rates.csv: line 8: sofr on 2026-11-16 is already on line 2"
    assert lines[5] == "rates.csv: line 9: 2 values, expected 3 (date,index,rate)"


def test_a_missing_header_or_file_is_refused(tmp_path):
    _, lines = refused(write(tmp_path, "2026-11-16,sofr,4.31\n"))
    assert lines == ["rates.csv: line 1: the header must name the columns date,index,rate (found "
                     "2026-11-16,sofr,4.31)"]
    assert refused(tmp_path / "missing.csv")[0].startswith("Cannot read")
    assert "no rates" in refused(write(tmp_path, "date,index,rate\n"))[0]
    assert MarketRate.objects.count() == 0


def test_a_dry_run_writes_nothing():
    out, _ = run(SAMPLE, "--dry-run")
    assert "Would import 14 rate(s)" in out and "14 created" in out and "nothing was written" in out
    assert MarketRate.objects.count() == 0


def test_the_help_says_what_the_file_holds():
    from lenders.management.commands.import_market_rates import Command

    text = Command().create_parser("manage.py", "import_market_rates").format_help()
    assert "date,index,rate" in text and "--dry-run" in text and "3-month Term SOFR" in text


def test_a_field_over_csvs_limit_is_a_line_not_a_traceback(tmp_path):
    # 131,072 characters is the csv module's own bound; past it csv raised and the command printed a traceback.
    path = write(tmp_path, "date,index,rate\n2025-01-02,sofr,4.31\n2025-01-03,sofr," + "9" * 140_000 + "\n")
    message, lines = refused(path)
    assert lines == ["rates.csv: line 3: a value is far longer than any date, index or rate"]
    assert message == "1 bad line(s); nothing was imported."
    assert not MarketRate.objects.exists()
