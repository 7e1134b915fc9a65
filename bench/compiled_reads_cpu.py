#!/usr/bin/env python
"""Thread CPU per MCP `tools/call get_deal` in process, LEV_COMPILED_READS on vs off, interleaved call by
call in one run (issue 24; after /tmp/prof/prof.py): each call is a whole WSGI request through lev.wsgi
on this thread, so its thread CPU time is the request's own work. Every answer is compared byte for byte
between the two variants.

    DATABASE_URL=postgres://... REDIS_URL=redis://... LEV_RATE_LIMIT_READS=10000000/min \\
        python bench/compiled_reads_cpu.py [--calls 1500] [--rounds 3] [--include properties,financials]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lev.settings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1500, help="calls per variant per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--include", default="", help="get_deal's include, e.g. properties,financials")
    args = parser.parse_args()
    import django

    django.setup()
    from django.conf import settings

    from deals.models import Deal

    key = Path(settings.LEV_DEMO_KEY_FILE).read_text().strip()
    deal_id = Deal.objects.filter(account__slug="demo-capital").order_by("id").values_list("id", flat=True)[0]
    import lev.wsgi

    app = lev.wsgi.application
    arguments = {"deal_id": deal_id, **({"include": args.include.split(",")} if args.include else {})}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "get_deal", "arguments": arguments}}).encode()

    def call() -> bytes:
        environ = {"REQUEST_METHOD": "POST", "PATH_INFO": "/mcp", "SCRIPT_NAME": "", "QUERY_STRING": "",
                   "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)), "SERVER_NAME": "localhost",
                   "SERVER_PORT": "80", "HTTP_HOST": "localhost", "HTTP_ACCEPT": "application/json, text/event-stream",
                   "HTTP_AUTHORIZATION": f"Bearer {key}", "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http",
                   "wsgi.errors": io.StringIO(), "REMOTE_ADDR": "127.0.0.1", "wsgi.input_terminated": True}
        status = []
        response = app(environ, lambda s, h, exc_info=None: status.append(s))
        out = b"".join(response)
        response.close()
        assert status[0].startswith("200"), (status, out[:300])
        return out

    variants = {"compiled (on)": True, "ORM (off)": False}
    answers = {}
    for name, on in variants.items():  # warm both ways (PostgreSQL prepares after 5 runs)
        settings.LEV_COMPILED_READS = on
        for _ in range(300):
            answers[name] = call()
    assert len(set(answers.values())) == 1, "the answers differ"
    print(f"load average before: {os.getloadavg()}; get_deal {arguments}, {len(answers['ORM (off)'])} bytes")
    cpu = {name: [] for name in variants}
    wall = {name: [] for name in variants}
    for round_ in range(args.rounds):
        order = list(variants.items()) if round_ % 2 == 0 else list(reversed(variants.items()))
        per_round = {name: [] for name in variants}
        for _ in range(args.calls):
            for name, on in order:
                settings.LEV_COMPILED_READS = on
                c0, t0 = time.thread_time(), time.perf_counter()
                out = call()
                c1, t1 = time.thread_time(), time.perf_counter()
                per_round[name].append(c1 - c0)
                wall[name].append(t1 - t0)
                assert out == answers[name]
        for name in variants:
            cpu[name].extend(per_round[name])
        means = {name: statistics.fmean(v) * 1000 for name, v in per_round.items()}
        print(f"round {round_ + 1}: " + ", ".join(f"{n} {m:.3f} ms CPU" for n, m in means.items())
              + f"; saved {(1 - means['compiled (on)'] / means['ORM (off)']) * 100:.1f} %")
    print(f"load average after: {os.getloadavg()}")
    print("| variant | thread CPU ms/call (mean) | median | wall p50 ms |")
    print("|---|---|---|---|")
    for name in variants:
        print(f"| {name} | {statistics.fmean(cpu[name]) * 1000:.3f} | {statistics.median(cpu[name]) * 1000:.3f} "
              f"| {statistics.median(wall[name]) * 1000:.3f} |")
    on, off = statistics.fmean(cpu["compiled (on)"]), statistics.fmean(cpu["ORM (off)"])
    print(f"compiled reads save {(off - on) * 1000:.3f} ms CPU per call, {(1 - on / off) * 100:.1f} % "
          f"(median {(1 - statistics.median(cpu['compiled (on)']) / statistics.median(cpu['ORM (off)'])) * 100:.1f} %)")


if __name__ == "__main__":
    main()
