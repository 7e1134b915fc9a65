"""seed_demo loads the demo account's past history from the bundled file (deals/demo/history.csv) through
the history import, the path a team's own file takes (issue 38): its days moved to end yesterday, its
lenders matched by exact name (rows of lenders a smaller directory lacks left out, never matched to a
similar name), once. The file is what `manage.py demo_history_file` writes from the generator and the
exporter, byte for byte."""

from __future__ import annotations

import csv
import datetime as dt
from collections import Counter
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db.models import Max
from django.utils import timezone

from deals.demo.directory import seed_directory
from deals.demo.history import (
    DEMO_HISTORY_FILE,
    HISTORY_DESCRIPTION,
    history_deals,
    import_demo_history,
    seed_market_history,
)
from deals.demo.management.commands.demo_history_file import write_demo_history_file
from deals.history.services import IMPORTED_NOTE
from deals.models import Deal, Placement, TermSheet
from deals.notes.models import Note
from lenders.models import Lender
from lev.accounts.models import Account
from tests.factories import AccountFactory

pytestmark = pytest.mark.django_db


def _file_rows() -> list[dict[str, str]]:
    with DEMO_HISTORY_FILE.open(encoding="utf-8-sig", newline="") as file:
        return list(csv.DictReader(file))


def _seed(*args: str) -> str:
    out = StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


def test_the_bundled_file_is_what_the_generator_and_the_exporter_write(tmp_path):
    """Reproducible: regenerated on a fresh database, the file is the same bytes; the database is left
    as it was (the scratch account, its history and the directory rolled back)."""
    path = tmp_path / "history.csv"
    rows = write_demo_history_file(path)
    assert path.read_bytes() == DEMO_HISTORY_FILE.read_bytes()
    assert rows == len(_file_rows()) > 1000
    assert (Deal.objects.count(), Lender.objects.count(), Account.objects.count()) == (0, 0, 0)
    # No database ids in it: deals keyed by the file's own ids, lenders by name.
    file_rows = _file_rows()
    assert all(row["deal_external_id"].startswith("demo-history-") and row["lender_id"] == "" for row in file_rows)
    assert {(row["description"], row["deal_archived"]) for row in file_rows} == {(HISTORY_DESCRIPTION, "yes")}


def test_seed_demo_imports_the_bundled_history_with_its_days_moved_to_end_yesterday():
    out = _seed()
    rows = _file_rows()
    account = Account.objects.get(slug="demo-capital")
    past = history_deals(account)
    deal_ids = {row["deal_external_id"] for row in rows}
    # Everything in the file, through the import: one deal per id (archived, marked, noted), one placement per row.
    assert set(past.values_list("external_id", flat=True)) == deal_ids
    assert not Deal.objects.filter(account=account, archived=True).exclude(pk__in=past).exists()
    assert Placement.objects.filter(deal__in=past).count() == len(rows)
    assert TermSheet.objects.filter(deal__in=past).count() == sum(bool(row["quote_amount"]) for row in rows)
    assert Counter(Placement.objects.filter(deal__in=past).values_list("status", flat=True))["won"] == sum(
        row["outcome"] == "won" for row in rows)
    notes = Note.objects.filter(deal__in=past, body__startswith=IMPORTED_NOTE.split("{")[0])
    assert notes.count() == len(deal_ids)
    assert all(" history.csv " in body for body in notes.values_list("body", flat=True)[:5])
    assert f"{len(deal_ids)} past deals, {len(rows)} placements" in out and "imported from history.csv" in out
    # Its days moved by whole days: the last one is yesterday, each gap as in the file.
    yesterday = timezone.localdate() - dt.timedelta(days=1)
    latest = Placement.objects.filter(deal__in=past).aggregate(sent=Max("sent_at"), decided=Max("decided_at"),
                                                               answered=Max("first_response_at"))
    assert max(timezone.localdate(moment) for moment in latest.values() if moment) == yesterday
    last_in_file = max(dt.date.fromisoformat(row[key]) for row in rows for key in ("sent_on", "answered_on",
                                                                                   "decided_on") if row[key])
    shift = yesterday - last_in_file
    first = min(rows, key=lambda row: row["sent_on"])
    placed = Placement.objects.get(deal__external_id=first["deal_external_id"], lender__name=first["lender"])
    assert timezone.localdate(placed.sent_at) == dt.date.fromisoformat(first["sent_on"]) + shift

    # Again: nothing new (the import's external ids), and it says so.
    counts = (Deal.objects.count(), Placement.objects.count(), TermSheet.objects.count(), Note.objects.count())
    again = _seed()
    assert (Deal.objects.count(), Placement.objects.count(), TermSheet.objects.count(),
            Note.objects.count()) == counts
    assert "Market history of Demo Capital Partners: already there." in again


