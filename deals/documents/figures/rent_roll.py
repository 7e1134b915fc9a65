"""A rent roll's figures: units, occupied units, occupancy and the in-place rent of the occupied units.

The header is found, not assumed (`find_header`): within the first `FIGURES_HEADER_ROWS` rows, the row
(or two rows read together, as Yardi writes "Actual" over "Rent") that names a unit column and an
in-place rent column, with the most other columns recognised (status, resident, market rent, square
feet). Report titles above it are skipped. Below it each row is one of:

* a unit: its unit cell holds a unit's name (101, "A-204", "Bldg 3 / 12");
* a section label ("Current/Notice/Vacant Residents", "Building A"), never with a rent: skipped; the Yardi
  section "Future Residents/Applicants" is skipped whole (its units are listed above already);
* a total or subtotal ("Total", "Grand Total", "Subtotal Building A"): skipped; "Summary" ends the roll;
* anything else with an amount but no unit: a problem named with its row.

A unit is vacant when its status says so ("Vacant", "Vacant-Leased", "Vacant-Unrented"), or, without a
status column, when its resident says VACANT or is empty; "Model", "Down", "Admin" are units, not
occupied. The in-place rent is the sum of the occupied units' rent (the "Actual", "Lease", "Current" or
plain "Rent" column, never the market rent). Every cell that cannot be read is a problem with its row,
and the unit is still counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from deals.documents.figures.cells import NotAnAmount, amount, is_total, money, shown, text, words
from deals.documents.figures.grid import Grid
from lev import limits

# Each role's header words (as cells.words writes them), best first.
ROLES: dict[str, tuple[str, ...]] = {
    "unit": ("unit", "unit #", "unit no", "unit number", "unit id", "bldg/unit", "bldg unit", "apt", "apt #",
             "apartment", "unit name", "space", "suite", "door"),
    "rent": ("actual rent", "lease rent", "current rent", "contract rent", "in place rent", "effective rent",
             "charged rent", "scheduled rent", "monthly rent", "rent amount", "actual", "rent", "rent $",
             "monthly rent $"),
    "market": ("market rent", "market", "market + addl", "market addl", "asking rent", "market rent $"),
    "status": ("unit/lease status", "unit status", "lease status", "status", "occupancy", "occupancy status",
               "occupied/vacant"),
    "tenant": ("resident", "name", "tenant", "tenant name", "resident name", "lessee", "occupant", "residents"),
    "sqft": ("unit sq ft", "sq ft", "sqft", "square feet", "sf", "size", "area", "rentable sf"),
    "type": ("unit type", "floorplan", "floor plan", "bd/ba", "type", "beds/baths", "unit designation"),
    "lease_end": ("lease expiration", "lease end", "lease to", "expiration", "lease exp", "end date"),
}
LOOKED_FOR = ("a unit column (Unit, Unit #, Bldg/Unit, Apt) and an in-place rent column (Actual Rent, Lease Rent, "
              "Current Rent, Monthly Rent, Rent)")
_VACANT = ("unrented", "unleased", "empty", "available")
_NOT_OCCUPIED = ("model", "down", "admin", "non rev", "non-rev", "nonrev", "office", "offline")
_OCCUPIED = ("occupied", "current", "notice", "ntv", "evict", "leased", "month to month", "mtm", "skip", "renewal")
_SECTION_WORDS = re.compile(r"\b(residents?|applicants?|building|bldg|property|section|floor|phase|units?)\b")
_SKIP_SECTION = re.compile(r"\b(future|applicants?|pending)\b")


@dataclass
class Header:
    row_index: int  # index in grid.rows of the header's last row
    columns: dict[str, int]  # role -> column index
    labels: list[str]  # the header's words per column

    @property
    def score(self) -> int:
        return len(self.columns)


@dataclass
class Reading:
    problems: list[dict[str, Any]] = field(default_factory=list)
    more_problems: int = 0

    def problem(self, row: int | None, message: str) -> None:
        if len(self.problems) < limits.FIGURES_PROBLEMS_MAX:
            self.problems.append({"row": row, "message": f"Row {row}: {message}" if row else message})
        else:
            self.more_problems += 1


def _roles(labels: list[str]) -> dict[str, int]:
    """Each role's column: for each role the column whose words come first in its list."""
    found: dict[str, int] = {}
    taken: set[int] = set()
    for role, names in ROLES.items():
        best: tuple[int, int] | None = None
        for index, label in enumerate(labels):
            if label in names and index not in taken and (best is None or names.index(label) < best[0]):
                best = (names.index(label), index)
        if best is not None:
            found[role] = best[1]
            taken.add(best[1])
    return found


