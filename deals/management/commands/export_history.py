"""manage.py export_history --account SLUG --output FILE (.csv or .xlsx)"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from deals.history.export import history_export
from lev.accounts.models import Account


class Command(BaseCommand):
    help = ("Export an account's deals, properties, financials, placements (outcomes and dates) and quotes to a "
            "CSV or XLSX file in the format manage.py import_history reads (docs/import-export.md): importing "
            "the file into an empty account gives the same history. The account's own lenders and programs go "
            "with it (an XLSX's second sheet; beside a CSV, NAME.own-lenders.csv). Formula-like cells are "
            "written inert.")

    def add_arguments(self, parser):
        parser.add_argument("--account", required=True, help="The slug of the account to export.")
        parser.add_argument("--output", required=True, help="The file to write: its suffix, .csv or .xlsx, "
                                                            "chooses the format.")

    def handle(self, *args, **options):
        account = Account.objects.filter(slug=options["account"]).first()
        if account is None:
            raise CommandError(f"No account has the slug {options['account']!r}.")
        path = Path(options["output"])
        if path.suffix.lower() not in (".csv", ".xlsx"):
            raise CommandError(f"{path.name}: the output must end in .csv or .xlsx.")
        try:
            stats = history_export(account=account, path=path)
        except OSError as exc:
            raise CommandError(f"Cannot write {path}: {exc.strerror or exc}") from None
        self.stdout.write(f"Exported {account.slug}: {stats.deals} deal(s), {stats.rows} row(s) to {path}.")
        if stats.companion is not None:
            self.stdout.write(f"Its own lenders and programs ({stats.own_rows} row(s)) to {stats.companion}: import "
                              f"them with --own-lenders {stats.companion}.")
