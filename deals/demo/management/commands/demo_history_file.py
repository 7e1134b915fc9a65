"""manage.py demo_history_file [--output FILE] [--reference-day YYYY-MM-DD]: write the demo history file
seed_demo imports (deals/demo/history.csv) again, from the generator and the exporter."""

from __future__ import annotations

import csv
import datetime as dt
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from deals.demo.directory import seed_directory
from deals.demo.history import DEMO_HISTORY_FILE, HISTORY_DESCRIPTION, history_deals, seed_market_history
from deals.demo.management.commands.seed_demo import DEMO_LENDERS, DEMO_SEED, demo_markets
from deals.history.export import history_export
from deals.models import Deal
from lenders.models import Lender
from lev.accounts.services import account_create

# The day the bundled file was written for (its last day; seed_demo moves its days to end yesterday).
# Kept fixed, so the file only changes when the generator, the directory or the format does.
REFERENCE_DAY = dt.date(2026, 12, 1)


def write_demo_history_file(path: Path, *, reference_day: dt.date = REFERENCE_DAY) -> int:
    """The demo account's history, generated (deals.demo.history.seed_market_history: the default demo
    directory, seed and focus markets, up to noon of `reference_day`) in a scratch account and exported
    (deals.history.export) to `path`, with the bundled file's own choices: deal ids `demo-history-NNN`
    (the export's `lev-<id>` would follow database ids), no lender ids (the import matches names), and every
    deal archived and marked (`HISTORY_DESCRIPTION`) as the generator makes them. Everything is rolled back:
    the database is left as it was. Returns the rows written. CommandError when the database's demo
    directory is not the default one (its names would not be seed_demo's)."""
    with transaction.atomic():
        seed_directory(DEMO_LENDERS, seed=DEMO_SEED)
        lenders = Lender.objects.filter(category="demo", account__isnull=True).count()
        if lenders != DEMO_LENDERS:
            raise CommandError(f"The database's demo directory has {lenders} lenders, the default one "
                               f"{DEMO_LENDERS}: run this on a fresh database (docs/import-export.md).")
        account = account_create(name="Demo history file (scratch)")
        now = timezone.make_aware(dt.datetime.combine(reference_day, dt.time(12)))
        seed_market_history(account, seed=DEMO_SEED, focus=demo_markets(), now=now)
        deals = list(history_deals(account).order_by("pk"))
        for number, deal in enumerate(deals, start=1):
            deal.external_id = f"demo-history-{number:03d}"
        Deal.objects.bulk_update(deals, ["external_id"])
        with tempfile.TemporaryDirectory() as folder:
            exported = Path(folder) / "history.csv"
            history_export(account=account, path=exported)
            with exported.open(encoding="utf-8-sig", newline="") as file:
                reader = csv.DictReader(file)
                header, rows = list(reader.fieldnames or ()), list(reader)
        transaction.set_rollback(True)
    for row in rows:
        row["lender_id"] = ""
        row["description"] = row.get("description") or HISTORY_DESCRIPTION
        row["deal_archived"] = row.get("deal_archived") or "yes"
    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


class Command(BaseCommand):
    help = ("Write the demo history seed_demo imports (deals/demo/history.csv) again: the generator's history "
            "of the default demo directory (deals.demo.history), exported in the import's format. Run it on a "
            "fresh database (it seeds the default directory if missing and rolls everything back) after "
            "changing the generator, the demo directory or the format; the same code gives the same file.")

    def add_arguments(self, parser):
        parser.add_argument("--output", default=str(DEMO_HISTORY_FILE),
                            help="Where to write the file (default: the bundled deals/demo/history.csv).")
        parser.add_argument("--reference-day", type=dt.date.fromisoformat, default=REFERENCE_DAY,
                            help=f"The file's last day (default {REFERENCE_DAY.isoformat()}).")

    def handle(self, *args, **options):
        path = Path(options["output"])
        rows = write_demo_history_file(path, reference_day=options["reference_day"])
        self.stdout.write(f"{path}: {rows} rows written (up to {options['reference_day'].isoformat()}).")
