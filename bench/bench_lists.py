"""Benchmark: list pages against the size of what is listed.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/lev .venv/bin/python bench/bench_lists.py [--explain]

Runs in its own database on the DATABASE_URL server (`<name>_lists_bench`, created and dropped here;
--keepdb keeps and reuses it). Two accounts, one with 1,000 deals and one with 100,000 (one property
each; written with INSERT … SELECT over generate_series in seconds), are listed side by side in one
run, interleaved call by call: the first page and a deep page (90 % of the way through), through the
REST API (`GET /api/v1/deals/`, in-process through the whole middleware stack) and through the MCP
tool (`list_deals`, which calls the REST API as every tool does). Then the lender directory
(`search_lender_directory`, `GET /api/v1/lenders/`) at 1,000 and then 100,000 lenders (two programs
each). Each cell is the median of --calls calls in ms; "x" is the large size over the small one, the
number that says whether a page costs more in a bigger account. SQL queries per page are counted too.

A deep page is reached the way a client reaches it: by a cursor when the API hands one out (a page
number request answers with a cursor `next` link), else by page number (OFFSET) as before.
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `python bench/<this>.py`
from bench._django import setup

setup(unthrottled=True, statement_timeout=False)


from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

SMALL, LARGE = 1_000, 100_000
PAGE = 20
STATES = ["TX", "FL", "CA", "NY", "GA", "AZ", "NC", "CO", "IL", "TN"]

DEALS_SQL = """
INSERT INTO deals_deal (account_id, title, loan_amount, loan_type, transaction_type, business_plan, description,
                        estimated_close_date, archived, created_at, updated_at, version)
SELECT %(account)s, 'Bench deal ' || g,
       CASE WHEN g %% 10 = 0 THEN NULL ELSE 1000000 + (g * 7919) %% 50000000 END,
       (ARRAY['permanent','construction','light_bridge','heavy_bridge'])[1 + g %% 4], 'acquisition', 'stabilized', '',
       CASE WHEN g %% 7 = 0 THEN NULL ELSE date '2026-01-01' + (g %% 700) END,
       false, now() - g * interval '1 minute', now() - g * interval '1 minute', 1
FROM generate_series(1, %(count)s) g
"""
PROPERTIES_SQL = """
INSERT INTO deals_dealproperty (deal_id, name, address, city, state, zip, asset_type, created_at, updated_at)
SELECT id, 'P', '', '', (%(states)s::text[])[1 + id %% 10], '', 'multifamily', now(), now()
FROM deals_deal WHERE account_id = %(account)s
"""
LENDERS_SQL = """
INSERT INTO lenders_lender (name, website, city, state, about, lender_types, category, lender_type_mask,
                            created_at, updated_at)
SELECT 'Lender ' || lpad(g::text, 7, '0'), '', 'Dallas', (%(states)s::text[])[1 + g %% 10], '', '["bank"]', '',
       1, now(), now()
FROM generate_series(%(start)s, %(stop)s - 1) g
"""
PROGRAMS_SQL = """
INSERT INTO lenders_lenderprogram (lender_id, title, loan_types, recourse_types, min_loan_amount, max_loan_amount,
                                   capital_source_type, positions, sponsor_states, asset_types, status,
                                   loan_type_mask, position_mask, state_mask, asset_type_mask, created_at, updated_at)
SELECT l.id, 'Program ' || k, '["permanent"]', '[]', 1000000 * k, 50000000 * k, '', '["senior"]', '[]',
       '["multifamily"]', 'active', 1, 1, 0, 1, now(), now()
FROM lenders_lender l CROSS JOIN generate_series(1, 2) k WHERE l.id > %(after)s
"""


def b64(raw: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(raw, separators=(",", ":")).encode()).decode().rstrip("=")


class Door:
    """One account's REST client and MCP request."""

    def __init__(self, name: str, count: int):
        from django.contrib.auth import get_user_model
        from django.test import RequestFactory
        from rest_framework.test import APIClient

        from lev.accounts.services import account_create, api_key_create

        user = get_user_model().objects.create(username=f"bench-{name}")
        self.account = account_create(name=f"Lists {name}", owner=user)
        _key, raw = api_key_create(user=user, account=self.account, name="bench")
        self.api = APIClient()
        self.api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        self.request = RequestFactory().post("/mcp", HTTP_AUTHORIZATION=f"Bearer {raw}")
        self.count = count

    def rest(self, url: str) -> dict:
        response = self.api.get(url)
        assert response.status_code == 200, (response.status_code, response.content[:300])
        return response.json()

    def mcp(self, tool: str, arguments: dict) -> dict:
        from mcp_tools.server import get_server

        result = get_server().call_tool_sync(tool, arguments, self.request)
        payload = json.loads(result.content[0].text)
        assert not result.isError, payload
        return payload


def deep(door: Door, path: str, total: int) -> tuple[str, dict]:
    """(REST URL, MCP arguments) of the page 90 % of the way through a list of `total` items."""
    page = max(2, int(total * 0.9) // PAGE)
    body = door.rest(f"{path}?page_size={PAGE}&page={page - 1}")
    if "cursor=" in (body["next"] or ""):  # the API pages by cursor: reach the page as a client does
        cursor = parse_qs(urlsplit(body["next"]).query)["cursor"][0]
        return f"{path}?page_size={PAGE}&cursor={cursor}", {"limit": PAGE, "cursor": cursor}
    return f"{path}?page_size={PAGE}&page={page}", {"limit": PAGE, "cursor": b64({"p": page, "l": PAGE})}


def timed(fn, calls: int) -> float:
    fn()  # warm-up
    walls = []
    for _ in range(calls):
        began = time.perf_counter()
        fn()
        walls.append((time.perf_counter() - began) * 1000)
    return statistics.median(walls)


def queries(fn) -> int:
    with CaptureQueriesContext(connection) as captured:
        fn()
    return len(captured)


def explain(fn, label: str) -> str:
    """EXPLAIN ANALYZE of the page's list query (the one reading the listed table with a LIMIT)."""
    with CaptureQueriesContext(connection) as captured:
        fn()
    listed = [q["sql"] for q in captured if "LIMIT" in q["sql"] and ("deals_deal" in q["sql"].split("WHERE")[0]
                                                                     or "lenders_lender" in q["sql"].split("WHERE")[0])]
    out = []
    with connection.cursor() as cursor:
        for sql in listed:
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS OFF) " + sql)
            out.append("\n".join(row[0] for row in cursor.fetchall()))
    return f"\n-- {label}\n" + "\n\n".join(out)


