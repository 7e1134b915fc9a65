#!/usr/bin/env python
"""In-process A/B of the deal read's leaner run (issue 24): thread CPU per call of (a) the read alone,
`deals.selectors.deal_get` as DealDetailApi.get calls it, and (b) a whole MCP `tools/call get_deal` through
lev.wsgi.application on this thread, the variants interleaved call by call (the order rotated each call),
every answer checked byte for byte against the first one's.

    DATABASE_URL=postgres://... REDIS_URL=redis://... DEBUG=false \\
        python bench/deal_read_cpu.py [--calls 1500] [--rounds 3] [--include properties,financials]

The variants (LEV_COMPILED_READS on in all four; the "before" ones are rebuilt in this process by
replacing two functions for the call, nothing is switched in the code):
* before: the stage, owner, sponsor and borrower read whole, the SQL run through Django's cursor
  (main before this change);
* lean only: only the columns DealSerializer writes of those rows (`refs_only`), Django's cursor;
* cursor only: the rows read whole, run through the reused psycopg cursor with psycopg's timestamptz loader;
* after: both (what the code does now).
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

VARIANTS = {"before": (False, False), "lean only": (True, False), "cursor only": (False, True), "after": (True, True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1500, help="calls per variant per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=300, help="untimed calls per variant")
    parser.add_argument("--include", default="", help="e.g. properties,financials: the read's and the tool's include")
    args = parser.parse_args()
    from bench._django import setup

    setup(unthrottled=True, django=False)
    from bench._django import mcp_environ, wsgi_call
    from bench.run import demo_key_and_deal

    key, deal_id = demo_key_and_deal()
    from django.conf import settings
    from django.db import connection
    from rest_framework.renderers import JSONRenderer

    import lev.compiled
    import lev.wsgi
    from deals import selectors
    from deals.models import Deal
    from deals.serializers import DealSerializer

    assert settings.LEV_COMPILED_READS and not settings.DEBUG, "run with LEV_COMPILED_READS on and DEBUG=false"
    account = Deal.objects.select_related("account").get(pk=deal_id).account
    reused_rows, deal_get = lev.compiled.fetch_rows, selectors.deal_get

    def django_rows(connection, sql, params):  # the compiled read's run step before this change
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()

    def whole_refs(*, refs_only: bool = False, **kwargs):  # what every caller read before this change
        return deal_get(**kwargs)

    def apply(variant: str) -> None:
        lean, reused = VARIANTS[variant]
        lev.compiled.fetch_rows = reused_rows if reused else django_rows
        selectors.deal_get = deal_get if lean else whole_refs

    include = frozenset(part for part in args.include.split(",") if part)

    def read() -> Deal:
        return selectors.deal_get(account=account, deal_id=deal_id, include=include, refs_only=True)

    def written(deal: Deal) -> bytes:  # outside the timed part
        return JSONRenderer().render(DealSerializer(deal, include=include).data)

    app = lev.wsgi.application
    arguments = {"deal_id": deal_id, **({"include": sorted(include)} if include else {})}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "get_deal", "arguments": arguments}}).encode()

    def mcp() -> tuple[str, bytes]:
        return wsgi_call(app, mcp_environ(key, body))[::2]

    def answered(answer: tuple[str, bytes]) -> bytes:
        status, out = answer
        assert status.startswith("200"), (status, out[:300])
        return out

    print(f"PostgreSQL: {connection.vendor == 'postgresql'}; deal {deal_id}, include {sorted(include)}; "
          f"load average before {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    for label, call, output in (("(a) deal_get alone", read, written), ("(b) MCP tools/call get_deal", mcp, answered)):
        reference = None
        for variant in VARIANTS:  # warm up; every variant answers the same bytes
            apply(variant)
            for _ in range(args.warmup):
                answer = output(call())
            reference = reference or answer
            assert answer == reference, (variant, answer, reference)
        names = list(VARIANTS)
        cpu: dict = {v: [] for v in names}
        per_round: dict = {v: [] for v in names}
        for round_ in range(args.rounds):
            start = {v: len(cpu[v]) for v in names}
            for i in range(args.calls):
                for j in range(len(names)):
                    variant = names[(i + j + round_) % len(names)]
                    apply(variant)
                    c0 = time.thread_time()
                    answer = call()
                    cpu[variant].append(time.thread_time() - c0)
                    assert output(answer) == reference, variant
            for v in names:
                per_round[v].append(statistics.median(cpu[v][start[v]:]) * 1e6)
        apply("after")
        base = statistics.median(cpu["before"])
        print(f"\n{label}: {args.rounds} rounds x {args.calls} calls per variant, interleaved; load average "
              f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])} after")
        print("| variant | median thread CPU us | / before | median per round | mean us |")
        print("|---|---|---|---|---|")
        for v in names:
            median = statistics.median(cpu[v])
            print(f"| {v} | {median * 1e6:.1f} | {median / base:.3f}x | "
                  f"{' / '.join(f'{x:.1f}' for x in per_round[v])} | {statistics.mean(cpu[v]) * 1e6:.1f} |")


if __name__ == "__main__":
    main()
