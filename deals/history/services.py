"""Importing an account's history file (deals, their properties and financials, placements with their
outcomes and dates, quotes) — all or nothing, once, one import of an account at a time.

`history_import` reads the file once, streaming, in two passes (memory holds per-deal keys, never the rows):

1. check: every row parsed (`deals.history.columns`), the deal's fields the same on each of its rows,
   its stage known, each lender resolved (`deals.history.lenders`), no lender twice on one deal, at most
   one winner per deal. Any problem, or any lender name to map, refuses the whole file (`HistoryRefused`)
   with every problem's line and column (the first `PROBLEMS_KEPT`).
2. write (or, on a dry run, say per row what would be written): deals, properties, financials,
   placements and term sheets in batches (`bulk_create`), in the one transaction the check ran in,
   from the rows pass 1 parsed and spilled to a temporary file (not the upload read and parsed again).

Nothing twice: a deal is keyed by its `deal_external_id` in the account (`Deal.external_id`, unique per
account); the rows of a deal the account already has are skipped, so importing a file again creates
nothing. One at a time: the transaction holds a PostgreSQL advisory lock for the account
(`pg_try_advisory_xact_lock`); a second import of the same account is refused at once (`ImportBusy`), an
import of another account runs beside it. (SQLite takes one writer at a time anyway.) Only the account's
own deals are read or written; lenders are the directory's.

The imported records carry their real dates: a placement's sent_at, first_response_at and decided_at, a
quote's received_at, so the lender signals (deals.searches.ranking.evidence, refreshed after an apply)
learn from them exactly as from outcomes recorded in the product, and a deal's timeline reads them from
those timestamps (they are written without history rows, as a history predating the product is: the
timeline's "written before its history was kept" path), with a note on each deal saying it was imported.
"""

from __future__ import annotations

import datetime as dt
import pickle
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from django.db import connection, transaction
from django.utils import timezone

from deals.history.columns import OUTCOME_OF_STATUS, HistoryRow, parse_row, read_header
from deals.history.errors import HistoryRefused, ImportBusy
from deals.history.lenders import LenderMatcher, Resolution
from deals.history.own import OwnLenders, own_table, own_table_import
from deals.history.reader import Table, TableError, read_table
from deals.models import Deal, DealFinancials, DealProperty
from deals.notes.models import Note
from deals.pipeline.models import Stage
from deals.placements.models import Placement, TermSheet
from deals.placements.workflow import DECIDED_STATUSES
from deals.searches import signals
from lev import limits
from lev.enums import RATE_INDEX_NAMES
from lev.formatting import money

PROBLEMS_KEPT = 200
BATCH_ROWS = 2000
PROGRESS_ROWS = 1000  # pass 1 reports its progress every this many rows (pass 2: after each batch)
# pg_try_advisory_xact_lock's key: this namespace in the high 32 bits, the account's id in the low ones.
LOCK_NAMESPACE = 0x4C485349  # "LHSI": Lev history import
IMPORTED_NOTE = "Imported from the history file {name} (line {line})."


@dataclass
class ImportResult:
    """What an import read, and wrote or would write."""

    file_name: str
    kind: str = ""
    new_lenders: list[str] = field(default_factory=list)  # added as the account's own (--new-lender, lender_own)
    own_programs: int = 0  # programs added as the account's own (the own lenders table: deals.history.own)
    encoding: str = ""
    rows: int = 0
    deals: int = 0  # new deals
    deals_existing: int = 0  # already in the account (by external id): their rows are skipped
    rows_skipped: int = 0
    properties: int = 0
    financials: int = 0
    placements: int = 0
    term_sheets: int = 0
    won: int = 0
    lenders: dict[str, Resolution] = field(default_factory=dict)  # every name read, resolved
    unresolved: list[tuple[Resolution, int, int]] = field(default_factory=list)  # (name, first line, rows)
    problems: list[TableError] = field(default_factory=list)
    problems_total: int = 0
    rows_refused: int = 0  # rows with at least one problem
    last_problem_line: int | None = field(default=None, repr=False)
    dry_run: bool = True

    @property
    def refused(self) -> bool:
        return bool(self.problems_total or self.unresolved)


