"""Benchmark: the lender activity recompute over 100k and 1M placements (20 % of them quoted: 20k and
200k term sheets), and compare_term_sheets for a deal with 10, 50 and 200 quotes.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/lev .venv/bin/python bench/bench_placements.py

Runs in its own database on the DATABASE_URL server (`<name>_placements_bench`, created and dropped
here; --keepdb keeps and reuses it). Placements and term sheets are written with INSERT … SELECT over
generate_series (1M rows in seconds), spread over 5,000 lenders, a tenth as many deals as placements
and 17 markets, with the same status mix and timestamps across a 180-day span at every size, so the
two sizes differ only in volume. "Recompute" is the wall time of `lender_activity_recompute` (what the
hourly Celery task runs: one transaction that rewrites LenderActivity and scores it). The comparison
is timed three ways: the service alone, the REST endpoint, and the MCP tool (in-process, through the
REST API as every tool call goes).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `python bench/<this>.py`
from bench._django import setup

# Writing a million rows in one statement takes longer than a web request may; the recompute sets its
# own limit (LEV_ACTIVITY_STATEMENT_TIMEOUT_MS) as it does in production.
setup(unthrottled=True, statement_timeout=False)

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402

LENDERS = 5000
MARKETS = ["TX", "FL", "CA", "NY", "GA", "AZ", "NC", "CO", "IL", "TN", "WA", "OH", "PA", "MA", "MN", "NV", "UT"]
SPAN_SECONDS = 180 * 86400

PLACEMENTS_SQL = """
WITH d AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM deals_deal WHERE account_id = %(account)s),
raw AS (
    SELECT g AS i, g %% %(deals)s AS dn, g / %(deals)s AS k FROM generate_series(%(start)s, %(stop)s - 1) g
),
rows AS (
    SELECT raw.i, d.id AS deal_id,
           (%(lenders)s::bigint[])[1 + ((raw.dn * 31 + raw.k * 997) %% %(lender_count)s)] AS lender_id,
           CASE WHEN raw.k = 0 AND raw.dn %% 3 = 0 THEN 'won'
                WHEN (raw.i * 13) %% 100 < 30 THEN 'declined'
                WHEN (raw.i * 13) %% 100 < 45 THEN 'no_response'
                WHEN (raw.i * 13) %% 100 < 70 THEN 'lost'
                ELSE 'quoted' END AS status,
           now() - ((raw.i * 37) %% %(span)s) * interval '1 second' AS sent_at
    FROM raw JOIN d ON d.n = raw.dn
)
INSERT INTO deals_placement (deal_id, lender_id, contact_name, contact_email, status, notes, sent_at,
                             first_response_at, decided_at, created_at, updated_at)
SELECT deal_id, lender_id, '', '', status, '', sent_at,
       CASE WHEN status <> 'no_response' THEN sent_at + ((i * 53) %% 345600) * interval '1 second' END,
       CASE WHEN status IN ('won', 'lost', 'declined') THEN sent_at + interval '20 days' END,
       sent_at, now()
FROM rows
"""

TERM_SHEETS_SQL = """
INSERT INTO deals_termsheet (placement_id, deal_id, quote_type, loan_amount, rate_type, fixed_rate, rate_index,
                             interest_only_months, recourse, prepayment, winning, notes, received_at, created_at,
                             updated_at)
SELECT p.id, p.deal_id, 'term_sheet', 10000000, 'fixed', 6.25, '', 0, '', '', p.status = 'won', '',
       COALESCE(p.first_response_at, p.sent_at) + interval '2 days', now(), now()
