#!/usr/bin/env python
"""gunicorn configurations side by side on this machine (deploy/gunicorn.conf.py, every value set through
the environment as a deployment would): the production default against the configuration it replaced.

All servers run at once (idle ones cost nothing) and are loaded one at a time, in interleaved rounds,
with the same read (REST GET /api/v1/deals/{id}/ and MCP tools/call get_deal), so drift on a shared
machine hits every configuration alike. Reported: requests/s, p50, p99 and the p50 / p99 ratio to the
first row, server CPU per request, and how many workers were recycled during the runs.

Then, for each configuration in turn, --slow-clients connections trickle a body or headers at one byte a
second for --slow-seconds while /health and get_deal are probed one after the other (5 s timeout each):
how many probes were answered, and their p50 / worst latency (bench/slow_clients.py).

    python bench/bench_gunicorn.py [--seconds 8] [--clients 6] [--rounds 2] [--slow-clients 50]
                                   [--slow-seconds 20] [--configs all] [--before DIR]

--before DIR adds, as the first row, the production defaults served from another checkout of the project
(say `git archive <commit> | tar -x -C DIR`): a change's before and after in one run, on one database.

`bench/run.py --gunicorn` runs it as section 8 (not by default: it takes a few minutes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `python bench/<this>.py`
from bench._django import ROOT

# name -> environment read by deploy/gunicorn.conf.py. The first row is what the ratios are against.
# The worker counts are the file's defaults (2 per core) unless a row says otherwise.
CONFIGS: dict[str, dict[str, str]] = {
    "before: sync (issue #12 default, lev.wsgi)": {"GUNICORN_WORKER_CLASS": "sync"},
    "after: the defaults (ASGI worker, lev.asgi)": {},
    "after, without uvloop and gunicorn-h1c": {"GUNICORN_ASGI_LOOP": "asyncio", "GUNICORN_HTTP_PARSER": "python"},
    "gthread, 4 threads a worker": {"GUNICORN_WORKER_CLASS": "gthread", "GUNICORN_THREADS": "4"},
}
# The issue #12 comparison (worker classes, counts, recycling), kept for `--configs all`.
MORE_CONFIGS: dict[str, dict[str, str]] = {
    "gthread 2 x 4 threads, no recycling": {
        "GUNICORN_WORKER_CLASS": "gthread", "WEB_CONCURRENCY": "2", "GUNICORN_THREADS": "4",
        "GUNICORN_MAX_REQUESTS": "0"},
    "sync x2, recycle 1000+-100, no preload": {
        "GUNICORN_WORKER_CLASS": "sync", "WEB_CONCURRENCY": "2", "GUNICORN_MAX_REQUESTS": "1000",
        "GUNICORN_MAX_REQUESTS_JITTER": "100", "GUNICORN_PRELOAD": "0"},
    "sync x2, recycle 1000+-100, preload": {
        "GUNICORN_WORKER_CLASS": "sync", "WEB_CONCURRENCY": "2", "GUNICORN_MAX_REQUESTS": "1000",
        "GUNICORN_MAX_REQUESTS_JITTER": "100", "GUNICORN_PRELOAD": "1"},
}


class Gunicorn:
    def __init__(self, name: str, overrides: dict[str, str], env: dict[str, str], port: int | None = None,
                 root: Path = ROOT):
        from bench.run import free_port

        self.name = name
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix="bench-gunicorn-", suffix=".log", delete=False)  # noqa: SIM115
        full_env = {**env, "GUNICORN_BIND": f"127.0.0.1:{self.port}", "GUNICORN_ACCESS_LOG": "/dev/null",
                    "GUNICORN_LOG_LEVEL": "info", "PYTHONPATH": str(root), **overrides}
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), "--config", "deploy/gunicorn.conf.py"],
            cwd=root, env=full_env, stdout=self.log, stderr=self.log)

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if requests.get(self.url + "/health", timeout=1).ok:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"gunicorn ({self.name}) did not start: see {self.log.name}")

    def recycled(self) -> int:
        return Path(self.log.name).read_text(errors="replace").count("Autorestarting worker")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        Path(self.log.name).unlink(missing_ok=True)


def bench_gunicorn(key: str, deal_id: int, env: dict[str, str], *, seconds: float = 8, clients: int = 6,
                   rounds: int = 2, slow_clients: int = 50, slow_seconds: float = 20,
                   configs: dict[str, dict[str, str]] | None = None, roots: dict[str, Path] | None = None) -> str:
    from bench.run import ACCEPT, cpu_seconds, load, mcp_body, table
    from bench.slow_clients import SlowClients, probe_while, summary

    configs = configs or CONFIGS
    auth = {"Authorization": f"Bearer {key}"}
    roots = roots or {}
    servers = [Gunicorn(name, overrides, env, root=roots.get(name, ROOT)) for name, overrides in configs.items()]
    try:
        for server in servers:
            server.wait_ready()
        targets = {
            "REST": lambda s: ("GET", f"{s.url}/api/v1/deals/{deal_id}/", auth, None),
            "MCP": lambda s: ("POST", f"{s.url}/mcp", {**auth, "Content-Type": "application/json", "Accept": ACCEPT},
                              mcp_body("get_deal", {"deal_id": deal_id})),
        }
        for server in servers:  # warm every worker up
            for target in targets.values():
                load(*target(server), 1, clients)
        results: dict[tuple[str, str], list[dict]] = {}
        for _ in range(rounds):
            for server in servers:
                for door, target in targets.items():
                    cpu = cpu_seconds(server.proc.pid)
                    run = load(*target(server), seconds, clients)
                    run["cpu_ms"] = (cpu_seconds(server.proc.pid) - cpu) * 1000 / max(run["n"], 1)
                    results.setdefault((server.name, door), []).append(run)
        recycled = {server.name: server.recycled() for server in servers}
        slow: dict[str, dict] = {}
        if slow_clients:
            for server in servers:
                with SlowClients("127.0.0.1", server.port, slow_clients, hold=slow_seconds + 3) as held:
                    held.wait_trickling()  # every slow client connected and trickling
                    probes = probe_while("127.0.0.1", server.port, key=key, deal_id=deal_id,
                                         seconds=slow_seconds, timeout=5.0)
                slow[server.name] = {**summary(probes), "cut_off": held.cut_off}
                server.wait_ready()  # the sync configuration needs its workers back before the next one
    finally:
        for server in servers:
            server.stop()
    rows = []
    first = servers[0].name
    for door in targets:
        base = {k: statistics.median(r[k] for r in results[(first, door)]) for k in ("p50", "p99", "rps")}
        for server in servers:
            runs = results[(server.name, door)]
            med = {k: statistics.median(r[k] for r in runs) for k in ("rps", "p50", "p99", "cpu_ms")}
            worst = max(r["p99"] for r in runs)
            rows.append([door, server.name, f"{med['rps']:.0f}", f"{med['rps'] / base['rps']:.2f}x",
                         f"{med['p50']:.1f}", f"{med['p99']:.1f}", f"{worst:.1f}",
                         f"{med['p50'] / base['p50']:.2f}x", f"{med['p99'] / base['p99']:.2f}x",
                         f"{med['cpu_ms']:.2f}", sum(r["errors"] for r in runs), recycled[server.name]])
    note = (f"\nmedian of {rounds} interleaved rounds of {seconds:.0f} s per door, {clients} client threads, "
            f"{os.cpu_count()} cores; 'worst p99' is the worst round's; 'recycled' counts worker restarts "
            "(max_requests) during the whole run")
    out = table("8. gunicorn configurations (deploy/gunicorn.conf.py)",
                ["door", "configuration", "req/s", "req/s / first", "p50 ms", "p99 ms", "worst p99 ms",
                 "p50 / first", "p99 / first", "CPU ms/req", "errors", "recycled"], rows) + note
    if slow:
        slow_rows = [[name, f"{s['ok']} / {s['probes']}", f"{s['p50']:.0f}", f"{s['max']:.0f}", s["cut_off"]]
                     for name, s in slow.items()]
        out += table(f"8b. {slow_clients} slow clients (a byte a second) held {slow_seconds:.0f} s: "
                     "/health and get_deal probes", ["configuration", "answered in 5 s", "p50 ms", "worst ms",
                                                     "slow clients cut off"], slow_rows)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--slow-clients", type=int, default=50)
    parser.add_argument("--slow-seconds", type=float, default=20)
    parser.add_argument("--configs", choices=["default", "all"], default="default",
                        help="'all' adds the issue #12 rows (gthread, recycling)")
    parser.add_argument("--before", type=Path, help="another checkout, served first with its production defaults")
    parser.add_argument("--only-defaults", action="store_true", help="no other rows than the production defaults")
    args = parser.parse_args()
    from bench.run import ENV, demo_key_and_deal

    key, deal_id = demo_key_and_deal()
    configs = {**CONFIGS, **MORE_CONFIGS} if args.configs == "all" else CONFIGS
    if args.only_defaults:
        configs = {name: overrides for name, overrides in configs.items() if not overrides}
    roots = {}
    if args.before:
        before = f"before: the defaults, served from {args.before}"
        configs, roots = {before: {}, **configs}, {before: args.before.resolve()}
    print(bench_gunicorn(key, deal_id, ENV, seconds=args.seconds, clients=args.clients, rounds=args.rounds,
                         slow_clients=args.slow_clients, slow_seconds=args.slow_seconds, configs=configs,
                         roots=roots))


if __name__ == "__main__":
    main()