def find_header(grid: Grid) -> Header | None:
    """The best header of the first rows (see the module docstring); None without a unit and a rent column."""
    best: Header | None = None
    head = grid.rows[:limits.FIGURES_HEADER_ROWS]
    for index, (_, values) in enumerate(head):
        single = [words(v) for v in values]
        candidates = [(index, single)]
        if index + 1 < len(head):
            below = head[index + 1][1]
            width = max(len(values), len(below))
            joined = [" ".join(p for p in (words(values[i]) if i < len(values) else "",
                                           words(below[i]) if i < len(below) else "") if p) for i in range(width)]
            candidates.append((index + 1, joined))
        for at, labels in candidates:
            columns = _roles(labels)
            if "unit" not in columns or "rent" not in columns:
                continue
            header = Header(at, columns, labels)
            if best is None or header.score > best.score:
                best = header
    return best


def layout_of(header: Header, titles: list[str]) -> str:
    labels = set(header.labels)
    title = " ".join(titles)
    if {"bldg/unit", "unit/lease status", "lease rent", "market + addl"} & labels or "onesite" in title:
        return "realpage"
    if "bd/ba" in labels or {"past due", "nsf count", "lease from"} & labels or "appfolio" in title:
        return "appfolio"
    if ("resident" in labels and "actual rent" in labels) or "yardi" in title:
        return "yardi"
    return "generic"