def _noon(day: dt.date | None) -> dt.datetime | None:
    """A day of the file as a moment: noon, local time (the quote form's rule for a quote's day)."""
    return None if day is None else timezone.make_aware(dt.datetime.combine(day, dt.time(12)))


def _lock(account) -> None:
    if connection.vendor != "postgresql":
        return  # SQLite: one writer at a time
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [(LOCK_NAMESPACE << 32) | (account.pk & 0xFFFFFFFF)])
        if not cursor.fetchone()[0]:
            raise ImportBusy(account)


def _rows(table: Table, at: dict[str, int], today: dt.date) -> Iterator[HistoryRow | TableError]:
    for line, values in table.rows:
        try:
            yield parse_row(line, values, at, table.header, today)
        except TableError as problem:
            yield problem


class _Stages:
    def __init__(self, account) -> None:
        self.by_name: dict[str, int] = {}
        for pk, key, name in Stage.objects.filter(account=account).values_list("pk", "key", "name"):
            self.by_name[name.strip().lower()] = pk
            if key:
                self.by_name.setdefault(key, pk)

    def get(self, text: str) -> int | None:
        return self.by_name.get(" ".join(text.lower().split())) or self.by_name.get(text.strip().lower())


def history_import(*, account, path: Path, mapping: dict[str, int] | None = None, dry_run: bool = False,
                   user=None, on_plan: Callable[[str], None] | None = None, today: dt.date | None = None,
                   new_lenders: list[str] | None = None, own_lenders_path: Path | None = None,
                   file_name: str | None = None,
                   on_progress: Callable[[dict[str, int]], None] | None = None) -> ImportResult:
    """Import the history file at `path` into `account` (module docstring). Raises TableError for a file
    that cannot be read at all (kind, encoding, header) or a `new_lenders` name already held, HistoryRefused
    for bad rows or names to map, ImportBusy when another import of the account runs; otherwise returns
    what was (or, with `dry_run`, would be) written, calling `on_plan` with one line per row on a dry run.
    `new_lenders`: names the user asks to add as lenders of the account's own (the file's rows then match
    them by name), added in the same transaction as the rows: with them, or not at all. The team's own
    lenders and programs the file carries (rows with `lender_own` yes; the own lenders table: an XLSX's
    second sheet, or the CSV companion at `own_lenders_path`) are added alike (deals.history.own).
    `file_name`: the name the user gave the file (the imported deals' notes say it), when `path` is a
    stored copy. `on_progress` is called with the figures so far ({"rows_read", "rows_refused"} during
    pass 1; {"deals_created", "placements_created", "term_sheets_created"} after each batch of pass 2):
    inside the import's transaction, so whatever it publishes must go outside it (deals.history.jobs)."""
    today = today or timezone.localdate()
    result = ImportResult(file_name=file_name or path.name, dry_run=dry_run)
    with transaction.atomic():
        _lock(account)
        existing = set(Deal.objects.filter(account=account).exclude(external_id="")
                       .values_list("external_id", flat=True))
        added = _add_own_lenders(account, new_lenders or [])
        result.new_lenders = [name for _pk, name in added]
        matcher = LenderMatcher.for_account(account, mapping, new_ids={pk for pk, _name in added})
        for name, lender_id in (mapping or {}).items():
            if lender_id not in matcher.lenders:
                raise TableError(f'the mapping "{name}={lender_id}" names no lender this account can place with')
        stages = _Stages(account)
        own = OwnLenders(account, matcher)
        own_rows = own_table(path, own_lenders_path)
        if own_rows is not None:
            result.own_programs = own_table_import(account=account, rows=own_rows, own=own,
                                                   problem=lambda problem: _problem(result, problem))
        with tempfile.TemporaryFile() as spill:
            lender_of = _check(account, path, result, existing, matcher, stages, today, spill, own, on_progress)
            result.new_lenders += own.added
            if result.refused:
                raise HistoryRefused(result)
            spill.seek(0)
            _write(account, result, existing, lender_of, stages, spill, user=user, dry_run=dry_run,
                   on_plan=on_plan, on_progress=on_progress)
        if dry_run:
            transaction.set_rollback(True)  # a dry run's new own lenders were for the plan's names only
        elif result.placements:
            signals.schedule_refresh()  # the ranking learns from the imported outcomes (after commit)
    return result