def test_a_smaller_directory_leaves_out_the_rows_of_the_lenders_it_lacks():
    """--lenders 60: the first 60 of the default directory; only the rows naming one of them are imported
    (matched by exact name, never to a similar one), and the output says how many were left out."""
    out = _seed("--lenders", "60")
    rows = _file_rows()
    names = set(Lender.objects.values_list("name", flat=True))
    kept = [row for row in rows if row["lender"] in names]
    assert 0 < len(kept) < len(rows)
    past = history_deals(Account.objects.get(slug="demo-capital"))
    assert Placement.objects.filter(deal__in=past).count() == len(kept)
    assert sorted(Placement.objects.filter(deal__in=past).values_list("deal__external_id", "lender__name")) == sorted(
        (row["deal_external_id"], row["lender"]) for row in kept)
    assert f"{len(rows) - len(kept)} of the file's {len(rows)} rows left out" in out


def test_a_directory_without_the_files_lenders_imports_nothing_and_says_so():
    out = _seed("--lenders", "0")
    assert "Market history of Demo Capital Partners: none: no row of history.csv names a lender" in out
    assert not history_deals(Account.objects.get(slug="demo-capital")).exists()


def test_a_history_generated_by_an_older_seed_demo_is_kept_not_doubled():
    seed_directory(40)
    account = AccountFactory()
    made = seed_market_history(account, seed=7, deals=30)
    assert made.deals
    loaded = import_demo_history(account)
    assert loaded.generated and loaded.stats.deals == 0
    assert history_deals(account).count() == made.deals


def test_a_past_deal_whose_lenders_went_is_imported_anew(tmp_path):
    """A directory seeded afresh takes the placements with it: such a past deal is deleted and imported
    again with the lenders there now."""
    seed_directory(60)
    account = AccountFactory()
    first = import_demo_history(account)
    assert first.stats.deals
    deal = history_deals(account).order_by("pk").first()
    Placement.objects.filter(deal=deal).delete()
    again = import_demo_history(account)
    assert again.stats.deals == 1 and again.stats.placements == Placement.objects.filter(
        deal__external_id=deal.external_id).count() > 0


def test_a_file_of_other_days_is_moved_the_same_way(tmp_path):
    """The shift is the file's own: any day the file was written for, its last day lands on yesterday."""
    seed_directory(60)
    rows = _file_rows()
    path = Path(tmp_path) / "history.csv"
    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (dt.date.fromisoformat(v) - dt.timedelta(days=400)).isoformat()
                             if k in ("sent_on", "answered_on", "decided_on") and v else v for k, v in row.items()})
    today = dt.date(2027, 3, 15)
    loaded = import_demo_history(AccountFactory(), path=path, today=today)
    assert loaded.stats.deals
    last_in_file = max(dt.date.fromisoformat(row[key]) for row in rows for key in ("sent_on", "answered_on",
                                                                                   "decided_on") if row[key])
    assert loaded.shift_days == (today - dt.timedelta(days=1) - (last_in_file - dt.timedelta(days=400))).days
    moments = [m for p in Placement.objects.all() for m in (p.sent_at, p.first_response_at, p.decided_at) if m]
    assert max(timezone.localdate(m) for m in moments) <= today - dt.timedelta(days=1)