def _unit_name(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return text(value)


def _is_section(label: str, row: list[Any], header: Header) -> bool:
    """A label row: it reads as words, not as a unit's name, and has no rent (a row with a rent is a unit,
    read or said, never passed over)."""
    rent = header.columns["rent"]
    if rent < len(row) and text(row[rent]):
        return False
    others = [row[i] for role, i in header.columns.items() if role not in ("unit",) and i < len(row)]
    has_values = any(text(v) for v in others)
    word_form = words(label)
    looks_like_words = (len(label) > 16 and " " in label) or label.endswith(":") or bool(
        _SECTION_WORDS.search(word_form) and not re.search(r"\d", word_form))
    return looks_like_words and (not has_values or len(label) > 24)


def _occupancy(status: str, tenant: str, has_status: bool, has_tenant: bool) -> bool | None:
    """True occupied, False not; None when the status says neither."""
    if has_status and status:
        lowered = status.lower()
        # "Vacant-Leased" is vacant today; "Notice-Unrented" is occupied until the resident leaves.
        if "vacant" in lowered or "unoccupied" in lowered:
            return False
        if any(w in lowered for w in _OCCUPIED):
            return True
        if any(w in lowered for w in _VACANT + _NOT_OCCUPIED):
            return False
        return None
    if has_tenant:
        return bool(tenant) and "vacant" not in tenant.lower() and tenant.lower() not in _NOT_OCCUPIED
    return None


def read_rent_roll(grid: Grid, header: Header) -> dict[str, Any]:
    reading = Reading()
    cols = header.columns
    titles = [words(" ".join(text(v) for v in values)) for _, values in grid.rows[:header.row_index]]
    units = occupied = 0
    rent_total = Decimal(0)
    rents_counted = 0
    market_total = Decimal(0)
    seen: dict[str, int] = {}
    skipping = False
    rows_read = 0

    def cell(values: list[Any], role: str) -> Any:
        index = cols.get(role)
        return values[index] if index is not None and index < len(values) else None

    for line, values in grid.rows[header.row_index + 1:]:
        rows_read += 1
        unit_cell = cell(values, "unit")
        unit = _unit_name(unit_cell)
        first_texts = [text(v) for v in values[:max(cols["unit"] + 1, 3)] if text(v)]
        label = unit or (first_texts[0] if first_texts else "")
        if label and is_total(label):
            if words(label).startswith("summary"):
                break
            continue
        if label and words(label).startswith("summary"):
            break
        if not unit:
            if label and _is_section(label, values, header):
                skipping = bool(_SKIP_SECTION.search(words(label)))
                continue
            rent_value = cell(values, "rent")
            if text(rent_value) and not skipping:
                reading.problem(line, f"a rent ({shown(rent_value)}) without a unit; not counted")
            continue
        if _is_section(unit, values, header):
            skipping = bool(_SKIP_SECTION.search(words(unit)))
            continue
        if skipping:
            continue
        if unit in seen:
            reading.problem(line, f"unit {shown(unit)} is listed again (first on row {seen[unit]}); counted once")
            continue
        seen[unit] = line
        units += 1
        status, tenant = text(cell(values, "status")), text(cell(values, "tenant"))
        is_occupied = _occupancy(status, tenant, "status" in cols, "tenant" in cols)
        rent_cell = cell(values, "rent")
        try:
            rent = amount(rent_cell)
        except NotAnAmount:
            reading.problem(line, f"rent '{shown(rent_cell)}' of unit {shown(unit)} is not an amount; the unit is "
                                  "counted, its rent is not")
            rent, bad_rent = None, True
        else:
            bad_rent = False
        if "market" in cols:
            try:
                market = amount(cell(values, "market"))
            except NotAnAmount:
                reading.problem(line, f"market rent '{shown(cell(values, 'market'))}' of unit {shown(unit)} is not "
                                      "an amount; left out of the market rent")
                market = None
            market_total += market or 0
        if is_occupied is None:
            if "status" in cols and status:
                reading.problem(line, f"status '{shown(status)}' of unit {shown(unit)} says neither occupied nor "
                                      "vacant; counted as " + ("occupied (it has a rent)" if rent else "vacant"))
            is_occupied = bool(rent and rent > 0)
        if not is_occupied:
            continue
        occupied += 1
        if bad_rent:
            continue
        if rent is None:
            reading.problem(line, f"unit {shown(unit)} is occupied but has no rent; counted as occupied without rent")
            continue
        if rent < 0:
            reading.problem(line, f"rent {shown(rent_cell)} of unit {shown(unit)} is negative; not counted")
            continue
        rent_total += rent
        rents_counted += 1

    if units == 0:
        reading.problem(None, "No unit rows were found below the header (row "
                              f"{grid.rows[header.row_index][0]}).")
    figures: dict[str, str] = {
        "units": str(units),
        "occupied_units": str(occupied),
        "vacant_units": str(units - occupied),
        "occupancy": money(Decimal(occupied) * 100 / units) if units else "0.00",
        "monthly_in_place_rent": money(rent_total),
        "annual_in_place_rent": money(rent_total * 12),
        "average_rent": money(rent_total / rents_counted) if rents_counted else "0.00",
    }
    if "market" in cols:
        figures["monthly_market_rent"] = money(market_total)
    if units == 0:  # nothing to apply: the problem says why
        figures = {}
    if reading.more_problems:
        reading.problems.append({"row": None, "message": f"…and {reading.more_problems} more problems."})
    return {"kind": "rent_roll", "layout": layout_of(header, titles), "figures": figures,
            "problems": reading.problems, "rows_read": rows_read}