def _add_own_lenders(account, names: list[str]) -> list[tuple[int, str]]:
    """The user's `--new-lender` names added as the account's own lenders, as lenders.services adds
    one: a name the directory or the account already holds is refused, naming that lender (map to it)."""
    from lenders.services import lender_create, name_holder

    added: list[tuple[int, str]] = []
    seen: set[str] = set()
    for raw in names:
        name = " ".join(raw.split())
        if not name or len(name) > limits.LENDER_NAME_MAX:
            raise TableError(f'--new-lender "{raw[:80]}": a lender\'s name has 1 to {limits.LENDER_NAME_MAX} '
                             "characters")
        if name.lower() in seen:
            continue
        seen.add(name.lower())
        held = name_holder(account_id=account.pk, name=name)
        if held is not None:
            raise TableError(f'--new-lender "{name}": {held[1]}; map the name to it with --map "{name}={held[0]}"')
        added.append((lender_create(account=account, data={"name": name}).pk, name))
    return added


def _problem(result: ImportResult, problem: TableError) -> None:
    # Problems come in the file's order (pass 1): a line other than the last problem's is a newly refused row.
    if not result.problems_total or problem.line != result.last_problem_line:
        result.rows_refused += 1
    result.last_problem_line = problem.line
    result.problems_total += 1
    if len(result.problems) < PROBLEMS_KEPT:
        result.problems.append(problem)


def _lender(row: HistoryRow, matcher: LenderMatcher) -> Resolution:
    return matcher.by_id(row.lender_id) if row.lender_id is not None else matcher.resolve(row.lender_name)


def _check(account, path: Path, result: ImportResult, existing: set[str], matcher: LenderMatcher,
           stages: _Stages, today: dt.date, spill: BinaryIO, own: OwnLenders,
           on_progress: Callable[[dict[str, int]], None] | None = None) -> dict[str, int]:
    """Pass 1: every row checked; returns each lender name's (or id's) lender id. The rows read are
    spilled to `spill` (a temporary file) while no problem is found, for pass 2 to write without
    reading and parsing the file again."""
    table = read_table(path)
    at = read_header(table.header)
    result.kind, result.encoding = table.kind, table.encoding
    deals: dict[str, tuple[int, tuple]] = {}  # external id -> (first line, its fields)
    pairs: set[tuple[str, int]] = set()
    winners: dict[str, int] = {}
    unresolved: dict[str, list] = {}
    lender_of: dict[str, int] = {}
    for row in _rows(table, at, today):
        if on_progress is not None and result.rows and result.rows % PROGRESS_ROWS == 0:
            on_progress({"rows_read": result.rows, "rows_refused": result.rows_refused})
        if isinstance(row, TableError):
            result.rows += 1
            _problem(result, row)
            continue
        result.rows += 1
        if not result.problems_total:
            pickle.dump(row, spill, protocol=pickle.HIGHEST_PROTOCOL)
        fields = (*(row.deal[k] for k in row.deal), row.stage)
        first = deals.get(row.external_id)
        if first is None:
            deals[row.external_id] = (row.line, fields)
            if row.external_id in existing:
                result.deals_existing += 1
            else:
                result.deals += 1
                result.properties += 1 if _has_property(row) else 0
                result.financials += 1
            if row.stage and stages.get(row.stage) is None:
                _problem(result, TableError(f'"{row.stage}" is not a stage of this account', line=row.line,
                                            column="stage"))
        elif first[1] != fields:
            index = next(i for i, (a, b) in enumerate(zip(first[1], fields, strict=True)) if a != b)
            column = [*row.deal, "stage"][index]
            _problem(result, TableError(f"the deal {row.external_id} says otherwise on line {first[0]}: a deal's "
                                        "fields must be the same on each of its rows", line=row.line,
                                        column=_deal_column(column)))
        if row.external_id in existing:
            result.rows_skipped += 1
        if not row.has_placement:
            continue
        if row.lender_own and row.lender_id is None:  # the team's own: by its exact name, or added
            try:
                resolution = own.resolve(row.lender_name, row.line)
            except TableError as problem:
                _problem(result, problem)
                continue
            if resolution is None:
                continue  # a name refused on its first line
        else:
            resolution = _lender(row, matcher)
        key = str(row.lender_id) if row.lender_id is not None else row.lender_name
        result.lenders.setdefault(key, resolution)
        if resolution.lender_id is None:
            if row.lender_id is not None:
                _problem(result, TableError(f"no lender has the id {row.lender_id}", line=row.line,
                                            column="lender_id"))
            else:
                entry = unresolved.setdefault(row.lender_name, [resolution, row.line, 0])
                entry[2] += 1
            continue
        lender_of[key] = resolution.lender_id
        pair = (row.external_id, resolution.lender_id)
        if pair in pairs:
            _problem(result, TableError(f"{resolution.lender_name} is already placed on the deal {row.external_id} "
                                        "by an earlier row (one row per deal and lender)", line=row.line,
                                        column="lender"))
        pairs.add(pair)
        if row.status == "won":
            if row.external_id in winners:
                _problem(result, TableError(f"the deal {row.external_id} already has its winner on line "
                                            f"{winners[row.external_id]}", line=row.line, column="outcome"))
            winners.setdefault(row.external_id, row.line)
        if row.external_id not in existing:
            result.placements += 1
            result.term_sheets += 1 if row.quote else 0
            result.won += 1 if row.status == "won" else 0
    if not result.rows:
        raise TableError("the file has its header but no rows")
    if on_progress is not None:
        on_progress({"rows_read": result.rows, "rows_refused": result.rows_refused})
    result.unresolved = [tuple(v) for v in unresolved.values()]
    return lender_of


