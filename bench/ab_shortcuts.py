#!/usr/bin/env python
"""A/B of shortcuts behind environment switches (issue 20, "Shortcuts earn their keep"): a shortcut
stays only if it saves at least 10 % of an MCP tools/call get_deal (p50 of the whole call).

Each --switch names a boolean setting read in lev/settings.py (default on). Every combination of the
switches on and off runs as its own server of the production command (gunicorn --config
deploy/gunicorn.conf.py, the ASGI worker), the switches set in its environment (nothing is patched).
One client calls them round-robin, call by call, the order rotated every cycle, so drift on a shared
machine hits every variant alike. Every answer is compared with the "all on" server's, byte for byte
(a difference stops the run). Reported per door: p50, p90, calls/s (one client, so 1 / mean latency),
server CPU per call (from /proc), each p50 as a ratio to "all on", and per switch the share of the call
its shortcut saves, (p50 without it - p50 with it) / p50 without it, per round and over all rounds, with
the other switches on (the verdict) and in the other combinations.

Without --switch it runs two identical servers (an A/A run): the noise floor of the method.

    python bench/ab_shortcuts.py [--switch LEV_SOME_SHORTCUT ...] [--rounds 3] [--calls 1000]
                                 [--workers 1] [--base-port 0] [--rest]

Issue 20's run (docs/benchmarks.md, "Read shortcuts A/B (issue 20)") A/Bed LEV_COMPILED_DEAL_READ and
LEV_BOUND_FIELD_OUTPUT; both shortcuts and their switches were removed after it. `bench/run.py
--ab-shortcuts` runs the A/A; `make bench-ab-shortcuts AB_ARGS="--switch ..."`. DATABASE_URL as
bench/run.py (PostgreSQL is the reference).
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `python bench/<this>.py`

KEEP_THRESHOLD = 0.10
ALL_ON = "all on (default)"
AA = "(none: A/A)"


def variants(switches: list[str]) -> dict[str, dict[str, str]]:
    """name -> the environment of its server: every combination of the switches, "all on" first (the
    reference). Without switches, two identical servers (A/A)."""
    if not switches:
        return {ALL_ON: {}, "all on, again (A/A)": {}}
    out = {}
    for values in itertools.product("10", repeat=len(switches)):
        off = [name for name, value in zip(switches, values, strict=True) if value == "0"]
        label = ALL_ON if not off else ("all off" if len(off) == len(switches) > 1 else
                                        " + ".join(off) + " off")
        out[label] = dict(zip(switches, values, strict=True))
    return out


def pairs(servers: dict[str, dict[str, str]], switches: list[str]) -> dict[str, list[tuple[str, str]]]:
    """switch -> [(variant without its shortcut, the same variant with it), ...], the pair with every
    other switch on first. Without switches: the A/A pair."""
    if not switches:
        names = list(servers)
        return {AA: [(names[1], names[0])]}
    out: dict[str, list[tuple[str, str]]] = {}
    for switch in switches:
        found = []
        for without, env in servers.items():
            if env[switch] == "0":
                with_ = next(n for n, e in servers.items() if e == {**env, switch: "1"})
                found.append((without, with_))
        found.sort(key=lambda pair: sum(v == "0" for v in servers[pair[1]].values()))
        out[switch] = found
    return out


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
        reference = answers[ALL_ON]
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


def report(door: Door, servers: dict, latencies: dict[str, list[list[float]]],
           saving_pairs: dict[str, list[tuple[str, str]]]) -> tuple[str, dict[str, float]]:
    from bench.run import table

    rows = []
    every = {n: list(itertools.chain.from_iterable(r)) for n, r in latencies.items()}
    p50 = {n: pct(v, 0.5) for n, v in every.items()}
    for n, values in every.items():
        rows.append([n, f"{p50[n]:.3f}", f"{pct(values, 0.9):.3f}", f"{len(values) / sum(values):.0f}",
                     f"{servers[n].cpu_ms:.3f}", f"{p50[n] / p50[ALL_ON]:.3f}x",
                     " / ".join(f"{pct(r, 0.5):.3f}" for r in latencies[n])])
    out = table(f"{door.name}: {len(servers)} variants, interleaved call by call",
                ["variant", "p50 ms", "p90 ms", "calls/s", "server CPU ms/call", "p50 / all on",
                 "p50 ms per round"], rows)
    saving_rows, savings = [], {}
    for switch, found in saving_pairs.items():
        cells = []
        for without, with_ in found:
            whole = (p50[without] - p50[with_]) / p50[without]
            per_round = [(pct(a, 0.5) - pct(b, 0.5)) / pct(a, 0.5)
                         for a, b in zip(latencies[without], latencies[with_], strict=True)]
            cpu = (servers[without].cpu_ms - servers[with_].cpu_ms) / servers[without].cpu_ms \
                if servers[without].cpu_ms else 0.0
            cells.append(f"{with_} vs {without}: p50 {whole:+.1%} ({', '.join(f'{s:+.1%}' for s in per_round)}), "
                         f"CPU {cpu:+.1%}")
        without, with_ = found[0]
        savings[switch] = (p50[without] - p50[with_]) / p50[without]
        kept = savings[switch] >= KEEP_THRESHOLD
        verdict = (f"{'keep' if kept else 'remove'}: saves {savings[switch]:.1%} ({'>=' if kept else '<'} "
                   f"{KEEP_THRESHOLD:.0%})") if switch != AA else "- (the same server twice: the noise floor)"
        saving_rows.append([switch, "; ".join(cells), verdict])
    out += "\n" + table(f"{door.name}: what each shortcut saves, (p50 without - p50 with) / p50 without "
                        "(per round in brackets)", ["switch", "saved", "verdict (10 % rule, others on)"],
                        saving_rows)
    return out, savings


def ab_shortcuts(key: str, deal_id: int, env: dict[str, str], *, switches: list[str] | None = None, rounds: int = 3,
                 calls: int = 1000, warmup: int = 100, workers: int = 1, base_port: int = 0, rest: bool = False) -> str:
    from bench.bench_gunicorn import Gunicorn

    load_before = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"] * 3
    switches = switches or []
    envs = variants(switches)
    saving_pairs = pairs(envs, switches)
    servers = {}
    for i, (name, switched) in enumerate(envs.items()):
        overrides = {**switched, "WEB_CONCURRENCY": str(workers), "GUNICORN_PRELOAD": "1"}
        servers[name] = Gunicorn(name, overrides, env, port=base_port + i if base_port else None)
    out = []
    try:
        for server in servers.values():
            server.wait_ready()
        checked = same_answers(servers, key, deal_id)
        started = time.monotonic()
        for door in doors(key, deal_id, rest):
            latencies = measure(servers, door, rounds, calls, warmup)
            text, _ = report(door, servers, latencies, saving_pairs)
            out.append(text)
        elapsed = time.monotonic() - started
    finally:
        for server in servers.values():
            server.stop()
    load_after = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"] * 3
    head = (f"\n### Read shortcuts A/B ({time.strftime('%Y-%m-%d %H:%M')}, {env_db(env)}, {os.cpu_count()} cores, "
            f"load average {' '.join(load_before)} before, {' '.join(load_after)} after)\n\n"
            f"{rounds} rounds x {calls} calls per variant, one client, round-robin call by call ({elapsed:.0f} s); "
            f"{len(envs)} servers of the production command (ASGI worker, {workers} worker(s) each, preloaded); "
            f"switches: {', '.join(switches) or 'none (A/A)'}.\n"
            "Identical answers, byte for byte, from every variant:\n" + "\n".join(f"- {c}" for c in checked)
            + "\n(and every measured call's body equals the first one's)")
    return head + "\n" + "\n".join(out)


def env_db(env: dict[str, str]) -> str:
    url = env.get("DATABASE_URL", "")
    return url.split(":", 1)[0] if url else "sqlite"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--switch", action="append", default=[],
                        help="a boolean setting (environment variable) turning a shortcut off when 0; repeatable")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=1000, help="calls per variant per round (default 1000)")
    parser.add_argument("--warmup", type=int, default=100, help="unmeasured calls per variant first")
    parser.add_argument("--workers", type=int, default=1, help="gunicorn workers per server (default 1)")
    parser.add_argument("--base-port", type=int, default=0,
                        help="the servers listen on this port and the next ones (default: free ports)")
    parser.add_argument("--rest", action="store_true", help="also measure REST GET /api/v1/deals/{id}/")
    args = parser.parse_args()
    from bench.run import ENV, demo_key_and_deal

    key, deal_id = demo_key_and_deal()
    print(ab_shortcuts(key, deal_id, ENV, switches=args.switch, rounds=args.rounds, calls=args.calls,
                       warmup=args.warmup, workers=args.workers, base_port=args.base_port, rest=args.rest), flush=True)


if __name__ == "__main__":
    main()
