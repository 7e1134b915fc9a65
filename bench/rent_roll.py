"""Benchmark: a 5,000-unit rent roll read (issue 41: under 5 s), no database.

    .venv/bin/python bench/rent_roll.py [--units 5000] [--runs 3]

The file is a Yardi rent roll export as tests/deals/documents/figures_files.py writes it (report titles,
the two-row header, a charge detail row under every 11th unit, VACANT residents, the Future Residents
section, totals and summary groups), generated once in memory as XLSX (about 5,500 rows); then read from its
bytes by `deals.documents.figures.read_figures` as a document's version is: the zip's sizes checked,
openpyxl's read-only streaming reader through defusedxml, the header found, every row read. Prints the file's
size, each run's wall and CPU time, the best and the figures (checked against the generator's).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `python bench/<this>.py`

from deals.documents.figures import read_figures
from tests.deals.documents.figures_files import yardi_rent_roll

BUDGET_SECONDS = 5.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    started = time.perf_counter()
    data, expected = yardi_rent_roll(args.units)
    print(f"generated a {args.units:,}-unit Yardi rent roll: {len(data) / 2**20:.2f} MB XLSX "
          f"in {time.perf_counter() - started:.2f} s")
    best = float("inf")
    for run in range(1, args.runs + 1):
        wall, cpu = time.perf_counter(), time.process_time()
        result = read_figures(data, "rent roll.xlsx", "rent_roll")
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        best = min(best, wall)
        print(f"run {run}: {wall:.2f} s wall, {cpu:.2f} s CPU, {result['rows_read']:,} rows read")
        assert {k: result["figures"][k] for k in expected} == expected, result["figures"]
        assert result["problems"] == [], result["problems"][:3]
    figures = result["figures"]
    print(f"figures: {figures['units']} units, {figures['occupied_units']} occupied ({figures['occupancy']}%), "
          f"${float(figures['monthly_in_place_rent']):,.2f} a month in place")
    print(f"best {best:.2f} s; budget {BUDGET_SECONDS:.0f} s: {'ok' if best < BUDGET_SECONDS else 'OVER'}")
    return 0 if best < BUDGET_SECONDS else 1


if __name__ == "__main__":
    raise SystemExit(main())
