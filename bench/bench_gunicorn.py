#!/usr/bin/env python
"""gunicorn configurations side by side on this machine (deploy/gunicorn.conf.py, every value set through
the environment as a deployment would): worker class and count, and worker recycling.

All servers run at once (idle ones cost nothing) and are loaded one at a time, in interleaved rounds,
with the same read (REST GET /api/v1/deals/{id}/ and MCP tools/call get_deal), so drift on a shared
machine hits every configuration alike. Reported: requests/s, p50, p99 and the p50 / p99 ratio to the
first row, and how many workers were recycled during the runs (gunicorn's own log lines).

    python bench/bench_gunicorn.py [--seconds 8] [--clients 6] [--rounds 2]

`bench/run.py --gunicorn` runs it as section 6 (not by default: it takes about 3 minutes).
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# name -> environment read by deploy/gunicorn.conf.py. The first row is what the ratios are against.
CONFIGS: dict[str, dict[str, str]] = {
    "sync x2, no recycling": {"GUNICORN_WORKER_CLASS": "sync", "WEB_CONCURRENCY": "2", "GUNICORN_MAX_REQUESTS": "0"},
    "before: gthread 4 x 4 threads, recycle 1000+-100": {
        "GUNICORN_WORKER_CLASS": "gthread", "WEB_CONCURRENCY": "4", "GUNICORN_THREADS": "4",
        "GUNICORN_MAX_REQUESTS": "1000", "GUNICORN_MAX_REQUESTS_JITTER": "100", "GUNICORN_PRELOAD": "0"},
    "gthread 2 x 4 threads, no recycling": {
        "GUNICORN_WORKER_CLASS": "gthread", "WEB_CONCURRENCY": "2", "GUNICORN_THREADS": "4",
        "GUNICORN_MAX_REQUESTS": "0"},
    "sync x4, no recycling": {"GUNICORN_WORKER_CLASS": "sync", "WEB_CONCURRENCY": "4", "GUNICORN_MAX_REQUESTS": "0"},
    "sync x2, recycle 1000+-100, no preload": {
        "GUNICORN_WORKER_CLASS": "sync", "WEB_CONCURRENCY": "2", "GUNICORN_MAX_REQUESTS": "1000",
        "GUNICORN_MAX_REQUESTS_JITTER": "100", "GUNICORN_PRELOAD": "0"},
    "sync x2, recycle 1000+-100, preload": {
        "GUNICORN_WORKER_CLASS": "sync", "WEB_CONCURRENCY": "2", "GUNICORN_MAX_REQUESTS": "1000",
        "GUNICORN_MAX_REQUESTS_JITTER": "100", "GUNICORN_PRELOAD": "1"},
    "after: the defaults of deploy/gunicorn.conf.py": {},
}


class Gunicorn:
    def __init__(self, name: str, overrides: dict[str, str], env: dict[str, str]):
        from bench.run import free_port

        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix="bench-gunicorn-", suffix=".log", delete=False)  # noqa: SIM115
        full_env = {**env, "GUNICORN_BIND": f"127.0.0.1:{self.port}", "GUNICORN_ACCESS_LOG": "/dev/null",
                    "GUNICORN_LOG_LEVEL": "info", **overrides}
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), "--config", "deploy/gunicorn.conf.py",
             "lev.wsgi:application"],
            cwd=ROOT, env=full_env, stdout=self.log, stderr=self.log)

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
                   rounds: int = 2) -> str:
    from bench.run import ACCEPT, load, mcp_body, table

    auth = {"Authorization": f"Bearer {key}"}
    servers = [Gunicorn(name, overrides, env) for name, overrides in CONFIGS.items()]
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
                    results.setdefault((server.name, door), []).append(load(*target(server), seconds, clients))
        recycled = {server.name: server.recycled() for server in servers}
    finally:
        for server in servers:
            server.stop()
    rows = []
    first = servers[0].name
    for door in targets:
        base = {k: statistics.median(r[k] for r in results[(first, door)]) for k in ("p50", "p99")}
        for server in servers:
            runs = results[(server.name, door)]
            med = {k: statistics.median(r[k] for r in runs) for k in ("rps", "p50", "p99")}
            worst = max(r["p99"] for r in runs)
            rows.append([door, server.name, f"{med['rps']:.0f}", f"{med['p50']:.1f}", f"{med['p99']:.1f}",
                         f"{worst:.1f}", f"{med['p50'] / base['p50']:.2f}x", f"{med['p99'] / base['p99']:.2f}x",
                         sum(r["errors"] for r in runs), recycled[server.name]])
    note = (f"\nmedian of {rounds} interleaved rounds of {seconds:.0f} s per door, {clients} client threads, "
            f"{os.cpu_count()} cores; 'worst p99' is the worst round's; 'recycled' counts worker restarts "
            "(max_requests) during the whole run")
    return table("6. gunicorn configurations (deploy/gunicorn.conf.py)",
                 ["door", "configuration", "req/s", "p50 ms", "p99 ms", "worst p99 ms", "p50 / first",
                  "p99 / first", "errors", "recycled"], rows) + note


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    from bench.run import ENV, manage

    manage("migrate", "--noinput")
    creds = manage("seed_demo", "--print-credentials")
    key = next(line.split()[2] for line in creds.splitlines() if line.startswith("API key:"))
    import django

    django.setup()
    from deals.models import Deal

    deal_id = Deal.objects.filter(account__slug="demo-capital").order_by("id").values_list("id", flat=True)[0]
    print(bench_gunicorn(key, deal_id, ENV, seconds=args.seconds, clients=args.clients, rounds=args.rounds))


if __name__ == "__main__":
    main()
