"""Figures read from a deal's rent roll or T-12 (docs/documents.md): `read_figures(data, file_name, kind)`
is pure (bytes in, a result out: {"kind", "layout", "figures", "problems", "rows_read"}); `services`
stores the reading on the document's version and applies chosen figures to the deal, each with its
source (`models.FigureSource`).

Rooms: `grid` (the file's rows, read safely: size, kind by bytes, zip and XML bombs, encodings),
`cells` (amounts and labels), `rent_roll`, `t12` (each finds its header and reads its rows)."""

from __future__ import annotations

from typing import Any

from deals.documents.figures import rent_roll, t12
from deals.documents.figures.grid import FileUnreadable, read_grid

KINDS = ("rent_roll", "t12")


class FiguresUnreadable(FileUnreadable):
    """No figures can be read from the file: one sentence for the person."""


def read_figures(data: bytes, file_name: str = "", kind: str | None = None) -> dict[str, Any]:
    """What `data` (an XLSX or CSV file) says as a rent roll (`kind="rent_roll"`) or a T-12 (`"t12"`);
    `kind=None` tries both, the rent roll first. Raises FiguresUnreadable (a FileUnreadable) when the file
    is not a readable spreadsheet or no header of that kind is found in its first rows."""
    grid = read_grid(data, file_name)
    if not grid.rows:
        raise FiguresUnreadable("the file has no rows")
    if kind in (None, "rent_roll"):
        header = rent_roll.find_header(grid)
        if header is not None:
            return rent_roll.read_rent_roll(grid, header)
    if kind in (None, "t12"):
        found = t12.find_header(grid)
        if found is not None:
            return t12.read_t12(grid, found)
    looked = {"rent_roll": f"a rent roll's header: {rent_roll.LOOKED_FOR}",
              "t12": f"a T-12's header: {t12.LOOKED_FOR}"}
    wanted = [looked[k] for k in KINDS if kind in (None, k)]
    raise FiguresUnreadable(
        "no header was recognised in the first rows of the file; looked for " + "; or ".join(wanted))
