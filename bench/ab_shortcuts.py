#!/usr/bin/env python
"""A/B of the deal read's two shortcuts (issue 20, "Shortcuts earn their keep"): each stays only if it
saves at least 10 % of an MCP tools/call get_deal (p50 of the whole call).

- compiled SQL: `deals.selectors.deal_get` runs the ORM's SQL for "the account's deal by id", compiled
  once per process (`LEV_COMPILED_DEAL_READ`); off, the ORM compiles the query on every read.
- bound fields: `lev.serializers.FieldsBuiltOnce.to_representation` writes an object out through fields
  bound once per class (`LEV_BOUND_FIELD_OUTPUT`); off, DRF's own Serializer.to_representation.

The four combinations run as four servers of the production command (gunicorn --config
deploy/gunicorn.conf.py, the ASGI worker), each with its switches set in its environment (nothing is
patched). One client calls them round-robin, call by call, the order rotated every cycle, so drift
on a shared machine hits every variant alike. Every answer is compared with the "both on" server's,
byte for byte (a difference stops the run). Reported per door: p50, p90, calls/s (one client, so
1 / mean latency), server CPU per call (from /proc), each p50 as a ratio to "both on", and per
shortcut the share of the call it saves: (p50 without it - p50 with it) / p50 without it, measured
with the other shortcut on and with it off, per round and over all rounds.

    python bench/ab_shortcuts.py [--rounds 3] [--calls 1000] [--workers 1] [--base-port 0] [--rest]

`bench/run.py --ab-shortcuts` runs it too; `make bench-ab-shortcuts`. DATABASE_URL as bench/run.py
(PostgreSQL is the reference).
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ON, OFF = "1", "0"
# name -> the environment each server gets. The first is the production default, the reference.
VARIANTS: dict[str, dict[str, str]] = {
    "both on (default)": {"LEV_COMPILED_DEAL_READ": ON, "LEV_BOUND_FIELD_OUTPUT": ON},
    "compiled SQL off": {"LEV_COMPILED_DEAL_READ": OFF, "LEV_BOUND_FIELD_OUTPUT": ON},
    "bound fields off": {"LEV_COMPILED_DEAL_READ": ON, "LEV_BOUND_FIELD_OUTPUT": OFF},
    "both off": {"LEV_COMPILED_DEAL_READ": OFF, "LEV_BOUND_FIELD_OUTPUT": OFF},
}
BOTH_ON = "both on (default)"
# Each shortcut's saving, read twice: with the other shortcut on, and with it off.
# shortcut -> [(variant without it, variant with it), ...]
PAIRS = {
    "compiled SQL": [("compiled SQL off", BOTH_ON), ("both off", "bound fields off")],
    "bound fields": [("bound fields off", BOTH_ON), ("both off", "compiled SQL off")],
}
KEEP_THRESHOLD = 0.10


class Door:
    """One request, sent again and again on a kept-alive connection to each server."""

    def __init__(self, name: str, method: str, path: str, headers: dict[str, str], body: bytes | None):
        self.name, self.method, self.path, self.headers, self.body = name, method, path, headers, body

    def call(self, conn: http.client.HTTPConnection) -> tuple[float, int, bytes]:
        started = time.perf_counter()
        conn.request(self.method, self.path, body=self.body, headers=self.headers)
        response = conn.getresponse()
        data = response.read()
        return time.perf_counter() - started, response.status, data


def doors(key: str, deal_id: int, rest: bool) -> list[Door]:
    from bench.run import ACCEPT, mcp_body

    auth = {"Authorization": f"Bearer {key}"}
    out = [Door("MCP tools/call get_deal", "POST", "/mcp",
                {**auth, "Content-Type": "application/json", "Accept": ACCEPT},
                mcp_body("get_deal", {"deal_id": deal_id}))]
    if rest:
        out.append(Door("REST GET /api/v1/deals/{id}/", "GET", f"/api/v1/deals/{deal_id}/", auth, None))
    return out


def same_answers(servers: dict, key: str, deal_id: int) -> list[str]:
    """Every variant answers get_deal (and the reads around it) byte for byte as "both on" does:
    the deal alone, with its financials and properties, a deal not found, over MCP and REST."""
    from bench.run import ACCEPT, mcp_body

    auth = {"Authorization": f"Bearer {key}"}
    mcp = {**auth, "Content-Type": "application/json", "Accept": ACCEPT}
    checks = [
        ("POST", "/mcp", mcp, mcp_body("get_deal", {"deal_id": deal_id})),
        ("POST", "/mcp", mcp, mcp_body("get_deal", {"deal_id": deal_id, "include": ["financials", "properties"]})),
        ("POST", "/mcp", mcp, mcp_body("get_deal", {"deal_id": 2**62})),
        ("GET", f"/api/v1/deals/{deal_id}/", auth, None),
        ("GET", f"/api/v1/deals/{deal_id}/?include=financials,properties", auth, None),
        ("GET", f"/api/v1/deals/{deal_id}/financials/", auth, None),
    ]
    checked = []
    for method, path, headers, body in checks:
        answers = {}
        for name, server in servers.items():
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            answers[name] = (response.status, response.read())
            conn.close()
        reference = answers[BOTH_ON]
        for name, answer in answers.items():
            assert answer == reference, f"{name} answers {method} {path} differently:\n{answer}\n!=\n{reference}"
        what = json.loads(body)["params"]["arguments"] if body else ""
        checked.append(f"{method} {path} {json.dumps(what) if what else ''}".rstrip() +
                       f" -> {reference[0]}, {len(reference[1])} bytes")
    return checked


def measure(servers: dict, door: Door, rounds: int, calls: int, warmup: int) -> dict[str, list[list[float]]]:
    """Latencies (s) per variant per round; each cycle calls every variant once, in a rotated order."""
    from bench.run import cpu_seconds

    names = list(servers)
    conns = {n: http.client.HTTPConnection("127.0.0.1", servers[n].port, timeout=30) for n in names}
    reference: bytes | None = None
    for _ in range(warmup):
        for n in names:
            _, status, data = door.call(conns[n])
            assert status == 200 and b'"isError":true' not in data, (n, status, data[:300])
            reference = reference or data
    latencies: dict[str, list[list[float]]] = {n: [] for n in names}
    cpu_before = {n: cpu_seconds(servers[n].proc.pid) for n in names}
    for _ in range(rounds):
        for n in names:
            latencies[n].append([])
        for i in range(calls):
            shift = i % len(names)
            for n in names[shift:] + names[:shift]:
                seconds, status, data = door.call(conns[n])
                if data != reference:  # the same bytes from every variant, every call
                    raise AssertionError(f"{n} answered {door.name} differently ({status}): {data[:300]!r}")
                latencies[n][-1].append(seconds)
    for n in names:
        servers[n].cpu_ms = (cpu_seconds(servers[n].proc.pid) - cpu_before[n]) * 1000 / (rounds * calls)
        conns[n].close()
    return latencies


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000


def report(door: Door, servers: dict, latencies: dict[str, list[list[float]]]) -> tuple[str, dict[str, float]]:
    from bench.run import table

    rows = []
    every = {n: list(itertools.chain.from_iterable(r)) for n, r in latencies.items()}
    p50 = {n: pct(v, 0.5) for n, v in every.items()}
    for n, values in every.items():
        rows.append([n, f"{p50[n]:.3f}", f"{pct(values, 0.9):.3f}", f"{len(values) / sum(values):.0f}",
                     f"{servers[n].cpu_ms:.3f}", f"{p50[n] / p50[BOTH_ON]:.3f}x",
                     " / ".join(f"{pct(r, 0.5):.3f}" for r in latencies[n])])
    out = table(f"{door.name}: the four variants, interleaved call by call",
                ["variant", "p50 ms", "p90 ms", "calls/s", "server CPU ms/call", "p50 / both on",
                 "p50 ms per round"], rows)
    saving_rows, savings = [], {}
    for shortcut, pairs in PAIRS.items():
        cells = []
        for without, with_ in pairs:
            whole = (p50[without] - p50[with_]) / p50[without]
            per_round = [(pct(a, 0.5) - pct(b, 0.5)) / pct(a, 0.5)
                         for a, b in zip(latencies[without], latencies[with_], strict=True)]
            cpu = (servers[without].cpu_ms - servers[with_].cpu_ms) / servers[without].cpu_ms \
                if servers[without].cpu_ms else 0.0
            cells += [f"{whole:+.1%} ({', '.join(f'{s:+.1%}' for s in per_round)})", f"{cpu:+.1%}"]
        savings[shortcut] = (p50[pairs[0][0]] - p50[pairs[0][1]]) / p50[pairs[0][0]]
        kept = savings[shortcut] >= KEEP_THRESHOLD
        saving_rows.append([shortcut, *cells, f"{'keep' if kept else 'remove'}: saves {savings[shortcut]:.1%} "
                                              f"({'>=' if kept else '<'} {KEEP_THRESHOLD:.0%})"])
    out += "\n" + table(f"{door.name}: what each shortcut saves, (p50 without - p50 with) / p50 without",
                 ["shortcut", "p50 saved, other on (per round)", "CPU saved, other on",
                  "p50 saved, other off (per round)", "CPU saved, other off", "verdict (10 % rule, other on)"],
                 saving_rows)
    return out, savings


def ab_shortcuts(key: str, deal_id: int, env: dict[str, str], *, rounds: int = 3, calls: int = 1000,
                 warmup: int = 100, workers: int = 1, base_port: int = 0, rest: bool = False) -> str:
    from bench.bench_gunicorn import Gunicorn

    load_before = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"] * 3
    servers = {}
    for i, (name, switches) in enumerate(VARIANTS.items()):
        overrides = {**switches, "WEB_CONCURRENCY": str(workers), "GUNICORN_PRELOAD": "1"}
        servers[name] = Gunicorn(name, overrides, env, port=base_port + i if base_port else None)
    out = []
    try:
        for server in servers.values():
            server.wait_ready()
        checked = same_answers(servers, key, deal_id)
        started = time.monotonic()
        for door in doors(key, deal_id, rest):
            latencies = measure(servers, door, rounds, calls, warmup)
            text, _ = report(door, servers, latencies)
            out.append(text)
        elapsed = time.monotonic() - started
    finally:
        for server in servers.values():
            server.stop()
    load_after = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"] * 3
    head = (f"\n### Read shortcuts A/B ({time.strftime('%Y-%m-%d %H:%M')}, {env_db(env)}, {os.cpu_count()} cores, "
            f"load average {' '.join(load_before)} before, {' '.join(load_after)} after)\n\n"
            f"{rounds} rounds x {calls} calls per variant, one client, round-robin call by call ({elapsed:.0f} s); "
            f"4 servers of the production command (ASGI worker, {workers} worker(s) each, preloaded).\n"
            "Identical answers, byte for byte, from all four variants:\n" + "\n".join(f"- {c}" for c in checked)
            + "\n(and every measured call's body equals the first one's)")
    return head + "\n" + "\n".join(out)


def env_db(env: dict[str, str]) -> str:
    url = env.get("DATABASE_URL", "")
    return url.split(":", 1)[0] if url else "sqlite"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=1000, help="calls per variant per round (default 1000)")
    parser.add_argument("--warmup", type=int, default=100, help="unmeasured calls per variant first")
    parser.add_argument("--workers", type=int, default=1, help="gunicorn workers per server (default 1)")
    parser.add_argument("--base-port", type=int, default=0,
                        help="the four servers listen on this port and the next three (default: free ports)")
    parser.add_argument("--rest", action="store_true", help="also measure REST GET /api/v1/deals/{id}/")
    args = parser.parse_args()
    from bench.run import ENV, manage

    manage("migrate", "--noinput")
    creds = manage("seed_demo", "--print-credentials")
    key = next(line.split()[2] for line in creds.splitlines() if line.startswith("API key:"))
    import django

    django.setup()
    from deals.models import Deal

    deal_id = Deal.objects.filter(account__slug="demo-capital").order_by("id").values_list("id", flat=True)[0]
    print(ab_shortcuts(key, deal_id, ENV, rounds=args.rounds, calls=args.calls, warmup=args.warmup,
                       workers=args.workers, base_port=args.base_port, rest=args.rest), flush=True)


if __name__ == "__main__":
    main()
