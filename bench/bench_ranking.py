"""Benchmark: time to rank one deal against lender directories of 1k, 10k and 100k programs (and
1M with --sizes, e.g. `make bench-ranking-1m`).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/lev .venv/bin/python bench/bench_ranking.py
    DATABASE_URL=… REDIS_URL=… .venv/bin/python bench/bench_ranking.py --sizes 100000,1000000

Runs in its own database on the DATABASE_URL server (`<name>_ranking_bench`, created and dropped
here; --keepdb keeps and reuses it), so the development data is never touched. Directories are the
synthetic ones of `lenders.demo`, grown in place (1k → 10k → 100k programs) so every size is
measured in the same run; past 100k the seeded directory is copied in SQL (`clone_directory`: 1M
programs in well under a minute, not the ~4 minutes of Python seeding). "Worker time" is the wall
time of `services.lender_search_run` — what the Celery task spends: claim, scoring in SQL, the top
N described and written, completing the search. CPU is this process's share of it (the rest is
the database server). "e2e" is lender_search_start → Redis queue → a real Celery worker (when
REDIS_URL is set) → status `completed` seen by polling, on the same directory.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `python bench/<this>.py`
from bench._django import setup

setup()


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
    from lev.accounts.services import account_create

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
    from deals.searches.models import LenderSearch
    from deals.searches.ranking import criteria_from_deal

    deal = Deal.objects.get(pk=deal_id)
    properties = list(DealProperty.objects.filter(deal=deal))
    criteria = criteria_from_deal(deal, properties, DealFinancials.objects.filter(deal=deal).first())
    search = LenderSearch.objects.create(account_id=deal.account_id, deal=deal, deal_version=deal.version,
                                         criteria=criteria.as_dict())
    return search.pk


def measure(deal_id: int, repeat: int) -> dict:
    from deals.searches import services

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
    from deals.searches import services
    from deals.searches.models import LenderSearch

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


# Directories up to this many programs are grown with `lenders.demo.seed_directory` (Python, about
# 4,000 programs a second); larger ones by copying that directory in SQL (see clone_directory).
SEED_IN_PYTHON_MAX = 100_000


def clone_directory(target: int) -> int:
    """Grow the directory to `target` programs by copying the lenders seeded so far (with their
    programs and activity) in a few INSERT … SELECT statements over generate_series: a 1M-program
    directory in well under a minute instead of the ~4 minutes the Python seeding would take.

    Copy c of lender id L gets id L + c * (max lender id), so each program and activity row finds
    its lender by arithmetic, not by a join; copies are marked `category = 'bench-copy'` (and get
    their own website) so `seed_directory` never mistakes them for its own lenders. The copies
    have the same distribution of loan ranges, states, asset types and activity as the seeded
    directory, so a deal matches about ten times as many lenders at ten times the size. Returns
    the number of programs added."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), coalesce(max(lender_id), 0) FROM lenders_lenderprogram "
                       "WHERE lender_id IN (SELECT id FROM lenders_lender WHERE category <> 'bench-copy')")
        base_programs, base_max = cursor.fetchone()
        cursor.execute("SELECT count(*) FROM lenders_lenderprogram")
        have = cursor.fetchone()[0]
        need = target - have
        if need <= 0 or base_programs == 0:
            return 0
        cursor.execute("SELECT max(id) FROM lenders_lender")
        offset = cursor.fetchone()[0]  # copies start past every lender there is
        copies = -(-need // base_programs)
        base = "SELECT id FROM lenders_lender WHERE category <> 'bench-copy'"
        cursor.execute(f"""
            INSERT INTO lenders_lender (id, name, website, city, state, about, lender_types, category,
                                        lender_type_mask, created_at, updated_at)
            SELECT l.id + %(offset)s + (c - 1) * %(stride)s, l.name, l.website || '/copy-' || c, l.city, l.state,
                   l.about, l.lender_types, 'bench-copy', l.lender_type_mask, now(), now()
            FROM lenders_lender l CROSS JOIN generate_series(1, %(copies)s) AS c
            WHERE l.id IN ({base})""", {"offset": offset, "stride": base_max, "copies": copies})
        cursor.execute(f"""
            INSERT INTO lenders_lenderprogram (lender_id, title, loan_types, recourse_types, min_loan_amount,
                max_loan_amount, capital_source_type, positions, sponsor_states, asset_types, max_ltv, min_dscr,
                status, loan_type_mask, position_mask, state_mask, asset_type_mask, min_loan_float, max_loan_float,
                max_ltv_float, min_dscr_float, created_at, updated_at)
            SELECT p.lender_id + %(offset)s + (c - 1) * %(stride)s, p.title, p.loan_types, p.recourse_types,
                   p.min_loan_amount, p.max_loan_amount, p.capital_source_type, p.positions, p.sponsor_states,
                   p.asset_types, p.max_ltv, p.min_dscr, p.status, p.loan_type_mask, p.position_mask,
                   p.state_mask, p.asset_type_mask, p.min_loan_float, p.max_loan_float, p.max_ltv_float,
                   p.min_dscr_float, now(), now()
            FROM generate_series(1, %(copies)s) AS c CROSS JOIN lenders_lenderprogram p
            WHERE p.lender_id IN ({base})
            ORDER BY c, p.id LIMIT %(need)s""",
                       {"offset": offset, "stride": base_max, "copies": copies, "need": need})
        added = cursor.rowcount
        cursor.execute(f"""
            INSERT INTO lenders_lenderactivity (lender_id, state, quotes_90d, closings_90d, avg_response_hours,
                                                score, updated_at)
            SELECT a.lender_id + %(offset)s + (c - 1) * %(stride)s, a.state, a.quotes_90d, a.closings_90d,
                   a.avg_response_hours, a.score, now()
            FROM lenders_lenderactivity a CROSS JOIN generate_series(1, %(copies)s) AS c
            WHERE a.lender_id IN ({base})""", {"offset": offset, "stride": base_max, "copies": copies})
        # Copies whose programs fell past `target` stay, without programs (as lenders can be).
        cursor.execute("SELECT setval(pg_get_serial_sequence('lenders_lender', 'id'), "
                       "(SELECT max(id) FROM lenders_lender))")
    return added


def grow_directory(size: int) -> None:
    """Grow the directory to `size` programs (see SEED_IN_PYTHON_MAX)."""
    from lenders.demo import seed_directory
    from lenders.models import LenderProgram

    have = LenderProgram.objects.count()
    if have < min(size, SEED_IN_PYTHON_MAX):
        seed_directory(10**7, max_programs=min(size, SEED_IN_PYTHON_MAX) - have)
    with connection.cursor() as cursor:
        # Copying 900k programs (and vacuuming them) takes longer than a web request's statement limit.
        cursor.execute("SET statement_timeout = 0")
        try:
            clone_directory(size)
            cursor.execute("VACUUM ANALYZE")
        finally:
            cursor.execute("RESET statement_timeout")


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
    from lenders.models import Lender, LenderProgram

    rows = []
    with own_database("ranking_bench", keepdb=args.keepdb):
        reset_directory()
        deal_ids = make_deals()
        for size in sizes:
            seed0 = time.perf_counter()
            grow_directory(size)
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
                    cursor.execute("SET statement_timeout = 0")  # deleting 900k programs takes a while
                    cursor.execute("DELETE FROM lenders_lendermatch; DELETE FROM lenders_lendersearch")
                    cursor.execute(
                        "DELETE FROM lenders_lenderprogram WHERE id > (SELECT id FROM lenders_lenderprogram "
                        "ORDER BY id OFFSET %s LIMIT 1)", [size - 1])
                    # Copied lenders left without programs go too, with their activity.
                    cursor.execute(
                        "DELETE FROM lenders_lenderactivity WHERE lender_id IN (SELECT id FROM lenders_lender l "
                        "WHERE category = 'bench-copy' AND NOT EXISTS (SELECT 1 FROM lenders_lenderprogram p "
                        "WHERE p.lender_id = l.id)); DELETE FROM lenders_lender l WHERE category = 'bench-copy' "
                        "AND NOT EXISTS (SELECT 1 FROM lenders_lenderprogram p WHERE p.lender_id = l.id)")
                    cursor.execute("VACUUM ANALYZE")
                    cursor.execute("RESET statement_timeout")
                for label, deal_id in deal_ids.items():
                    e2e[(label, size)] = search_to_completed(deal_id, args.repeat)

    print()
    print(f"PostgreSQL {connection.pg_version // 10000}, {args.repeat} timed runs per row, worker time in ms "
          f"(median, min-max), write chunk {settings.LEV_SEARCH_WRITE_CHUNK}")
    header = (f"{'deal':<8} {'programs':>9} {'lenders':>8} {'candidates':>10} {'eligible':>8} {'stored':>6} "
              f"{'median':>8} {'min-max':>13} {'cpu':>7} {'x prev':>6} {'e2e':>7} {'x prev':>6}  phases (ms)")
    print(header)
    print("-" * len(header))
    previous: dict[str, dict] = {}
    for row in rows:
        before = previous.get(row["deal"])
        e2e_ms = e2e[(row["deal"], row["size"])]
        growth = f"{row['median'] / before['median']:>6.1f}" if before else f"{'':>6}"
        e2e_growth = f"{e2e_ms / before['e2e']:>6.1f}" if before else f"{'':>6}"
        previous[row["deal"]] = {**row, "e2e": e2e_ms}
        stats = row["stats"]
        stored = getattr(stats, "ranked", stats.matches)  # runs before the top N stored every match
        phases = ", ".join(f"{k} {v:.0f}" for k, v in stats.timings_ms.items() if k != "total")
        print(f"{row['deal']:<8} {row['programs']:>9,} {row['lenders']:>8,} {stats.candidates:>10,} "
              f"{stats.matches:>8,} {stored:>6,} {row['median']:>8.0f} {row['min']:>6.0f}-{row['max']:<6.0f} "
              f"{row['cpu']:>7.0f} {growth} {e2e_ms:>7.0f} {e2e_growth}  {phases}")
    print(f"e2e: search-to-completed through lender_search_start, {mode}, median of {args.repeat}. "
          "x prev: time over the previous size's.")
    if len(sizes) >= 2:
        small, large = sizes[-2], sizes[-1]
        worst = max(e2e[(label, large)] for label in deal_ids)
        growth = max(e2e[(label, large)] / e2e[(label, small)] for label in deal_ids)
        verdict = "under" if worst <= 1000 else "OVER"
        print(f"\n{large:,} programs: slowest deal {worst:.0f} ms end to end ({verdict} the 1 s target); "
              f"{large // small}x the programs of {small:,} took at most {growth:.1f}x the time "
              f"({'no worse than' if growth <= large / small else 'WORSE than'} linear).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
