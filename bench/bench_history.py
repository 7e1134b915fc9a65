"""Benchmark: the history import and export (issue 38) of 100,000 rows (~15,000 deals), on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/lev .venv/bin/python bench/bench_history.py

Runs in its own database on the DATABASE_URL server (`<name>_history_bench`, created and dropped here;
--keepdb keeps it). The directory: 2,000 lenders. The file: --deals deals (15,000), each placed with 3 to
10 of them (about 6.7 a deal: 100,000 rows), every column of the format filled as a CRM export fills it
($12.5M amounts, percents with their sign, ISO dates); outcomes ~30 % quoted (with a fixed or floating
quote, a third of those deals won), ~30 % declined with a reason, the rest no answer. Lender names are
written as the directory has them (the exact path; fuzzy matching is per distinct name, not per row).

Timed, each once (wall time, and this process's CPU time beside it: on a machine shared with other
work the wall time counts theirs too, the CPU time only this process's; a first run of a fresh
process): the dry run, the import (check + write in one transaction), the re-import of the same file
(nothing created), the export to CSV and to XLSX, and the XLSX import into a second empty account.
The process's peak RSS after each step is printed: it does not follow the file's size (rows are
streamed; per-deal keys are what is held).
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `python bench/<this>.py`
from bench._django import setup

os.environ.setdefault("DEBUG", "false")
setup(statement_timeout=False)

HEADER = ["deal_external_id", "deal_title", "loan_amount", "loan_type", "transaction_type", "business_plan",
          "close_date", "stage", "property_name", "state", "asset_type", "units", "square_feet", "noi", "value",
          "lender", "sent_on", "answered_on", "decided_on", "outcome", "decline_reason", "quote_amount",
          "fixed_rate", "rate_index", "spread_bps", "term_months", "amortization_months", "max_ltv", "min_dscr",
          "origination_fee"]
STATES = ("TX", "FL", "CA", "NY", "GA", "AZ", "NC", "CO", "IL", "TN", "WA", "OH")
ASSETS = ("multifamily", "industrial", "retail", "office", "self_storage", "hospitality")


def write_file(path: Path, lenders: list[str], deals: int, seed: int = 38) -> int:
    rng = random.Random(seed)
    rows = 0
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(HEADER)
        for n in range(deals):
            amount = rng.randrange(20, 600) * 100_000
            asset = rng.choice(ASSETS)
            deal = [f"CRM-{n:06d}", f"{asset.replace('_', ' ').title()} deal {n}", f"${amount / 1e6:.1f}M",
                    rng.choice(("permanent", "light_bridge")), rng.choice(("acquisition", "refinance")),
                    "stabilized", "", "", f"Property {n}", rng.choice(STATES), asset,
                    str(rng.randrange(20, 400)) if asset == "multifamily" else "",
                    str(rng.randrange(20_000, 400_000)) if asset != "multifamily" else "",
                    f"{amount * 0.08:,.0f}", f"{amount / 0.65:,.0f}"]
            day = 1 + rng.randrange(0, 1000)
            sent = f"2023-{1 + day % 12:02d}-{1 + day % 28:02d}"
            answered = f"2023-{1 + day % 12:02d}-{min(28, 3 + day % 28):02d}"
            chosen = rng.sample(lenders, rng.randint(3, 10))
            winner = rng.random() < 0.33
            for lender in chosen:
                roll = rng.random()
                quote = [""] * 9
                if roll < 0.3:
                    outcome = "won" if winner else "quoted"
                    winner = False
                    if rng.random() < 0.5:
                        quote = [f"{amount:,}", f"{rng.uniform(5.2, 7.8):.3f}%", "", "", "120", "360",
                                 f"{rng.randrange(55, 76)}%", "1.25", "1%"]
                    else:
                        quote = [f"{amount:,}", "", "SOFR", str(rng.randrange(250, 450)), "36", "", "70%", "1.20",
                                 "1.5%"]
                    row_dates = [sent, answered, answered if outcome == "won" else ""]
                elif roll < 0.6:
                    outcome = "declined"
                    row_dates = [sent, answered, answered]
                else:
                    outcome = "no answer"
                    row_dates = [sent, "", ""]
                writer.writerow([*deal, lender, *row_dates, outcome,
                                 "Outside our box" if outcome == "declined" else "", *quote])
                rows += 1
    return rows


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=15_000)
    parser.add_argument("--keepdb", action="store_true", help="Keep the benchmark database afterwards.")
    args = parser.parse_args()

    from bench.own_database import own_database

    with own_database("history_bench", keepdb=args.keepdb):
        from deals.history.export import history_export
        from deals.history.services import history_import
        from lenders.models import Lender
        from lev.accounts.services import account_create

        Lender.objects.filter(name__startswith="Bench ").delete()
        Lender.objects.bulk_create([Lender(name=f"Bench {kind} Lender {i:04d}", lender_types=["bank"])
                                    for i, kind in zip(range(2000), ["Capital", "Bank", "Realty"] * 700,
                                                       strict=False)])
        names = list(Lender.objects.filter(name__startswith="Bench ").values_list("name", flat=True))
        first = account_create(name="History bench")
        second = account_create(name="History bench xlsx")
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "history.csv"
            rows = write_file(path, names, args.deals)
            size = path.stat().st_size / 2**20
            print(f"file: {rows:,} rows, {args.deals:,} deals, {size:.1f} MB; peak RSS {peak_mb():.0f} MB")

            def timed(label: str, call):
                start, cpu = time.perf_counter(), time.process_time()
                result = call()
                print(f"{label:<28} {time.perf_counter() - start:6.1f} s   (this process's CPU "
                      f"{time.process_time() - cpu:5.1f} s)   peak RSS {peak_mb():5.0f} MB")
                return result

            timed("dry run", lambda: history_import(account=first, path=path, dry_run=True))
            result = timed("import (CSV)", lambda: history_import(account=first, path=path))
            print(f"  {result.deals:,} deals, {result.placements:,} placements, {result.term_sheets:,} quotes")
            again = timed("re-import (nothing new)", lambda: history_import(account=first, path=path))
            assert again.deals == 0 and again.placements == 0
            timed("export CSV", lambda: history_export(account=first, path=Path(folder) / "out.csv"))
            xlsx = Path(folder) / "out.xlsx"
            timed("export XLSX", lambda: history_export(account=first, path=xlsx))
            print(f"  XLSX {xlsx.stat().st_size / 2**20:.1f} MB")
            timed("import (XLSX, other account)", lambda: history_import(account=second, path=xlsx))


if __name__ == "__main__":
    main()
