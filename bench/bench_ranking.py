"""Benchmark: worker time to rank one deal against lender directories of 1k, 10k and 100k programs.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/lev .venv/bin/python bench/bench_ranking.py

Runs in its own database on the DATABASE_URL server (`<name>_ranking_bench`, created and dropped
here; --keepdb keeps and reuses it), so the development data is never touched. Directories are the synthetic
ones of `lenders.demo`, grown in place (1k → 10k → 100k programs) so every size is measured in
the same run. "Worker time" is the wall time of `services.lender_search_run` — what the Celery
task spends: claim, SQL hard filters, scoring, writing every match, completing the search. CPU is
this process's share of it (the rest is the database server).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lev.settings")
# Log only warnings: the per-search INFO lines would interleave with the table.
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402

DEALS = {
    # A stabilized multifamily refinance in Texas with financials (LTV and DSCR scored).
    "typical": {
        "deal": {"loan_amount": Decimal("18500000"), "loan_type": "permanent", "business_plan": "stabilized",
                 "transaction_type": "refinance"},
        "properties": [{"name": "Riverside Apartments", "state": "TX", "asset_type": "multifamily"}],
        "financials": {"estimated_value": Decimal("26000000"), "in_place_noi": Decimal("1650000"),
                       "interest_rate": Decimal("6.25")},
    },
    # Loan type still `tbd` (no loan-type filter): the widest candidate set a deal can ask for.
    "broad": {
        "deal": {"loan_amount": Decimal("12000000"), "loan_type": "tbd", "business_plan": "value_add"},
        "properties": [{"name": "Sunset Plaza", "state": "CA", "asset_type": "multifamily"}],
        "financials": None,
    },
}


def make_deals() -> dict[str, int]:
    from deals.models import Deal, DealFinancials, DealProperty
    from deals.services import account_create

    account = account_create(name="Benchmark Capital")
    ids = {}
    for label, spec in DEALS.items():
        deal = Deal.objects.create(account=account, title=f"Benchmark {label}", **spec["deal"])
        for prop in spec["properties"]:
            DealProperty.objects.create(deal=deal, **prop)
        if spec["financials"]:
            DealFinancials.objects.create(deal=deal, **spec["financials"])
        ids[label] = deal.pk
    return ids


def new_search(deal_id: int) -> int:
    """A pending search of the deal, made the way lender_search_start makes one (no job queued)."""
    from deals.models import Deal, DealFinancials, DealProperty
    from lenders.models import LenderSearch
    from lenders.ranking import criteria_from_deal

    deal = Deal.objects.get(pk=deal_id)
    properties = list(DealProperty.objects.filter(deal=deal))
    criteria = criteria_from_deal(deal, properties, DealFinancials.objects.filter(deal=deal).first())
    search = LenderSearch.objects.create(account_id=deal.account_id, deal=deal, deal_version=deal.version,
                                         criteria=criteria.as_dict())
    return search.pk


def measure(deal_id: int, repeat: int) -> dict:
    from lenders import services

    services.lender_search_run(search_id=new_search(deal_id))  # warm-up: caches, plans
    walls, cpus, last = [], [], None
    for _ in range(repeat):
        search_id = new_search(deal_id)
        wall0, cpu0 = time.perf_counter(), time.process_time()
        last = services.lender_search_run(search_id=search_id)
        walls.append((time.perf_counter() - wall0) * 1000)
        cpus.append((time.process_time() - cpu0) * 1000)
    assert last is not None, "the search did not run"
    return {"median": statistics.median(walls), "min": min(walls), "max": max(walls),
            "cpu": statistics.median(cpus), "stats": last}


@contextmanager
def celery_worker():
    """A real Celery worker (prefork, one child) on the benchmark database and a queue of its own,
    when REDIS_URL names a broker; otherwise None (jobs then run in-process, as in the demo)."""
    from lev.celery_app import app

    if not settings.REDIS_URL:
        app.conf.task_always_eager = True
        yield None
        return
    db = connection.settings_dict
    url = f"postgres://{quote(db['USER'] or '', safe='')}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/"
    queue = f"lev-bench-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "DATABASE_URL": url + db["NAME"], "CELERY_TASK_ALWAYS_EAGER": "false",
           "CELERY_TASK_DEFAULT_QUEUE": queue, "LOG_LEVEL": "WARNING"}
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "celery"), "-A", "lev", "worker", "--pool=prefork", "--concurrency=1",
         "-Q", queue, "-n", f"{queue}@%h", "--without-gossip", "--without-mingle", "--loglevel=WARNING"],
        cwd=Path(__file__).resolve().parent.parent, env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    app.conf.task_always_eager, app.conf.task_default_queue = False, queue
    try:
        yield process
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        with app.connection_for_write() as conn:
            conn.default_channel.queue_delete(queue)


def search_to_completed(deal_id: int, repeat: int) -> float:
    """Median ms from lender_search_start (what the API and MCP tool call) to status completed."""
    from deals.models import Deal
    from lenders import services
    from lenders.models import LenderSearch

    settings.LEV_SEARCH_REUSE_SECONDS = 0  # a fresh search every time
    times = []
    for _ in range(repeat + 1):
        started = time.perf_counter()
        search, _created = services.lender_search_start(deal=Deal.objects.get(pk=deal_id))
        deadline = time.monotonic() + 120
        while LenderSearch.objects.filter(pk=search.pk).values_list("status", flat=True)[0] != "completed":
            if time.monotonic() > deadline:
                raise RuntimeError(f"search {search.pk} did not complete")
            time.sleep(0.005)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times[1:])  # the first one warms the worker up


def reset_directory() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE lenders_lendermatch, lenders_lendersearch, lenders_lenderactivity, "
            "lenders_lenderprogram, lenders_lender RESTART IDENTITY CASCADE"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000", help="Program counts (ascending).")
    parser.add_argument("--repeat", type=int, default=5, help="Timed runs per size and deal (median shown).")
    parser.add_argument("--keepdb", action="store_true", help="Keep the benchmark database afterwards.")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))

    from bench.own_database import own_database
    from lenders.demo import seed_directory
    from lenders.models import Lender, LenderProgram

    rows = []
    with own_database("ranking_bench", keepdb=args.keepdb):
        reset_directory()
        deal_ids = make_deals()
        for size in sizes:
            have = LenderProgram.objects.count()
            seed0 = time.perf_counter()
            seed_directory(10**7, max_programs=size - have)
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
            seeded_s = time.perf_counter() - seed0
            lenders = Lender.objects.count()
            programs = LenderProgram.objects.count()
            print(f"directory: {programs:>7,} programs, {lenders:>6,} lenders (seeded in {seeded_s:.1f} s)",
                  flush=True)
            for label, deal_id in deal_ids.items():
                result = measure(deal_id, args.repeat)
                rows.append({"deal": label, "programs": programs, "lenders": lenders, "size": size, **result})
        # End to end (queue, worker, database), on the directory as it stands at each size.
        e2e: dict[tuple[str, int], float] = {}
        with celery_worker() as worker:
            mode = "real Celery worker (Redis broker)" if worker is not None else "in-process (no broker)"
            for size in sorted(sizes, reverse=True):  # shrink the directory back down, size by size
                with connection.cursor() as cursor:
                    cursor.execute("DELETE FROM lenders_lendermatch; DELETE FROM lenders_lendersearch")
                    cursor.execute(
                        "DELETE FROM lenders_lenderprogram WHERE id > (SELECT id FROM lenders_lenderprogram "
                        "ORDER BY id OFFSET %s LIMIT 1)", [size - 1])
                for label, deal_id in deal_ids.items():
                    e2e[(label, size)] = search_to_completed(deal_id, args.repeat)

    print()
    print(f"PostgreSQL {connection.pg_version // 10000}, {args.repeat} timed runs per row, worker time in ms "
          f"(median, min-max), write chunk {settings.LEV_SEARCH_WRITE_CHUNK}")
    header = (f"{'deal':<8} {'programs':>9} {'lenders':>8} {'candidates':>10} {'matches':>8} "
              f"{'median':>8} {'min-max':>13} {'cpu':>7} {'x 1st':>6} {'e2e':>7}  phases (ms)")
    print(header)
    print("-" * len(header))
    first = {}
    for row in rows:
        base = first.setdefault(row["deal"], row["median"])
        stats = row["stats"]
        phases = ", ".join(f"{k} {v:.0f}" for k, v in stats.timings_ms.items() if k != "total")
        print(f"{row['deal']:<8} {row['programs']:>9,} {row['lenders']:>8,} {stats.candidates:>10,} "
              f"{stats.matches:>8,} {row['median']:>8.0f} {row['min']:>6.0f}-{row['max']:<6.0f} "
              f"{row['cpu']:>7.0f} {row['median'] / base:>6.1f} {e2e[(row['deal'], row['size'])]:>7.0f}  {phases}")
    print(f"e2e: search-to-completed through lender_search_start, {mode}, median of {args.repeat}.")
    worst = max((r for r in rows if r["programs"] == max(sizes)), key=lambda r: r["median"], default=None)
    if worst is not None:
        verdict = "under" if worst["median"] < 1000 else "OVER"
        print(f"\n{max(sizes):,} programs: slowest deal {worst['median']:.0f} ms median — {verdict} the 1 s target.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
