"""Benchmark: `refresh_lender_signals()` (issue 37) over 100k placements, on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/lev .venv/bin/python bench/bench_signals.py
    make bench-signals

Runs in its own database on the DATABASE_URL server (`<name>_signals_bench`, created and dropped here;
--keepdb keeps and reuses it). The history is a few thousand placements per team, as a team of brokers
builds it over three years: 50 accounts, 2,000 lenders (the synthetic directory of `deals.demo.directory`),
100 deals per account (5,000 deals, one or two properties each across 12 asset types and 17 states,
loan sizes from $2M to $120M, the loan, transaction and business-plan mixes, LTV 50-80 % and DSCR
1.1-1.6 from their financials) and 20 lenders per deal (100k placements), each account leaning on its
own favourite lenders (a skewed pick around an account-specific offset). Sent dates spread evenly over
three years; outcomes: ~30 % quoted with a term sheet (half the deals won by one of them, the rest of
the quoted lost or still quoted), ~30 % declined, the rest never answered (`no_response`, or still
`sent` past the 21-day mark), and the last 3 weeks' placements still open. Everything is written in
bulk (deals with bulk_create, placements and term sheets with INSERT … SELECT over generate_series).

"Refresh" is the wall time of `refresh_lender_signals()` — what the Celery task runs: read every
placement and first quote, file each under its deal's features, pool over accounts, and replace every
LenderSignal row in one transaction. Timed --repeat times (min, median, max); the phases of one more
refresh are timed separately (--phases) by calling the module's own steps in the same order.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `python bench/<this>.py`
from bench._django import setup

# As in production: DEBUG off (with it on, every bulk insert is also rendered as text for
# connection.queries: measured, 16 % of a refresh). Writing 100k rows in one statement may take longer
# than a web request may.
os.environ.setdefault("DEBUG", "false")
setup(statement_timeout=False)

from django.db import connection  # noqa: E402

ACCOUNTS = 50
LENDERS = 2000
DEALS_PER_ACCOUNT = 100
LENDERS_PER_DEAL = 20
SPAN_DAYS = 3 * 365
ASSET_TYPES = ("multifamily", "multifamily", "multifamily", "industrial", "industrial", "retail", "office",
               "hospitality", "self_storage", "mixed_use", "senior_housing", "student_housing",
               "manufactured_housing", "healthcare")
STATES = ("TX", "TX", "FL", "FL", "CA", "NY", "GA", "AZ", "NC", "CO", "IL", "TN", "WA", "OH", "PA", "MA", "NV",
          "UT")
LOAN_TYPES = ("permanent", "permanent", "light_bridge", "heavy_bridge", "construction")
TRANSACTIONS = ("acquisition", "refinance", "refinance", "new_construction")
PLANS = ("stabilized", "stabilized", "value_add", "construction")

# Placements of every deal: LENDERS_PER_DEAL distinct lenders around an account's favourites (a skewed
# pick, so a few hundred lenders get most of an account's placements), sent within a week of the deal's
# date; outcome by a hash of the row. Dates are relative to now(), so the decay sees three years.
PLACEMENTS_SQL = """
WITH d AS (
    SELECT id, account_id, row_number() OVER (ORDER BY id) AS n FROM deals_deal
),
raw AS (
    SELECT d.id AS deal_id, d.n, d.account_id, k,
           now() - ((d.n * 7919) %% %(span)s) * interval '1 day' + k * interval '5 hours' AS sent_at,
           (d.n * 1000003 + k * 7907) %% 1000 AS roll
    FROM d CROSS JOIN generate_series(0, %(per_deal)s - 1) AS k
),
rows AS (
    SELECT deal_id, sent_at, roll,
           (%(lenders)s::bigint[])[1 + ((account_id * 37 + floor(%(lender_count)s * power(((n * 2654435761) %% 1000)
               / 1000.0, 2))::int + k * 97) %% %(lender_count)s)] AS lender_id,
           CASE WHEN sent_at > now() - interval '21 days' AND roll < 700 THEN 'sent'
                WHEN roll < 150 THEN 'quoted'
                WHEN roll < 300 THEN 'lost'
                WHEN roll < 600 THEN 'declined'
                WHEN roll < 800 THEN 'no_response'
                ELSE 'sent' END AS status
    FROM raw
)
INSERT INTO deals_placement (deal_id, lender_id, contact_name, contact_email, status, notes, sent_at,
                             first_response_at, decided_at, created_at, updated_at)
