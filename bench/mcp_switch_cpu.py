#!/usr/bin/env python
"""In-process A/B of boolean switches on one MCP `tools/call get_deal` (issue 24): each call a whole WSGI
request through lev.wsgi.application on this thread, the variants (a switch on, off) interleaved call by call
in an order shuffled per block, the thread's CPU time being the request's own work (the machine is shared:
wall time is other processes' too).
Every answer must be byte for byte the first one's, whatever the switches.

    DATABASE_URL=postgres://... REDIS_URL=redis://... LEV_RATE_LIMIT_READS=10000000/min \\
        python bench/mcp_switch_cpu.py --switch LEV_MCP_LEAN_MIDDLEWARE [--switch ...] [--calls 1500] [--rounds 3]

Each switch is A/Bed on its own (the others at their defaults), plus all listed switches off together.
`--serializer`: each call is `DealSerializer(deal).data` of the same demo deal (read once, with its stage,
owner, sponsor and borrower), its JSON compared, instead of a whole MCP call.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def mcp_call(key: str, deal_id: int):
    """One whole `tools/call get_deal` through lev.wsgi, and what of its answer must not change: the body
    and every header but the request id."""
    import lev.wsgi
    from bench._django import mcp_environ, wsgi_call

    app = lev.wsgi.application
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "get_deal", "arguments": {"deal_id": deal_id}}}).encode()

    def call() -> tuple[str, list, bytes]:
        return wsgi_call(app, mcp_environ(key, body))

    def digest(answer: tuple[str, list, bytes]) -> tuple[bytes, list]:
        status, headers, out = answer
        assert status.startswith("200"), (status, out[:300])
        return out, [(k, v) for k, v in headers if k != "X-Request-Id"]

    return call, digest


def deal_data_call(deal_id: int):
    """`DealSerializer(deal).data` of the deal as get_deal reads it (deals.selectors.deal_get, once), and its
    JSON, rendered outside the timed call."""
    from rest_framework.renderers import JSONRenderer

    from deals.models import Deal
    from deals.selectors import deal_get
    from deals.serializers import DealSerializer

    deal = deal_get(account=Deal.objects.get(pk=deal_id).account, deal_id=deal_id, include=frozenset())
    return (lambda: DealSerializer(deal).data), JSONRenderer().render


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--switch", action="append", required=True, help="a boolean setting (repeatable)")
    parser.add_argument("--calls", type=int, default=1500, help="calls per variant per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serializer", action="store_true",
                        help="time DealSerializer(deal).data of the demo deal, not a whole MCP call")
    args = parser.parse_args()
    from bench.run import demo_key_and_deal

    key, deal_id = demo_key_and_deal()
    from django.conf import settings

    call, digest = deal_data_call(deal_id) if args.serializer else mcp_call(key, deal_id)
    unit, scale = ("µs", 1e6) if args.serializer else ("ms", 1e3)

    defaults = {name: getattr(settings, name) for name in args.switch}
    variants = [("all on", {})] + [(f"{name} off", {name: False}) for name in args.switch]
    if len(args.switch) > 1:
        variants.append(("all listed off", dict.fromkeys(args.switch, False)))

    def apply(overrides: dict) -> None:
        for name in args.switch:
            setattr(settings, name, overrides.get(name, defaults[name]))

    reference = None
    for _, overrides in variants:  # warm up; every variant answers the same bytes
        apply(overrides)
        for _ in range(200):
            answer = digest(call())
        reference = reference or answer
        assert answer == reference, (answer, reference)
    cpu: dict = {v: [] for v, _ in variants}
    wall: dict = {v: [] for v, _ in variants}
    per_round: dict = {v: [] for v, _ in variants}
    # Each block of calls runs every variant once, in an order shuffled per block: a call's cost depends on
    # the call before it (a DRF-way call leaves the caches cold), and a fixed rotation would give each
    # variant the same predecessor every time (with three or more variants, "all on" always came right
    # after "all listed off").
    order = random.Random(24)
    for _ in range(args.rounds):
        start = {v: len(cpu[v]) for v, _ in variants}
        for _ in range(args.calls):
            for name, overrides in order.sample(variants, len(variants)):
                apply(overrides)
                t0, c0 = time.perf_counter(), time.thread_time()
                answer = call()
                cpu[name].append(time.thread_time() - c0)
                wall[name].append(time.perf_counter() - t0)
                assert digest(answer) == reference
        for v, _ in variants:
            per_round[v].append(statistics.median(cpu[v][start[v]:]) * scale)
    apply({})
    load = Path("/proc/loadavg").read_text().split()[:3]
    base = statistics.median(cpu["all on"])
    print(f"{args.rounds} rounds x {args.calls} calls per variant, interleaved; load average {' '.join(load)} after")
    print(f"| variant | median thread CPU {unit} | CPU / all on | median CPU per round | mean thread CPU {unit} | "
          f"p50 wall {unit} |")
    print("|---|---|---|---|---|---|")
    for v, _ in variants:
        median = statistics.median(cpu[v])
        print(f"| {v} | {median * scale:.3f} | {median / base:.3f}x | "
              f"{' / '.join(f'{x:.3f}' for x in per_round[v])} | {statistics.mean(cpu[v]) * scale:.3f} | "
              f"{statistics.median(wall[v]) * scale:.3f} |")


if __name__ == "__main__":
    main()
