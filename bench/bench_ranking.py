"""Benchmark: time to rank one deal against lender directories of 1k, 10k and 100k programs (and
1M with --sizes, e.g. `make bench-ranking-1m`).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/lev .venv/bin/python bench/bench_ranking.py
    DATABASE_URL=… REDIS_URL=… .venv/bin/python bench/bench_ranking.py --sizes 100000,1000000

Runs in its own database on the DATABASE_URL server (`<name>_ranking_bench`, created and dropped
here; --keepdb keeps and reuses it), so the development data is never touched. Directories are the
synthetic ones of `deals.demo.directory`, grown in place (1k → 10k → 100k programs) so every size is
measured in the same run; past 100k the seeded directory is copied in SQL (`clone_directory`: 1M
programs in well under a minute, not the ~4 minutes of Python seeding). "Worker time" is the wall
time of `services.lender_search_run` — what the Celery task spends: claim, scoring in SQL, the top
N described and written, completing the search. CPU is this process's share of it (the rest is
the database server). "e2e" is lender_search_start → Redis queue → a real Celery worker (when
REDIS_URL is set) → status `completed` seen by polling, on the same directory.

With signals (issue 37; default on, --signal-accounts 0 turns them off): the learned ranking reads the
searching account's LenderSignal rows and the pooled ones for the deal's features, then re-scores in
Python the top N and every lender its evidence names. The benchmark stores what 50 teams with a few
thousand placements each would have (`seed_signals`: per account ~2,000 lenders, each with rows for
every dimension of `evidence.DIMENSIONS` and one to four values per dimension, popular values — the
benchmark deals' among them — more often; plus the pooled rows, account null), runs the searches as
one of those accounts, and times every size and deal twice, interleaved: "none" with the signals
table swapped for an empty one (a rename, in one transaction, no copy), "signals" with them back.
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


SIGNAL_VALUES = {
    # Per dimension, the values a team's placements are filed under, most common first (the
    # benchmark deals' values are the first of each: the team's own kind of deal).
    "asset_type": ("multifamily", "industrial", "retail", "office", "self_storage", "hospitality", "mixed_use",
                   "senior_housing", "student_housing", "manufactured_housing", "healthcare", "land"),
    "state": ("TX", "CA", "FL", "NY", "GA", "AZ", "NC", "CO", "IL", "TN", "WA", "OH", "PA", "MA", "NV", "UT",
              "NJ", "VA", "MI", "MN"),
    "region": ("south", "west", "northeast", "midwest"),
    "size": ("10_20m", "5_10m", "20_50m", "under_5m", "50_100m", "100m_plus"),
    "loan_type": ("permanent", "light_bridge", "heavy_bridge", "construction", "land", "predevelopment"),
    "transaction_type": ("refinance", "acquisition", "new_construction"),
    "business_plan": ("stabilized", "value_add", "construction", "land"),
    "leverage": ("ltv_75", "ltv_65", "ltv_55", "ltv_over_75"),
    "coverage": ("dscr_1_20_1_40", "dscr_1_40_up", "dscr_under_1_20"),
    "asset_state": tuple(f"{a}:{s}" for a in ("multifamily", "industrial", "retail", "office", "self_storage")
                         for s in ("TX", "CA", "FL", "NY", "GA", "AZ", "NC", "CO", "IL", "TN")),
}

# One row per (account or pooled, lender, dimension, value): for each dimension, 1-4 consecutive values
# of its list from a start skewed towards the common ones (u^2), by a hash of (account, lender,
# dimension); figures from another hash. `all` has one row. Every account names the same lenders (the
# densest case for the pooled rows, which get the same shape with accounts = 50).
SIGNALS_SQL = """
WITH dims AS (
    SELECT d.ord, d.dimension, d.vals FROM jsonb_each(%(values)s::jsonb) WITH ORDINALITY AS d(dimension, vals, ord)
), owners AS (
    SELECT unnest(%(accounts)s::bigint[]) AS account_id
    UNION ALL SELECT NULL
), pairs AS (
    SELECT o.account_id, l.lender_id, l.n FROM owners o
    CROSS JOIN unnest(%(lenders)s::bigint[]) WITH ORDINALITY AS l(lender_id, n)
), picks AS (
    SELECT p.account_id, p.lender_id, dims.dimension, dims.vals, jsonb_array_length(dims.vals) AS len,
           abs(hashint8(coalesce(p.account_id, 0) * 1000003 + p.n * 31 + dims.ord)) AS h
    FROM pairs p CROSS JOIN dims
), rows AS (
    SELECT account_id, lender_id, dimension,
           vals ->> ((floor(len * power((h %% 1000) / 1000.0, 2))::int + k) %% len) AS value, h + k AS h
    FROM picks CROSS JOIN LATERAL generate_series(0, least(len, 1 + (h / 1000) %% 4) - 1) AS k
    UNION ALL
    SELECT account_id, lender_id, 'all', '', abs(hashint8(coalesce(account_id, 0) * 7 + lender_id)) FROM pairs
)
INSERT INTO lenders_lendersignal (account_id, lender_id, dimension, value, sent_weight, quoted_weight,
    declined_weight, no_answer_weight, won_weight, sent_12m, quoted_12m, declined_12m, no_answer_12m, won_12m,
    recent, accounts, refreshed_at)
