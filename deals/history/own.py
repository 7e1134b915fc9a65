"""The team's own lenders and programs in a history file, out and back in (issue 38; docs/import-export.md,
"The team's own lenders").

Two parts:

* **the history rows**: a placement with an own lender says `lender_own` yes and gives the lender by its
  name alone (its id is the account's and means nothing to another). On import such a row is matched by
  its exact name (case and spacing aside) among the importing account's own lenders, never fuzzily to a
  directory lender; when the account has none of that name, one is added as its own, in the import's
  transaction (`OwnLenders.resolve`), and reported in the result's `new_lenders`. A name the directory
  already holds is refused as `--new-lender` refuses it, naming the lender to `--map` to.
* **the own lenders table** (`OWN_KEYS`): every own lender of the account (its details) and every own
  program, on its own lender or on a directory lender, one row per program (an own lender without a
  program: one row alone). XLSX: the workbook's second sheet, `OWN_SHEET`; CSV: a companion file
  (`companion_path`), given to the import with `--own-lenders`. Read before the history rows
  (`own_table_import`), so the lenders it adds carry their details; each lender and program is checked
  by the REST API's own input serializers (one rule for every door), and one already in the account
  (a lender of the same name, a program of the same title on the same lender) is left as it is: a
  re-import adds nothing.

Tenancy: only the exporting account's own lenders and programs are written, and an import adds them to
the importing account alone; another account never sees them except through the file its user carries.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from deals.history.columns import YES
from deals.history.lenders import LenderMatcher, Resolution
from deals.history.reader import TableError, read_sheet, read_table
from lev import limits

OWN_SHEET = "Own lenders"
LENDER_DETAIL_KEYS = ("website", "city", "state", "about", "lender_types")
PROGRAM_KEYS = ("loan_types", "recourse_types", "min_loan_amount", "max_loan_amount", "capital_source_type",
                "positions", "sponsor_states", "asset_types", "max_ltv", "min_dscr", "rate_type", "rate_index",
                "spread_min_bps", "spread_max_bps", "fixed_rate_min", "fixed_rate_max", "term_months_min",
                "term_months_max", "amortization_years", "interest_only_months", "min_debt_yield")
LIST_KEYS = ("lender_types", "loan_types", "recourse_types", "positions", "sponsor_states", "asset_types")
# The own lenders table's columns, in the order the export writes them.
OWN_KEYS = ("lender", "lender_own", "lender_id", *LENDER_DETAIL_KEYS, "program_title", "program_status",
            *PROGRAM_KEYS)
_REQUIRED = ("lender", "lender_own")


def companion_path(path: Path) -> Path:
    """Where a CSV export writes its own lenders table: `history.csv` -> `history.own-lenders.csv`."""
    return path.with_name(f"{path.stem}.own-lenders{path.suffix}")


def _key(name: str) -> str:
    return " ".join(name.lower().split())


# --- export ------------------------------------------------------------------------------------------------
def has_own(account) -> bool:
    from lenders.models import Lender, LenderProgram

    return (Lender.objects.filter(account=account).exists()
            or LenderProgram.objects.filter(account=account).exists())


def own_rows(account) -> Iterator[dict[str, Any]]:
    """The account's own lenders and programs as rows of the own lenders table (OWN_KEYS): its own lenders
    by name (with their details), then the directory lenders it added programs to."""
    from lenders.models import Lender, LenderProgram

    programs: dict[int, list[dict]] = {}
    for program in LenderProgram.objects.filter(account=account).order_by("lender_id", "pk").values(
            "lender_id", "title", "status", *PROGRAM_KEYS):
        programs.setdefault(program["lender_id"], []).append(program)
    lenders = Lender.objects.filter(account=account).order_by("name", "pk").values("pk", "name", *LENDER_DETAIL_KEYS)
    for lender in lenders:
        base = {"lender": lender["name"], "lender_own": "yes",
                **{k: _cell(lender[k]) for k in LENDER_DETAIL_KEYS}}
        for program in programs.pop(lender["pk"], None) or [None]:
            yield {**base, **_program_cells(program)}
    directory = dict(Lender.objects.filter(pk__in=list(programs), account=None).values_list("pk", "name"))
    for lender_id in sorted(programs, key=lambda pk: (directory.get(pk, ""), pk)):
        if lender_id not in directory:
            continue  # an own program on another account's lender cannot be (lenders.services refuses it)
        for program in programs[lender_id]:
            yield {"lender": directory[lender_id], "lender_own": "", "lender_id": lender_id,
                   **_program_cells(program)}


def _program_cells(program: dict | None) -> dict[str, Any]:
    if program is None:
        return {}
    return {"program_title": program["title"], "program_status": program["status"],
            **{k: _cell(program[k]) for k in PROGRAM_KEYS}}


def _cell(value: Any) -> Any:
    if isinstance(value, list):
        return ", ".join(value)
    return None if value == "" else value


# --- import ------------------------------------------------------------------------------------------------
class OwnLenders:
    """The account's own lenders by name for one import, adding those the file names and the account
    lacks (in the import's transaction: a dry run or a refused import rolls them back)."""

    def __init__(self, account, matcher: LenderMatcher) -> None:
        from lenders.models import Lender

        self.account, self.matcher = account, matcher
        self.by_name = {_key(name): (pk, name) for pk, name in
                        Lender.objects.filter(account=account).values_list("pk", "name")}
        self.added: list[str] = []
        self.refused: set[str] = set()

    def resolve(self, name: str, line: int, column: str = "lender", details: dict | None = None) -> Resolution | None:
        """The own lender `name` names (added when the account lacks it); None for a name already refused
        (its first line says why). Raises TableError for a name the directory holds, or details refused."""
        key = _key(name)
        if key in self.matcher.mapping:
            return self.matcher.resolve(name)  # the user's --map wins, as for every name
        found = self.by_name.get(key)
        if found is not None:
            how = "new lender of your own" if found[1] in self.added else "exact"
            return Resolution(name, found[0], found[1], how)
        if key in self.refused:
            return None
        try:
            return self._add(name, line, column, details or {})
        except TableError:
            self.refused.add(key)
            raise

    def _add(self, name: str, line: int, column: str, details: dict) -> Resolution:
        from lenders.serializers import LenderInputSerializer
        from lenders.services import lender_create, name_holder
        from lev.errors import Conflict

        held = name_holder(account_id=self.account.pk, name=name)
        if held is not None:
            raise TableError(f'"{name}" is marked as your own lender, but {held[1]}; map the name to it with '
                             f'--map "{name}={held[0]}"', line=line, column=column)
        data = _validated(LenderInputSerializer, {"name": name, **details}, line)
        try:
            lender = lender_create(account=self.account, data=data)
        except Conflict as conflict:  # another door added the name meanwhile
            raise TableError(f'"{name}": {conflict}', line=line, column=column) from None
        self.by_name[_key(name)] = (lender.pk, lender.name)
        self.added.append(lender.name)
        self.matcher.add(lender.pk, lender.name, new=True)
        return Resolution(name, lender.pk, lender.name, "new lender of your own")


def _validated(serializer_class, data: dict[str, Any], line: int) -> dict[str, Any]:
    """`data` checked by the REST API's input serializer; TableError naming the first field refused."""
    serializer = serializer_class(data=data)
    if serializer.is_valid():
        return dict(serializer.validated_data)
    field, messages = next(iter(serializer.errors.items()))
    message = messages[0] if isinstance(messages, list) else next(iter(messages.values()))[0]
    raise TableError(str(message), line=line, column=_OWN_COLUMN.get(field, field))


_OWN_COLUMN = {"name": "lender", "title": "program_title", "status": "program_status"}


def own_table(path: Path, own_path: Path | None) -> Iterator[tuple[int, dict[str, Any]]] | None:
    """The own lenders table to import with the history file at `path`: `own_path` (a CSV companion)
    when given, else an XLSX workbook's sheet `OWN_SHEET` when it has one; None when there is none.
    Rows as (line, {column: value}) for the columns of OWN_KEYS the header names."""
    try:
        table = read_table(own_path) if own_path is not None else read_sheet(path, OWN_SHEET)
    except TableError as exc:
        raise TableError(f"the own lenders table: {exc.message}", line=exc.line, column=exc.column) from None
    if table is None:
        return None
    at: dict[str, int] = {}
    for index, name in enumerate(table.header):
        key = "_".join(name.strip().lower().lstrip("\ufeff").replace("-", " ").split())
        if key in OWN_KEYS:
            if key in at:
                raise TableError(f'the own lenders table names the column "{key}" twice', line=1, column=name)
            at[key] = index
    missing = [k for k in _REQUIRED if k not in at]
    if missing:
        raise TableError("the own lenders table lacks the column" + ("s " if len(missing) > 1 else " ")
                         + ", ".join(missing), line=1)

    def rows() -> Iterator[tuple[int, dict[str, Any]]]:
        for line, values in table.rows:
            cells = {}
            for key, index in at.items():
                value = values[index] if index < len(values) else None
                if isinstance(value, str):
                    value = value.strip()
                    if value.startswith(("'=", "'+", "'-", "'@")):  # written inert by an export
                        value = value[1:]
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                if isinstance(value, dt.datetime | dt.date):
                    value = value.isoformat()
                if value not in (None, ""):
                    cells[key] = value
            yield line, cells

    return rows()


def own_table_import(*, account, rows: Iterator[tuple[int, dict[str, Any]]], own: OwnLenders,
                     problem: Callable[[TableError], None]) -> int:
    """The own lenders table's rows added to `account`: its own lenders (with their details) and its
    own programs (on them or on directory lenders); what the account has already is left as it is.
    Each refused row goes to `problem`. Returns the number of programs added."""
    from lenders.models import Lender, LenderProgram
    from lenders.serializers import LenderProgramInputSerializer
    from lenders.services import program_create
    from lev.errors import ValidationFailed

    titles = {(lender_id, _key(title)) for lender_id, title in
              LenderProgram.objects.filter(account=account).values_list("lender_id", "title")}
    added = 0
    for line, cells in rows:
        try:
            lender_id = _table_lender(line, cells, own)
            if lender_id is None or "program_title" not in cells:
                continue
            title = str(cells["program_title"])
            if (lender_id, _key(title)) in titles:
                continue
            data = {"title": title, **{k: _list(cells[k]) if k in LIST_KEYS else cells[k]
                                       for k in PROGRAM_KEYS if k in cells}}
            if "program_status" in cells:
                data["status"] = cells["program_status"]
            values = _validated(LenderProgramInputSerializer, data, line)
            try:
                program_create(account=account, lender=Lender.objects.get(pk=lender_id), data=values)
            except ValidationFailed as refused:
                fields = refused.details.get("fields", {}) if isinstance(refused.details, dict) else {}
                field, messages = next(iter(fields.items()), ("program_title", [str(refused)]))
                raise TableError(str(messages[0]), line=line, column=_OWN_COLUMN.get(field, field)) from None
            titles.add((lender_id, _key(title)))
            added += 1
        except TableError as refused_row:
            problem(TableError(f"{refused_row.message} (the own lenders table)", line=refused_row.line,
                               column=refused_row.column))
    return added


def _table_lender(line: int, cells: dict[str, Any], own: OwnLenders) -> int | None:
    name = str(cells.get("lender", ""))
    if not name:
        raise TableError("is required: the lender's name", line=line, column="lender")
    if len(name) > limits.LENDER_NAME_MAX:
        raise TableError(f"is longer than {limits.LENDER_NAME_MAX} characters", line=line, column="lender")
    if str(cells.get("lender_own", "")).lower() in YES:
        details = {k: _list(cells[k]) if k in LIST_KEYS else cells[k] for k in LENDER_DETAIL_KEYS if k in cells}
        resolution = own.resolve(name, line, details=details)
        return None if resolution is None else resolution.lender_id
    # A directory lender the account added programs to: by its id when the directory has it, else by name.
    matcher = own.matcher
    lender_id = cells.get("lender_id")
    if isinstance(lender_id, int | str) and str(lender_id).isdigit() and int(lender_id) in matcher.directory:
        return int(lender_id)
    resolution = matcher.resolve(name)
    if resolution.lender_id is None or resolution.lender_id not in matcher.directory:
        close = ", ".join(f"{n} (lender {pk})" for pk, n in resolution.candidates) or "none close"
        raise TableError(f'no directory lender matches "{name}" (closest: {close}); --map it, or say lender_own '
                         "yes to add it as your own", line=line, column="lender")
    return resolution.lender_id


def _list(value: Any) -> list[str]:
    return [part.strip() for part in str(value).replace(";", ",").split(",") if part.strip()]