FROM deals_placement p WHERE p.id > %(after)s AND p.id %% 5 = 0
"""


def grow(account_id: int, deals: int, start: int, stop: int, lender_ids: list[int]) -> float:
    """Add placements start..stop-1 (and a quote on every fifth); seconds taken."""
    began = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SELECT COALESCE(MAX(id), 0) FROM deals_placement")
        after = cursor.fetchone()[0]
        cursor.execute(PLACEMENTS_SQL, {"account": account_id, "deals": deals, "start": start, "stop": stop,
                                        "lenders": lender_ids, "lender_count": len(lender_ids), "span": SPAN_SECONDS})
        cursor.execute(TERM_SHEETS_SQL, {"after": after})
        cursor.execute("ANALYZE")
    return time.perf_counter() - began


def make_deals(count: int):
    from lev.accounts.services import account_create

    account = account_create(name="Placement Benchmark")
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO deals_deal (account_id, title, loan_amount, loan_type, transaction_type, business_plan, "
            "description, archived, created_at, updated_at, version) "
            "SELECT %s, 'Bench deal ' || g, 10000000, 'permanent', 'acquisition', 'stabilized', '', false, now(), "
            "now(), 1 FROM generate_series(1, %s) g", [account.pk, count])
        cursor.execute(
            "INSERT INTO deals_dealproperty (deal_id, name, address, city, state, zip, asset_type, created_at, "
            "updated_at) SELECT id, 'P', '', '', (%s::text[])[1 + (id * 7) %% %s], '', 'multifamily', now(), now() "
            "FROM deals_deal WHERE account_id = %s", [MARKETS, len(MARKETS), account.pk])
    return account


def timed(fn, repeat: int) -> tuple[float, float, float, object]:
    walls, result = [], None
    for _ in range(repeat):
        began = time.perf_counter()
        result = fn()
        walls.append((time.perf_counter() - began) * 1000)
    return statistics.median(walls), min(walls), max(walls), result


def bench_recompute(sizes: list[int], repeat: int) -> list[str]:
    from deals.demo.directory import seed_directory
    from deals.models import Placement, TermSheet
    from deals.placements.activity import lender_activity_recompute
    from lenders.models import Lender

    seed_directory(LENDERS, seed=3)
    lender_ids = list(Lender.objects.order_by("id").values_list("id", flat=True)[:LENDERS])
    deals = max(sizes) // 10
    account = make_deals(deals)
    lines, have, first = [], 0, None
    header = (f"{'placements':>11} {'term sheets':>12} {'written in':>10} {'recompute ms':>13} {'min-max':>13} "
              f"{'lender markets':>15} {'x first':>8}")
    lines += [header, "-" * len(header)]
    for size in sizes:
        seconds = grow(account.pk, deals, have, size, lender_ids)
        have = size
        median, low, high, written = timed(lender_activity_recompute, repeat)
        first = first or median
        lines.append(f"{Placement.objects.count():>11,} {TermSheet.objects.count():>12,} {seconds:>9.1f}s "
                     f"{median:>13.0f} {low:>6.0f}-{high:<6.0f} {written:>15,} {median / first:>7.1f}x")
        print(lines[-1], flush=True)
    return lines


def bench_comparison(counts: list[int], repeat: int) -> list[str]:
    from django.test import RequestFactory
    from rest_framework.test import APIClient

    from deals.models import Deal, DealFinancials, DealProperty
    from deals.placements import services
    from deals.placements.comparison import term_sheet_comparison
    from lenders.models import Lender
    from lenders.rates.services import market_rate_set
    from lev.accounts.models import Membership
    from lev.accounts.services import account_create, api_key_create
    from mcp_tools.server import get_server

    user = get_user_model().objects.create(username="bench-compare")
    account = account_create(name="Comparison Benchmark", owner=user)
    assert Membership.objects.filter(user=user, account=account).exists()
    _key, raw = api_key_create(user=user, account=account, name="bench")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    request = RequestFactory().post("/mcp", HTTP_AUTHORIZATION=f"Bearer {raw}")
    market_rate_set(index="sofr", rate=Decimal("4.31"))
    lender_ids = list(Lender.objects.order_by("id").values_list("id", flat=True)[: max(counts)])
    header = (f"{'quotes':>6} {'service ms':>10} {'REST ms':>8} {'MCP ms':>7} {'MCP bytes':>10} "
              f"{'queries':>8}")
    lines = [header, "-" * len(header)]
    for count in counts:
        deal = Deal.objects.create(account=account, title=f"{count} quotes", loan_amount=Decimal("20000000"))
        DealProperty.objects.create(deal=deal, name="P", state="TX", asset_type="multifamily")
        DealFinancials.objects.create(deal=deal, estimated_value=Decimal("30000000"), in_place_noi=Decimal("1800000"))
        batch = services.placements_create(deal=deal, lender_ids=lender_ids[:count], send=True)
        for n, placement in enumerate(batch.created):
            terms = ({"rate_type": "fixed", "fixed_rate": Decimal("5.5") + Decimal(n % 40) / 20}
                     if n % 2 else {"rate_type": "floating", "rate_index": "sofr", "spread_bps": 200 + 5 * (n % 60)})
            services.term_sheet_add(placement=placement, data={
                "loan_amount": Decimal(17_000_000 + 50_000 * (n % 80)), "term_months": 60 + 12 * (n % 6),
                "amortization_months": 360 if n % 3 else None, "interest_only_months": 12 * (n % 3),
                "origination_fee_percent": Decimal("0.5") + Decimal(n % 5) / 4, "recourse": "full" if n % 4 else "",
                "min_dscr": Decimal("1.25"), "max_ltv": Decimal("70"), **terms})
        service, *_ = timed(lambda deal=deal: term_sheet_comparison(deal=deal), repeat)
        rest, *_ = timed(lambda deal=deal: api.get(f"/api/v1/deals/{deal.pk}/term-sheets/comparison/"), repeat)
        arguments = {"deal_id": deal.pk, "limit": min(count, 100)}
        mcp, _low, _high, result = timed(
            lambda arguments=arguments: get_server().call_tool_sync("compare_term_sheets", arguments, request), repeat)
        assert not result.isError and json.loads(result.content[0].text)["count"] == count
        size = len(result.content[0].text.encode())
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as queries:
            term_sheet_comparison(deal=deal)
        lines.append(f"{count:>6} {service:>10.1f} {rest:>8.1f} {mcp:>7.1f} {size:>10,} {len(queries):>8}")
        print(lines[-1], flush=True)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,1000000", help="Placement counts (ascending).")
    parser.add_argument("--quotes", default="10,50,200", help="Quotes per compared deal.")
    parser.add_argument("--repeat", type=int, default=3, help="Timed recomputes per size (median shown).")
    parser.add_argument("--keepdb", action="store_true", help="Keep the benchmark database afterwards.")
    args = parser.parse_args()
    from bench.own_database import own_database

    with own_database("placements_bench", keepdb=args.keepdb):
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE deals_termsheet, deals_placement, lenders_marketrate, lenders_lenderactivity, "
                           "lenders_lenderprogram, lenders_lender, deals_dealproperty, deals_dealfinancials, "
                           "deals_deal, deals_apikey, deals_membership, deals_account, auth_user "
                           "RESTART IDENTITY CASCADE")
        print(f"PostgreSQL {connection.pg_version // 10000}, {LENDERS:,} lenders, {len(MARKETS)} markets; "
              f"recompute: median of {args.repeat}", flush=True)
        recompute = bench_recompute(sorted(int(s) for s in args.sizes.split(",")), args.repeat)
        print(flush=True)
        comparison = bench_comparison([int(c) for c in args.quotes.split(",")], repeat=30)
    print("\nActivity recompute\n" + "\n".join(recompute))
    print("\ncompare_term_sheets (median of 30; MCP returns the best min(quotes, 100))\n" + "\n".join(comparison))
    return 0


if __name__ == "__main__":
    sys.exit(main())