_DEAL_COLUMN = {"title": "deal_title", "estimated_close_date": "close_date", "square_footage": "square_feet",
                "in_place_noi": "noi", "estimated_value": "value", "archived": "deal_archived"}


def _deal_column(key: str) -> str:
    return _DEAL_COLUMN.get(key, key)


def _has_property(row: HistoryRow) -> bool:
    deal = row.deal
    return any(deal[k] not in ("", None) for k in ("property_name", "state", "asset_type", "units",
                                                   "square_footage"))


def _spilled(spill: BinaryIO) -> Iterator[HistoryRow]:
    while True:
        try:
            yield pickle.load(spill)  # this import's own temporary file, written by _check
        except EOFError:
            return


def _write(account, result: ImportResult, existing: set[str], lender_of: dict[str, int],
           stages: _Stages, spill: BinaryIO, *, user, dry_run: bool, on_plan, on_progress=None) -> None:
    """Pass 2: the rows again (as pass 1 read them), written in batches (or, on a dry run, each row's
    plan said)."""
    made: dict[str, int] = {}  # external id -> the new deal's id
    batch: list[HistoryRow] = []
    author = user if getattr(user, "pk", None) else None
    written = {"deals_created": 0, "placements_created": 0, "term_sheets_created": 0}

    def flush() -> None:
        for key, count in zip(written, _flush(account, batch, made, lender_of, stages, author, result.file_name),
                              strict=True):
            written[key] += count
        if on_progress is not None:
            on_progress(dict(written))

    for row in _spilled(spill):
        if dry_run:
            if on_plan is not None:
                on_plan(_plan_line(row, existing, made, result))
            made.setdefault(row.external_id, 0)
            continue
        if row.external_id in existing:
            continue
        batch.append(row)
        if len(batch) >= BATCH_ROWS:
            flush()
            batch = []
    if batch and not dry_run:
        flush()


def _plan_line(row: HistoryRow, existing: set[str], made: dict[str, int], result: ImportResult) -> str:
    head = f"line {row.line}: deal {row.external_id}"
    if row.external_id in existing:
        return head + " is already in the account: skipped"
    head += f' "{row.deal["title"]}"' + (" (new)" if row.external_id not in made else "")
    if not row.has_placement:
        return head + ", not placed"
    key = str(row.lender_id) if row.lender_id is not None else row.lender_name
    resolution = result.lenders[key]
    how = "" if resolution.how in ("exact", "id") else f', {resolution.how} from "{resolution.name}"'
    text = f"{head} -> {resolution.lender_name} (lender {resolution.lender_id}{how}): {OUTCOME_OF_STATUS[row.status]}"
    if row.sent_on:
        text += f", sent {row.sent_on.isoformat()}"
    if row.quote:
        quote = row.quote
        rate = (f"{quote.fixed_rate.normalize():f}% fixed" if quote.rate_type == "fixed"
                else f"{RATE_INDEX_NAMES[quote.rate_index]} + {quote.spread_bps} bps")
        text += f", quote {money(quote.loan_amount)} at {rate}"
    return text