SELECT account_id, lender_id, dimension, value, s, s * q, s * (1 - q) * 0.5, s * (1 - q) * 0.5, s * q * 0.2,
       n, round(n * q), round(n * (1 - q) * 0.5), n - round(n * q) - round(n * (1 - q) * 0.5), 0,
       substr('qdnqnddqnq', 1 + (h %% 5)::int, 1 + (h %% 5)::int),
       CASE WHEN account_id IS NULL THEN %(account_count)s ELSE 1 END, now()
FROM (SELECT *, 0.5 + (h %% 50) / 10.0 AS s, (h %% 7) / 10.0 AS q, (h %% 6)::int AS n FROM rows) r
"""


def seed_signals(account_ids: list[int], lender_count: int) -> dict:
    """Replace the stored signals with those of `account_ids` (and the pooled ones) for `lender_count`
    lenders of the seeded directory (not its copies: the same lenders at every size, picked at random
    with a fixed seed). Returns what was written."""
    import json

    from lenders.models import LenderSignal

    began = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = 0")
        cursor.execute("SELECT setseed(0.37)")
        cursor.execute("SELECT id FROM (SELECT id, random() AS r FROM lenders_lender WHERE category <> 'bench-copy' "
                       "ORDER BY id) l ORDER BY r LIMIT %s", [lender_count])
        lenders = [row[0] for row in cursor.fetchall()]
        cursor.execute("TRUNCATE lenders_lendersignal")
        # The rows name existing accounts and lenders: no per-row foreign-key triggers (2.6M rows took
        # 200 s with them, on a loaded machine).
        cursor.execute("SET session_replication_role = replica")
        cursor.execute(SIGNALS_SQL, {"values": json.dumps(SIGNAL_VALUES), "accounts": account_ids,
                                     "lenders": lenders, "account_count": len(account_ids)})
        cursor.execute("SET session_replication_role = DEFAULT")
        cursor.execute("VACUUM ANALYZE lenders_lendersignal")
        cursor.execute("RESET statement_timeout")
    rows = LenderSignal.objects.count()
    return {"lenders": len(lenders), "rows": rows, "pooled": LenderSignal.objects.filter(account=None).count(),
            "seconds": time.perf_counter() - began}


PARKED = "bench_signals_parked"


def signals_on(on: bool) -> None:
    """Swap the stored signals out (an empty table of the same shape takes the name) or back in."""
    from lenders.models import LenderSignal

    table = LenderSignal._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [PARKED])
        parked = cursor.fetchone()[0]
        if on == parked:  # the full table is parked and wanted back, or in place and wanted out
            cursor.execute(f"ALTER TABLE {table} RENAME TO bench_signals_swap; "
                           f"ALTER TABLE {PARKED if parked else 'bench_signals_empty'} RENAME TO {table}; "
                           f"ALTER TABLE bench_signals_swap RENAME TO {'bench_signals_empty' if parked else PARKED}")


def make_signal_accounts(count: int) -> list[int]:
    """`count` - 1 more accounts beside the benchmark's own (the first, which runs the searches)."""
    from lev.accounts.models import Account
    from lev.accounts.services import account_create

    own = Account.objects.get(name="Benchmark Capital").pk
    return [own] + [account_create(name=f"Benchmark team {n}").pk for n in range(1, count)]


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