SELECT deal_id, lender_id, '', '', status, '', sent_at,
       CASE WHEN status IN ('quoted', 'lost', 'declined') THEN sent_at + (1 + roll %% 9) * interval '1 day' END,
       CASE WHEN status IN ('lost', 'declined') THEN sent_at + (3 + roll %% 20) * interval '1 day' END,
       sent_at, now()
FROM rows
"""

# Half the deals with a quote are won by their first quoted placement.
WINNERS_SQL = """
UPDATE deals_placement p SET status = 'won', decided_at = p.sent_at + interval '40 days'
FROM (SELECT DISTINCT ON (deal_id) id, deal_id FROM deals_placement WHERE status IN ('quoted', 'lost')
      ORDER BY deal_id, id) first
WHERE p.id = first.id AND first.deal_id %% 2 = 0
"""

TERM_SHEETS_SQL = """
INSERT INTO deals_termsheet (placement_id, deal_id, quote_type, loan_amount, rate_type, fixed_rate, rate_index,
                             interest_only_months, recourse, prepayment, winning, notes, received_at, created_at,
                             updated_at)
SELECT p.id, p.deal_id, 'term_sheet', 10000000, 'fixed', 6.25, '', 0, '', '', p.status = 'won', '',
       p.first_response_at + interval '1 day', now(), now()
