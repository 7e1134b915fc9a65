#!/usr/bin/env python
"""The worker's own time for one MCP `tools/call get_deal`, in process (issue 24): /mcp through the full
middleware stack or through lev.handlers.EndpointHandler, with Django's `SELECT 1` connection health check
or lev.postgresql's socket check. A companion to bench/ab_shortcuts.py (the production servers, whose
wall-clock p50 on a loaded shared machine is mostly other processes' time): here each call runs on this
thread, so its thread CPU time is this request's work alone, and the variants alternate call by call.

Each call is a whole WSGI request as gunicorn's worker makes it (lev.wsgi: request signals, so the kept
connection is health-checked at the first query as in production). The two health checks are the two
real implementations, chosen per call on the one connection (Django's is lev.postgresql's base class).

    DATABASE_URL=postgres://... REDIS_URL=redis://... python bench/mcp_request_cpu.py [--calls 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="calls per variant per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from bench._django import mcp_environ, wsgi_call
    from bench.run import demo_key_and_deal

    key, deal_id = demo_key_and_deal()
    from django.db import connections
    from django.db.backends.postgresql.base import DatabaseWrapper as DjangoPostgres

    import lev.wsgi
    from lev.handlers import EndpointHandler
    from mcp_tools.urls import ENDPOINT_MIDDLEWARE

    connection = connections["default"]  # the wrapper itself (django.db.connection is a proxy)
    if connection.settings_dict["ENGINE"] != "lev.postgresql":
        sys.exit("PostgreSQL (lev.postgresql) is what this compares")
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "get_deal", "arguments": {"deal_id": deal_id}}}).encode()
    handlers = {"full stack": lev.wsgi.django_application, "lean /mcp": EndpointHandler(ENDPOINT_MIDDLEWARE)}

    def call(handler) -> bytes:
        status, _headers, out = wsgi_call(handler, mcp_environ(key, body))
        assert status.startswith("200"), (status, out[:300])
        return out

    variants = [(h, check) for h in handlers for check in ("SELECT 1", "socket")]
    reference = None
    for name in handlers:  # warm up; every variant answers the same bytes
        for _ in range(200):
            out = call(handlers[name])
        reference = reference or out
        assert out == reference
    wall: dict = {v: [] for v in variants}
    cpu: dict = {v: [] for v in variants}
    per_round: dict = {v: [] for v in variants}
    for round_ in range(args.rounds):
        start = {v: len(wall[v]) for v in variants}
        for i in range(args.calls):
            for j in range(len(variants)):
                variant = variants[(i + j + round_) % len(variants)]
                handler, check = variant
                if check == "SELECT 1":  # Django's own check, on this connection, for this call
                    connection.close_if_health_check_failed = DjangoPostgres.close_if_health_check_failed.__get__(
                        connection)
                else:
                    connection.__dict__.pop("close_if_health_check_failed", None)
                t0, c0 = time.perf_counter(), time.thread_time()
                out = call(handlers[handler])
                cpu[variant].append(time.thread_time() - c0)
                wall[variant].append(time.perf_counter() - t0)
                assert out == reference
        for v in variants:
            per_round[v].append(statistics.median(wall[v][start[v]:]) * 1000)
    connection.__dict__.pop("close_if_health_check_failed", None)
    load = Path("/proc/loadavg").read_text().split()[:3]
    base = ("full stack", "SELECT 1")
    print(f"{args.rounds} rounds x {args.calls} calls per variant, interleaved; load average {' '.join(load)} after")
    print("| /mcp handler | health check | p50 ms | mean thread CPU ms | p50 / full + SELECT 1 | p50 per round |")
    print("|---|---|---|---|---|---|")
    for v in variants:
        p50 = statistics.median(wall[v]) * 1000
        print(f"| {v[0]} | {v[1]} | {p50:.3f} | {statistics.mean(cpu[v]) * 1000:.3f} | "
              f"{p50 / (statistics.median(wall[base]) * 1000):.3f}x | "
              f"{' / '.join(f'{x:.3f}' for x in per_round[v])} |")


if __name__ == "__main__":
    main()