def row(label: str, small: float, large: float, q_small: int, q_large: int) -> str:
    return f"| {label} | {small:.1f} | {large:.1f} | {large / small:.2f}x | {q_small} / {q_large} |"


def bench_deals(calls: int, show_plans: bool) -> tuple[list[str], list[str]]:
    doors = []
    for name, count in (("small", SMALL), ("large", LARGE)):
        door = Door(name, count)
        with connection.cursor() as cursor:
            cursor.execute(DEALS_SQL, {"account": door.account.pk, "count": count})
            cursor.execute(PROPERTIES_SQL, {"account": door.account.pk, "states": STATES})
        doors.append(door)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    targets = []
    for door in doors:
        rest_deep, mcp_deep = deep(door, "/api/v1/deals/", door.count)
        targets.append({
            "REST first page": lambda d=door: d.rest(f"/api/v1/deals/?page_size={PAGE}"),
            "REST deep page": lambda d=door, u=rest_deep: d.rest(u),
            "REST first page, ordering=loan_amount": lambda d=door: d.rest(
                f"/api/v1/deals/?page_size={PAGE}&ordering=loan_amount"),
            "MCP list_deals first page": lambda d=door: d.mcp("list_deals", {"limit": PAGE}),
            "MCP list_deals deep page": lambda d=door, a=mcp_deep: d.mcp("list_deals", a),
        })
    lines, plans = [], []
    for label in targets[0]:
        results: list[list[float]] = [[], []]
        for _ in range(3):  # interleaved rounds: drift on a shared machine hits both sizes alike
            for i, target in enumerate(targets):
                results[i].append(timed(target[label], calls // 3))
        small, large = statistics.median(results[0]), statistics.median(results[1])
        lines.append(row(f"deals: {label}", small, large, queries(targets[0][label]), queries(targets[1][label])))
        print(lines[-1], flush=True)
    if show_plans:
        for label in ("REST first page", "REST deep page", "REST first page, ordering=loan_amount"):
            plans.append(explain(targets[1][label], f"{LARGE:,} deals: {label}"))
    return lines, plans


def bench_directory(calls: int, show_plans: bool) -> tuple[list[str], list[str]]:
    door = Door("directory", 0)
    measured: dict[str, list[tuple[float, int]]] = {}
    have, plans = 0, []
    for size in (SMALL, LARGE):
        with connection.cursor() as cursor:
            cursor.execute("SELECT COALESCE(MAX(id), 0) FROM lenders_lender")
            after = cursor.fetchone()[0]
            cursor.execute(LENDERS_SQL, {"start": have, "stop": size, "states": STATES})
            cursor.execute(PROGRAMS_SQL, {"after": after})
            cursor.execute("ANALYZE")
        have = size
        rest_deep, mcp_deep = deep(door, "/api/v1/lenders/", size)
        targets = {
            "REST first page": lambda: door.rest(f"/api/v1/lenders/?page_size={PAGE}"),
            "REST deep page": lambda u=rest_deep: door.rest(u),
            "MCP search_lender_directory first page": lambda: door.mcp("search_lender_directory", {"limit": PAGE}),
            "MCP search_lender_directory deep page": lambda a=mcp_deep: door.mcp("search_lender_directory", a),
        }
        for label, fn in targets.items():
            measured.setdefault(label, []).append((timed(fn, calls), queries(fn)))
        if show_plans and size == LARGE:
            plans.append(explain(targets["REST deep page"], f"{LARGE:,} lenders: REST deep page"))
    lines = []
    for label, ((small, q_small), (large, q_large)) in measured.items():
        lines.append(row(f"directory: {label}", small, large, q_small, q_large))
        print(lines[-1], flush=True)
    return lines, plans


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=30, help="Timed calls per cell (median shown).")
    parser.add_argument("--explain", action="store_true", help="Print EXPLAIN ANALYZE of the large pages.")
    parser.add_argument("--keepdb", action="store_true", help="Keep the benchmark database afterwards.")
    args = parser.parse_args()
    from bench.own_database import own_database

    with own_database("lists_bench", keepdb=args.keepdb):
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE lenders_lenderprogram, lenders_lender, deals_dealproperty, deals_deal, "
                           "deals_apikey, deals_membership, deals_account, auth_user RESTART IDENTITY CASCADE")
        print(f"PostgreSQL {connection.pg_version // 10000}; page of {PAGE}; median of {args.calls} calls (ms); "
              f"x = large / small; queries per page small / large\n", flush=True)
        print(f"| list (small = {SMALL:,}, large = {LARGE:,}) | small ms | large ms | x | queries |")
        print("|---|---|---|---|---|", flush=True)
        _, deal_plans = bench_deals(args.calls, args.explain)
        _, dir_plans = bench_directory(args.calls, args.explain)
        for plan in deal_plans + dir_plans:
            print(plan)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