FROM deals_placement p WHERE p.status IN ('quoted', 'lost', 'won')
"""


def seed(rng: random.Random) -> dict:
    """The accounts, lenders, deals, placements and term sheets; counts and seconds taken."""
    from deals.demo.directory import seed_directory
    from deals.models import Deal, DealFinancials, DealProperty
    from lenders.models import Lender
    from lev.accounts.services import account_create

    began = time.perf_counter()
    seed_directory(LENDERS, seed=5)
    lender_ids = list(Lender.objects.order_by("id").values_list("id", flat=True)[:LENDERS])
    accounts = [account_create(name=f"Signals Benchmark {n}") for n in range(ACCOUNTS)]
    deals = []
    for account in accounts:
        for n in range(DEALS_PER_ACCOUNT):
            amount = Decimal(round(2e6 * (60 ** rng.random()), -4))  # $2M-$120M, log-uniform
            deals.append(Deal(account=account, title=f"Deal {n}", loan_amount=amount,
                              loan_type=rng.choice(LOAN_TYPES), transaction_type=rng.choice(TRANSACTIONS),
                              business_plan=rng.choice(PLANS)))
    Deal.objects.bulk_create(deals, batch_size=2000)
    properties, financials = [], []
    for deal in deals:
        for n in range(1 + (rng.random() < 0.15)):  # 15 % of the deals have two properties
            properties.append(DealProperty(deal=deal, name=f"Property {n}", state=rng.choice(STATES),
                                           asset_type=rng.choice(ASSET_TYPES)))
        ltv = rng.uniform(0.50, 0.80)
        value = (deal.loan_amount / Decimal(ltv)).quantize(Decimal(1))
        rate = Decimal("6.25")
        noi = (deal.loan_amount * Decimal("0.075") * Decimal(rng.uniform(1.1, 1.6))).quantize(Decimal(1))
        financials.append(DealFinancials(deal=deal, estimated_value=value, in_place_noi=noi, interest_rate=rate))
    DealProperty.objects.bulk_create(properties, batch_size=5000)
    DealFinancials.objects.bulk_create(financials, batch_size=5000)
    with connection.cursor() as cursor:
        cursor.execute(PLACEMENTS_SQL, {"span": SPAN_DAYS, "per_deal": LENDERS_PER_DEAL, "lenders": lender_ids,
                                        "lender_count": len(lender_ids)})
        cursor.execute(WINNERS_SQL, {})
        cursor.execute(TERM_SHEETS_SQL)
        cursor.execute("VACUUM ANALYZE")
        cursor.execute("SELECT status, count(*) FROM deals_placement GROUP BY status ORDER BY 2 DESC")
        statuses = dict(cursor.fetchall())
        cursor.execute("SELECT count(*) FROM deals_termsheet")
        term_sheets = cursor.fetchone()[0]
        cursor.execute("SELECT count(DISTINCT (d.account_id, p.lender_id)), count(DISTINCT p.lender_id) "
                       "FROM deals_placement p JOIN deals_deal d ON d.id = p.deal_id")
        pairs, lenders_used = cursor.fetchone()
    return {"seconds": time.perf_counter() - began, "deals": len(deals), "properties": len(properties),
            "placements": sum(statuses.values()), "statuses": statuses, "term_sheets": term_sheets,
            "pairs": pairs, "lenders": lenders_used}


def phases() -> dict[str, float]:
    """One refresh, phase by phase, the way `refresh_lender_signals` runs them (seconds each)."""
    from django.db import transaction
    from django.utils import timezone

    from deals.searches.ranking import evidence as ev
    from lenders.models import LenderSignal

    out = {}
    now = timezone.now()
    t = time.perf_counter()
    found = list(ev.observations(as_of=now))
    out["read placements + first quotes"] = time.perf_counter() - t
    t = time.perf_counter()
    ev.features_of_deals(o.deal_id for o in found)
    out["deal features"] = time.perf_counter() - t
    t = time.perf_counter()
    per_account, _count = ev.tally(found, as_of=now)  # reads the features again (a few hundred ms)
    out["tally (features read again inside)"] = time.perf_counter() - t
    t = time.perf_counter()
    pooled = ev.pooled_tallies(per_account)
    out["pool"] = time.perf_counter() - t
    with transaction.atomic():
        t = time.perf_counter()
        LenderSignal.objects.all().delete()
        out["delete the old rows"] = time.perf_counter() - t
        t = time.perf_counter()
        written = ev.write_signal_rows(ev.signal_rows(per_account, pooled, now=now))
        out[f"write {written:,} rows (COPY)"] = time.perf_counter() - t
        transaction.set_rollback(True)  # the stored rows stay those of the last timed refresh
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="Timed refreshes (min, median, max shown).")
    parser.add_argument("--no-phases", action="store_true", help="Skip the phase-by-phase refresh.")
    parser.add_argument("--keepdb", action="store_true", help="Keep the benchmark database afterwards.")
    args = parser.parse_args()
    from bench.own_database import own_database
    from deals.models import Placement
    from deals.searches.ranking.evidence import refresh_lender_signals
    from lenders.models import LenderSignal

    with own_database("signals_bench", keepdb=args.keepdb):
        if not Placement.objects.exists():
            seeded = seed(random.Random(37))
            print(f"seeded in {seeded['seconds']:.1f} s: {ACCOUNTS} accounts, {seeded['lenders']:,} lenders placed "
                  f"with, {seeded['deals']:,} deals ({seeded['properties']:,} properties), "
                  f"{seeded['placements']:,} placements ({seeded['pairs']:,} account-lender pairs), "
                  f"{seeded['term_sheets']:,} term sheets", flush=True)
            print("statuses: " + ", ".join(f"{k} {v:,}" for k, v in seeded["statuses"].items()), flush=True)
        walls, stats = [], None
        for n in range(args.repeat):
            began, cpu = time.perf_counter(), time.process_time()
            stats = refresh_lender_signals()
            walls.append(time.perf_counter() - began)
            print(f"refresh {n + 1}: {walls[-1]:.1f} s, of it {time.process_time() - cpu:.1f} s CPU in this process "
                  f"({stats.placements:,} placements with an outcome, {stats.rows:,} rows)", flush=True)
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FILTER (WHERE account_id IS NULL), count(*), "
                           "pg_size_pretty(pg_total_relation_size('lenders_lendersignal')) FROM lenders_lendersignal")
            pooled, total, size = cursor.fetchone()
        print(f"\nPostgreSQL {connection.pg_version // 10000}; refresh_lender_signals over "
              f"{Placement.objects.count():,} placements: min {min(walls, default=0):.1f} s, median "
              f"{statistics.median(walls) if walls else 0:.1f} s, max {max(walls, default=0):.1f} s "
              f"({'under' if max(walls) <= 60 else 'OVER'} the 60 s budget)")
        print(f"rows: {total:,} ({pooled:,} pooled, {LenderSignal.objects.values('account').distinct().count() - 1} "
              f"accounts), table with indexes {size}")
        if not args.no_phases:
            print("\nphases of one more refresh (rolled back):")
            for name, seconds in phases().items():
                print(f"  {name:<40} {seconds:>6.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
