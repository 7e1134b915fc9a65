#!/usr/bin/env python
"""In-process A/B of boolean switches on one MCP `tools/call get_deal` (issue 24): each call a whole WSGI
request through lev.wsgi.application on this thread, the switch on and off alternating call by call, the
thread's CPU time being the request's own work (the machine is shared: wall time is other processes' too).
Every answer must be byte for byte the first one's, whatever the switches.

    DATABASE_URL=postgres://... REDIS_URL=redis://... LEV_RATE_LIMIT_READS=10000000/min \\
        python bench/mcp_switch_cpu.py --switch LEV_CSP_HEADER_CACHE [--switch ...] [--calls 1500] [--rounds 3]

Each switch is A/Bed on its own (the others at their defaults), plus all listed switches off together.
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
    parser.add_argument("--switch", action="append", required=True, help="a boolean setting (repeatable)")
    parser.add_argument("--calls", type=int, default=1500, help="calls per variant per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from bench._django import mcp_environ, wsgi_call
    from bench.run import demo_key_and_deal

    key, deal_id = demo_key_and_deal()
    from django.conf import settings

    import lev.wsgi

    app = lev.wsgi.application
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "get_deal", "arguments": {"deal_id": deal_id}}}).encode()

    def call() -> tuple[bytes, list]:
        status, headers, out = wsgi_call(app, mcp_environ(key, body))
        assert status.startswith("200"), (status, out[:300])
        # The request id differs per call; every other header and the body must not.
        return out, [(k, v) for k, v in headers if k != "X-Request-Id"]

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
            answer = call()
        reference = reference or answer
        assert answer == reference, (answer, reference)
    cpu: dict = {v: [] for v, _ in variants}
    wall: dict = {v: [] for v, _ in variants}
    per_round: dict = {v: [] for v, _ in variants}
    for round_ in range(args.rounds):
        start = {v: len(cpu[v]) for v, _ in variants}
        for i in range(args.calls):
            for j in range(len(variants)):
                name, overrides = variants[(i + j + round_) % len(variants)]
                apply(overrides)
                t0, c0 = time.perf_counter(), time.thread_time()
                answer = call()
                cpu[name].append(time.thread_time() - c0)
                wall[name].append(time.perf_counter() - t0)
                assert answer == reference
        for v, _ in variants:
            per_round[v].append(statistics.median(cpu[v][start[v]:]) * 1000)
    apply({})
    load = Path("/proc/loadavg").read_text().split()[:3]
    base = statistics.median(cpu["all on"])
    print(f"{args.rounds} rounds x {args.calls} calls per variant, interleaved; load average {' '.join(load)} after")
    print("| variant | median thread CPU ms | CPU / all on | median CPU per round | mean thread CPU ms | p50 wall ms |")
    print("|---|---|---|---|---|---|")
    for v, _ in variants:
        median = statistics.median(cpu[v])
        print(f"| {v} | {median * 1000:.3f} | {median / base:.3f}x | "
              f"{' / '.join(f'{x:.3f}' for x in per_round[v])} | {statistics.mean(cpu[v]) * 1000:.3f} | "
              f"{statistics.median(wall[v]) * 1000:.3f} |")


if __name__ == "__main__":
    main()
