"""manage.py import_history FILE --account SLUG [--dry-run] [--map "NAME=ID" ...] [--map-file FILE]"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from deals.history.errors import HistoryRefused, ImportBusy
from deals.history.lenders import parse_mapping
from deals.history.reader import TableError
from deals.history.services import ImportResult, history_import
from lev.accounts.models import Account

PROBLEMS_SHOWN = 50


class Command(BaseCommand):
    help = (
        "Import a deal team's history (deals, properties, financials, placements with their outcomes and dates, "
        "quotes) from a CSV or XLSX file in the format of docs/import-export.md (template: "
        "docs/examples/history-template.csv). All or nothing: any bad row is reported with its line and column "
        "and nothing is written; a lender name that matches no lender the account can place with (the directory's "
        "and its own), or several, is listed to be mapped with --map, or added as a lender of the account's own "
        "with --new-lender. Importing the same file again creates nothing (deals are keyed by deal_external_id)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="The history file: .csv (any common delimiter, UTF-8 or Excel's "
                                         "Windows-1252) or .xlsx.")
        parser.add_argument("--account", required=True, help="The slug of the account the history belongs to.")
        parser.add_argument("--dry-run", action="store_true",
                            help="Check the file and print what would be written, row by row; write nothing.")
        parser.add_argument("--map", action="append", default=[], metavar="NAME=LENDER_ID",
                            help='Map a lender name of the file to a directory lender by id, e.g. '
                                 '--map "JP Morgan=12". Repeatable.')
        parser.add_argument("--map-file", help="A text file of NAME=LENDER_ID lines (the same as --map).")
        parser.add_argument("--new-lender", action="append", default=[], metavar="NAME",
                            help='Add NAME as a lender of the account\'s own (one the directory lacks), with the '
                                 'import: the file\'s rows naming it are placed with it. Repeatable. A name the '
                                 'directory or the account already holds is refused: --map it instead.')
        parser.add_argument("--own-lenders", metavar="FILE",
                            help="The own lenders table of a CSV export (history.own-lenders.csv, written beside "
                                 "it by export_history): the team's own lenders and programs, added with the "
                                 "import. An XLSX export carries it as its second sheet, read without this.")

    def handle(self, *args, **options):
        account = Account.objects.filter(slug=options["account"]).first()
        if account is None:
            raise CommandError(f"No account has the slug {options['account']!r}.")
        items = list(options["map"])
        if options["map_file"]:
            try:
                with Path(options["map_file"]).open(encoding="utf-8-sig") as file:
                    items += [line.strip() for line in file if line.strip() and not line.startswith("#")]
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(f"Cannot read the mapping file {options['map_file']}: {exc}") from None
        try:
            mapping = parse_mapping(items)
        except ValueError as exc:
            raise CommandError(f"--map: {exc}") from None
        path = Path(options["file"])
        dry_run = options["dry_run"]
        try:
            result = history_import(account=account, path=path, mapping=mapping, dry_run=dry_run,
                                    on_plan=self.stdout.write, new_lenders=options["new_lender"],
                                    own_lenders_path=Path(options["own_lenders"]) if options["own_lenders"] else None)
        except TableError as exc:
            raise CommandError(f"{path.name}: {exc}; nothing was imported.") from None
        except ImportBusy as exc:
            raise CommandError(str(exc)) from None
        except HistoryRefused as refused:
            self._refused(path, refused.result)
        self._summary(account, result)

    def _refused(self, path: Path, result: ImportResult) -> None:
        for problem in result.problems[:PROBLEMS_SHOWN]:
            self.stderr.write(f"{path.name}: {problem}")
        for resolution, line, count in result.unresolved:
            seen = ", ".join(f"{name} (id {pk})" for pk, name in resolution.candidates)
            self.stderr.write(f'{path.name}: line {line}, column lender: "{resolution.name}" ({count} row(s)) '
                              + (f"matches more than one lender or none closely: {seen}" if seen
                                 else "matches no lender")
                              + f'; map it: --map "{resolution.name}=<lender id>", or add it as your own: '
                              f'--new-lender "{resolution.name}"')
        parts = []
        if result.problems_total:
            more = f", the first {PROBLEMS_SHOWN} shown" if result.problems_total > PROBLEMS_SHOWN else ""
            parts.append(f"{result.problems_total} bad row(s){more}")
        if result.unresolved:
            parts.append(f"{len(result.unresolved)} lender name(s) to map")
        raise CommandError(f"{path.name}: " + " and ".join(parts) + "; nothing was imported.")

    def _summary(self, account, result: ImportResult) -> None:
        fuzzy = [r for r in result.lenders.values() if r.how.startswith("fuzzy")]
        for resolution in fuzzy:
            self.stdout.write(f'Lender "{resolution.name}" read as {resolution.lender_name} '
                              f"(lender {resolution.lender_id}, {resolution.how}); --map it to change that.")
        verb = "Would import" if result.dry_run else "Imported"
        if result.new_lenders:
            self.stdout.write(("Would add" if result.dry_run else "Added") + " as lenders of the account's own: "
                              + ", ".join(result.new_lenders) + ".")
        if result.own_programs:
            self.stdout.write(("Would add" if result.dry_run else "Added") + f" {result.own_programs} program(s) of "
                              "the account's own.")
        read_as = f" ({result.encoding})" if result.encoding else ""
        self.stdout.write(
            f"{verb} into {account.slug} from {result.file_name}{read_as}: {result.rows} row(s) read; "
            f"{result.deals} new deal(s), {result.properties} propert(ies), {result.placements} placement(s), "
            f"{result.term_sheets} quote(s), {result.won} won; {result.deals_existing} deal(s) already in the "
            f"account ({result.rows_skipped} row(s) skipped)."
            + (" Dry run: nothing was written." if result.dry_run else ""))
