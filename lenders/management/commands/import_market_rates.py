"""manage.py import_market_rates <csv>: dated index rates from a CSV file, all or nothing."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from lenders.rates import services
from lenders.rates.csv_rows import INDEX_CHOICES, read_rows
from lev import limits

ERRORS_SHOWN = 50


class Command(BaseCommand):
    help = (
        "Import market rates from a CSV file with the header date,index,rate: date YYYY-MM-DD; index a key or a "
        f"name ({INDEX_CHOICES}); rate in percent per year (4.31, not 0.0431: a rate above 0 and below "
        f"{limits.RATE_PERCENT_FLOOR} is refused as a likely fraction). A date an index already has takes the "
        "new rate. All or nothing: any bad line is reported with its number and nothing is written (exit "
        "status 1). Reads only the file: no network."
    )

    def add_arguments(self, parser):
        parser.add_argument("csv", help="The CSV file (UTF-8).")
        parser.add_argument("--dry-run", action="store_true",
                            help="Check the file and say what would be created and updated; write nothing.")

    def handle(self, *args, **options):
        path = Path(options["csv"])
        try:
            with path.open(encoding="utf-8-sig", newline="") as file:
                rows, errors = read_rows(file)
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"Cannot read {path}: {exc}") from None
        if errors:
            for error in errors[:ERRORS_SHOWN]:
                self.stderr.write(f"{path.name}: {error}")
            more = f" (the first {ERRORS_SHOWN} shown)" if len(errors) > ERRORS_SHOWN else ""
            raise CommandError(f"{len(errors)} bad line(s){more}; nothing was imported.")
        if not rows:
            raise CommandError(f"{path.name} has a header but no rates; nothing was imported.")
        source = f"csv {path.name}"[: limits.MARKET_RATE_SOURCE_MAX]
        result = services.market_rates_import(rows=rows, source=source, dry_run=options["dry_run"])
        verb = "Would import" if options["dry_run"] else "Imported"
        self.stdout.write(f"{verb} {len(rows)} rate(s) from {path.name}: {result.created} created, "
                          f"{result.updated} updated, {result.unchanged} unchanged."
                          + (" Dry run: nothing was written." if options["dry_run"] else ""))