# Directories up to this many programs are grown with `deals.demo.directory.seed_directory` (Python, about
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
        # Every column but the keys and timestamps, as it stands (the program terms of issue 37 included:
        # a fixed list went stale when they were added, and the copy failed on their NOT NULL columns).
        cursor.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'lenders_lenderprogram' "
                       "AND table_schema = current_schema() AND column_name NOT IN "
                       "('id', 'lender_id', 'created_at', 'updated_at') ORDER BY ordinal_position")
        copied = [row[0] for row in cursor.fetchall()]
        cursor.execute(f"""
            INSERT INTO lenders_lenderprogram (lender_id, {", ".join(copied)}, created_at, updated_at)
            SELECT p.lender_id + %(offset)s + (c - 1) * %(stride)s, {", ".join("p." + c for c in copied)}, now(), now()
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
    from deals.demo.directory import seed_directory
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
            "TRUNCATE lenders_lendermatch, lenders_lendersearch, lenders_lenderactivity, lenders_lendersignal, "
            "lenders_lenderprogram, lenders_lender RESTART IDENTITY CASCADE"
        )


def evidence_read(deal_id: int) -> str:
    """What one search of the deal reads of the stored signals: rows and lenders, own and pooled."""
    from deals.models import Deal
    from deals.searches.models import LenderSearch
    from deals.searches.ranking import evidence
    from deals.searches.ranking.criteria import DealCriteria

    search = LenderSearch.objects.filter(deal_id=deal_id).latest("pk")
    features = evidence.criteria_features(DealCriteria.from_dict(search.criteria))
    learned = evidence.load(Deal.objects.get(pk=deal_id).account_id, features)
    own_rows = sum(len(t) for t in learned.own.values())
    pooled_rows = sum(len(t) for t in learned.pooled.values())
    return (f"{len(features)} features; {own_rows:,} own rows ({len(learned.own):,} lenders), "
            f"{pooled_rows:,} pooled rows ({len(learned.pooled):,} lenders)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000", help="Program counts (ascending).")
    parser.add_argument("--repeat", type=int, default=5, help="Timed runs per size and deal (median shown).")
    parser.add_argument("--signal-accounts", type=int, default=50,
                        help="Accounts with stored signals (0: no signals, the stated programs only).")
    parser.add_argument("--signal-lenders", type=int, default=2000, help="Lenders each account has signals for.")
    parser.add_argument("--keepdb", action="store_true", help="Keep the benchmark database afterwards.")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))

    from bench.own_database import own_database
    from lenders.models import Lender, LenderProgram, LenderSignal

    rows = []
    variants = ["none", "signals"] if args.signal_accounts > 0 else ["none"]
    with own_database("ranking_bench", keepdb=args.keepdb):
        signals_on(True)
        reset_directory()
        deal_ids = make_deals()
        account_ids = make_signal_accounts(args.signal_accounts) if args.signal_accounts > 0 else []
        if account_ids:
            with connection.cursor() as cursor:
                cursor.execute("DROP TABLE IF EXISTS bench_signals_empty")
                cursor.execute(f"CREATE TABLE bench_signals_empty (LIKE {LenderSignal._meta.db_table} INCLUDING ALL)")
        seeded_for = 0
        for size in sizes:
            seed0 = time.perf_counter()
            grow_directory(size)
            seeded_s = time.perf_counter() - seed0
            lenders = Lender.objects.count()
            programs = LenderProgram.objects.count()
            print(f"directory: {programs:>7,} programs, {lenders:>6,} lenders (seeded in {seeded_s:.1f} s)",
                  flush=True)
            base_lenders = Lender.objects.exclude(category="bench-copy").count()
            want = min(args.signal_lenders, base_lenders)
            if account_ids and want > seeded_for:
                seeded = seed_signals(account_ids, want)
                seeded_for = want
                print(f"signals: {seeded['rows']:,} rows ({seeded['pooled']:,} pooled) for {seeded['lenders']:,} "
                      f"lenders x {len(account_ids)} accounts, written in {seeded['seconds']:.1f} s", flush=True)
            for label, deal_id in deal_ids.items():
                for variant in variants:  # interleaved: none, then signals, deal by deal
                    signals_on(variant == "signals")
                    result = measure(deal_id, args.repeat)
                    rows.append({"deal": label, "programs": programs, "lenders": lenders, "size": size,
                                 "variant": variant, **result})
                    if variant == "signals":
                        print(f"  {label}: evidence read: {evidence_read(deal_id)}", flush=True)
        # End to end (queue, worker, database), on the directory as it stands at each size.
        e2e: dict[tuple[str, int, str], float] = {}
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
                    for variant in variants:
                        signals_on(variant == "signals")
                        e2e[(label, size, variant)] = search_to_completed(deal_id, args.repeat)
        signals_on(True)

    print()
    print(f"PostgreSQL {connection.pg_version // 10000}, {args.repeat} timed runs per row, worker time in ms "
          f"(median, min-max), write chunk {settings.LEV_SEARCH_WRITE_CHUNK}; signals: "
          + (f"{args.signal_lenders:,} lenders x {args.signal_accounts} accounts stored, the search's account one "
             "of them ('none': the table swapped for an empty one)" if account_ids else "none stored"))
    header = (f"{'deal':<8} {'signals':<7} {'programs':>9} {'lenders':>8} {'candidates':>10} {'eligible':>8} "
              f"{'stored':>6} {'median':>8} {'min-max':>13} {'cpu':>7} {'x prev':>6} {'e2e':>7} {'x prev':>6}"
              "  phases (ms)")
    print(header)
    print("-" * len(header))
    previous: dict[tuple[str, str], dict] = {}
    for row in rows:
        key = (row["deal"], row["variant"])
        before = previous.get(key)
        e2e_ms = e2e[(row["deal"], row["size"], row["variant"])]
        growth = f"{row['median'] / before['median']:>6.1f}" if before else f"{'':>6}"
        e2e_growth = f"{e2e_ms / before['e2e']:>6.1f}" if before else f"{'':>6}"
        previous[key] = {**row, "e2e": e2e_ms}
        stats = row["stats"]
        stored = getattr(stats, "ranked", stats.matches)  # runs before the top N stored every match
        phases = ", ".join(f"{k} {v:.0f}" for k, v in stats.timings_ms.items() if k != "total")
        print(f"{row['deal']:<8} {row['variant']:<7} {row['programs']:>9,} {row['lenders']:>8,} "
              f"{stats.candidates:>10,} {stats.matches:>8,} {stored:>6,} {row['median']:>8.0f} "
              f"{row['min']:>6.0f}-{row['max']:<6.0f} {row['cpu']:>7.0f} {growth} {e2e_ms:>7.0f} {e2e_growth}  "
              f"{phases}")
    print(f"e2e: search-to-completed through lender_search_start, {mode}, median of {args.repeat}. "
          "x prev: time over the previous size's (same deal, same signals).")
    if len(sizes) >= 2:
        small, large = sizes[-2], sizes[-1]
        for variant in variants:
            worst = max(e2e[(label, large, variant)] for label in deal_ids)
            growth = max(e2e[(label, large, variant)] / e2e[(label, small, variant)] for label in deal_ids)
            verdict = "under" if worst <= 1000 else "OVER"
            print(f"\n{large:,} programs, signals {variant}: slowest deal {worst:.0f} ms end to end ({verdict} the "
                  f"1 s target); {large // small}x the programs of {small:,} took at most {growth:.1f}x the time "
                  f"({'no worse than' if growth <= large / small else 'WORSE than'} linear).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