def _flush(account, rows: list[HistoryRow], made: dict[str, int], lender_of: dict[str, int], stages: _Stages,
           author, file_name: str) -> tuple[int, int, int]:
    """One batch written; returns the deals, placements and term sheets it created."""
    new_rows: dict[str, HistoryRow] = {}
    for row in rows:
        if row.external_id not in made and row.external_id not in new_rows:
            new_rows[row.external_id] = row
    if new_rows:
        deals = Deal.objects.bulk_create([_deal(account, row, stages, author) for row in new_rows.values()])
        for deal in deals:
            made[deal.external_id] = deal.pk
        DealProperty.objects.bulk_create([_property(made[ext], row) for ext, row in new_rows.items()
                                          if _has_property(row)])
        DealFinancials.objects.bulk_create([
            DealFinancials(deal_id=made[ext], in_place_noi=row.deal["in_place_noi"],
                           estimated_value=row.deal["estimated_value"])
            for ext, row in new_rows.items()])
        Note.objects.bulk_create([
            Note(account=account, author=author, kind="note", deal_id=made[ext],
                 body=IMPORTED_NOTE.format(name=file_name, line=row.line))
            for ext, row in new_rows.items()])
    placed = [row for row in rows if row.has_placement]
    placements = Placement.objects.bulk_create([_placement(row, made, lender_of, author) for row in placed])
    sheets = TermSheet.objects.bulk_create([
        _term_sheet(row, placement, author) for row, placement in zip(placed, placements, strict=True) if row.quote])
    return len(new_rows), len(placements), len(sheets)


def _deal(account, row: HistoryRow, stages: _Stages, author) -> Deal:
    deal = row.deal
    return Deal(account=account, external_id=row.external_id, title=deal["title"], loan_amount=deal["loan_amount"],
                loan_type=deal["loan_type"], transaction_type=deal["transaction_type"],
                business_plan=deal["business_plan"], estimated_close_date=deal["estimated_close_date"],
                description=deal["description"], archived=deal["archived"],
                archived_at=timezone.now() if deal["archived"] else None,
                stage_id=stages.get(row.stage) if row.stage else None, created_by=author)


def _property(deal_id: int, row: HistoryRow) -> DealProperty:
    deal = row.deal
    return DealProperty(deal_id=deal_id, name=deal["property_name"] or deal["title"][:200], state=deal["state"],
                        asset_type=deal["asset_type"], units=deal["units"], square_footage=deal["square_footage"])


def _placement(row: HistoryRow, made: dict[str, int], lender_of: dict[str, int], author) -> Placement:
    key = str(row.lender_id) if row.lender_id is not None else row.lender_name
    sent = _noon(row.sent_on)
    answered = _noon(row.answered_on)
    decided_day = row.decided_on or row.answered_on or row.sent_on
    placement = Placement(
        deal_id=made[row.external_id], lender_id=lender_of[key], status=row.status, sent_at=sent,
        first_response_at=answered if sent else None, decline_reason=row.decline_reason, created_by=author,
        created_at=sent or timezone.now(),
    )
    if row.status in DECIDED_STATUSES:
        placement.decided_at = _noon(decided_day)
    if row.status == "archived":
        placement.archived_at = _noon(decided_day) or timezone.now()
    if row.quote and placement.first_response_at is None and sent:
        placement.first_response_at = _noon(row.answered_on or decided_day)
    return placement


def _term_sheet(row: HistoryRow, placement: Placement, author) -> TermSheet:
    quote = row.quote
    received = placement.first_response_at or placement.sent_at or timezone.now()
    values: dict[str, Any] = {k: getattr(quote, k) for k in (
        "loan_amount", "rate_type", "fixed_rate", "rate_index", "spread_bps", "term_months", "amortization_months",
        "max_ltv", "min_dscr", "origination_fee_percent", "exit_fee_percent")}
    return TermSheet(placement=placement, deal_id=placement.deal_id, winning=row.status == "won",
                     received_at=received, created_at=received, created_by=author, **values)
