#!/usr/bin/env python
"""Lev MCP benchmarks: measured side by side in one run, reported as ratios (absolute times on a
shared machine are noisy; ratios of interleaved runs are not).

1. MCP tools/call get_deal vs REST GET /api/v1/deals/{id}/ vs the floor (a view doing one SELECT through
   the project's middleware) and a view doing nothing, one gunicorn (2 sync workers), concurrent
   clients: requests/s, p50, p99, each door's p50 as a ratio to the floor's, and the server's CPU
   time per request (gunicorn's processes, from /proc), which the machine's other load disturbs less.
2. list_deals / search_lender_directory with page sizes 20 and 100: latency and response bytes.
3. Ranking time vs directory size (bench/bench_ranking.py).
4. Breaker-open fast-fail latency vs a backend timeout.
5. Activity recompute over 100k and 1M placements, compare_term_sheets at 10/50/200 quotes
   (bench/bench_placements.py).
5b. Lender signals: refresh_lender_signals over 100k placements of 50 accounts (bench/bench_signals.py;
   PostgreSQL; issue 37).
6. list_deals / search_lender_directory first and deep pages at 1k vs 100k deals and lenders
   (bench/bench_lists.py).
7. Byte budget: each tool's answer before/after against LEV_MCP_MAX_RESPONSE_BYTES (bench/bench_budget.py).
8. With --gunicorn: gunicorn configurations side by side, the production default against the sync
   workers it replaced, interleaved, then 50 slow clients against each (bench/bench_gunicorn.py,
   about 5 minutes).
9. With --ab-shortcuts [SWITCH ...]: an MCP get_deal A/B of shortcuts behind environment switches, every
   combination a server of its own, interleaved call by call (bench/ab_shortcuts.py; without switches an
   A/A run, the method's noise floor; about 1 minute per variant).

Usage: python bench/run.py [--seconds 5] [--clients 4] [--rounds 3] [--skip-ranking] [--skip-placements]
       [--skip-signals] [--skip-lists] [--gunicorn] [--ranking-1m] [--ab-shortcuts [SWITCH ...]]
Uses DATABASE_URL (PostgreSQL recommended; point it at a scratch database: demo data is seeded
and the demo admin password reset) and REDIS_URL when set; without DATABASE_URL it uses its own
SQLite file under bench/results/.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PY = sys.executable
# Never the demo database: without DATABASE_URL the benchmark keeps its own SQLite file.
os.environ.setdefault("DATABASE_URL", f"sqlite:///{ROOT / 'bench' / 'results' / 'bench.sqlite3'}")
(ROOT / "bench" / "results").mkdir(exist_ok=True)
ENV = {**os.environ, "DJANGO_SETTINGS_MODULE": "bench.settings", "PYTHONPATH": str(ROOT), "LOG_LEVEL": "WARNING"}
ACCEPT = "application/json, text/event-stream"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")


def manage(*args: str) -> str:
    return subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=ENV, check=True, capture_output=True,
                          text=True).stdout


def demo_key_and_deal() -> tuple[str, int]:
    """Migrate and seed the bench database; the demo API key and the demo account's first deal id."""
    manage("migrate", "--noinput")
    creds = manage("seed_demo", "--print-credentials")
    key = next(line.split()[2] for line in creds.splitlines() if line.startswith("API key:"))
    import django

    django.setup()
    from deals.models import Deal

    return key, Deal.objects.filter(account__slug="demo-capital").order_by("id").values_list("id", flat=True)[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, workers: int = 2):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [str(Path(PY).parent / "gunicorn"), "lev.wsgi", "-w", str(workers), "-b", f"127.0.0.1:{self.port}",
             "--log-level", "warning"], cwd=ROOT, env=ENV)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(requests.RequestException):  # not listening yet
                if requests.get(self.url + "/health", timeout=1).ok:
                    return
            time.sleep(0.2)
        raise RuntimeError("gunicorn did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of a process and its children's processes, from /proc (Linux); 0 elsewhere.
    Server CPU per request is the load-independent twin of p50 on a shared machine."""
    total = 0.0
    try:
        for child in [pid, *map(int, Path(f"/proc/{pid}/task/{pid}/children").read_text().split())]:
            fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0
    return total


def load(method: str, url: str, headers: dict, body: bytes | None, seconds: float, clients: int) -> dict:
    latencies: list[float] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    errors = 0

    def worker() -> None:
        nonlocal errors
        session = requests.Session()
        mine, bad = [], 0
        while time.monotonic() < stop:
            started = time.perf_counter()
            response = session.request(method, url, headers=headers, data=body)
            mine.append(time.perf_counter() - started)
            if response.status_code >= 300 or b'"isError":true' in response.content:
                bad += 1
        with lock:
            latencies.extend(mine)
            errors += bad

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    latencies.sort()
    n = len(latencies)
    return {"rps": n / seconds, "p50": latencies[n // 2] * 1000, "p99": latencies[min(n - 1, int(n * 0.99))] * 1000,
            "n": n, "errors": errors}


def mcp_body(name: str, arguments: dict) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode()


def table(title: str, header: list[str], rows: list[list]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"  # noqa: E731
    out = [f"\n### {title}\n", line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(r) for r in rows]
    return "\n".join(out)


def bench_throughput(server: Server, key: str, deal_id: int, seconds: float, clients: int, rounds: int) -> str:
    auth = {"Authorization": f"Bearer {key}"}
    targets = {
        "floor: one SELECT through the middleware": ("GET", f"{server.url}/bench/floor/{deal_id}", {}, None),
        "trivial Django view (no query)": ("GET", f"{server.url}/bench/noop", {}, None),
        "REST GET /api/v1/deals/{id}/": ("GET", f"{server.url}/api/v1/deals/{deal_id}/", auth, None),
        "MCP tools/call get_deal": ("POST", f"{server.url}/mcp",
                                    {**auth, "Content-Type": "application/json", "Accept": ACCEPT},
                                    mcp_body("get_deal", {"deal_id": deal_id})),
    }
    for method, url, headers, body in targets.values():  # warm up every worker
        load(method, url, headers, body, 1, clients)
    results: dict[str, list[dict]] = {name: [] for name in targets}
    for _ in range(rounds):  # interleaved, so drift on a shared machine hits all three alike
        for name, (method, url, headers, body) in targets.items():
            cpu = cpu_seconds(server.proc.pid)
            run = load(method, url, headers, body, seconds, clients)
            run["cpu_ms"] = (cpu_seconds(server.proc.pid) - cpu) * 1000 / max(run["n"], 1)
            results[name].append(run)
    rows = []
    med = {name: {k: statistics.median(r[k] for r in runs) for k in ("rps", "p50", "p99", "cpu_ms")}
           for name, runs in results.items()}
    floor = med["floor: one SELECT through the middleware"]
    for name, m in med.items():
        errors = sum(r["errors"] for r in results[name])
        rows.append([name, f"{m['rps']:.0f}", f"{m['p50']:.2f}", f"{m['p99']:.1f}",
                     f"{m['p50'] / floor['p50']:.2f}x", f"{m['cpu_ms']:.2f}",
                     f"{m['cpu_ms'] / floor['cpu_ms']:.2f}x" if floor["cpu_ms"] else "-", errors])
    rest, mcp = med["REST GET /api/v1/deals/{id}/"], med["MCP tools/call get_deal"]
    ratio = (f"\nMCP/REST: throughput {rest['rps'] / mcp['rps']:.2f}x fewer req/s, "
             f"p50 {mcp['p50'] / rest['p50']:.2f}x, p99 {mcp['p99'] / rest['p99']:.2f}x "
             f"(median of {rounds} interleaved rounds of {seconds:.0f} s, {clients} client threads, "
             "gunicorn 2 sync workers)")
    return table("1. Same read through each door, against the floor",
                 ["target", "req/s", "p50 ms", "p99 ms", "p50 / floor", "server CPU ms/req", "CPU / floor",
                  "errors"], rows) + ratio


def bench_pages(server: Server, key: str, calls: int = 30) -> str:
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Accept": ACCEPT}
    session = requests.Session()
    listed = session.post(f"{server.url}/mcp", headers=headers,
                          data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).json()
    names = {t["name"] for t in listed["result"]["tools"]}
    rows = []
    for tool in ("list_deals", "search_lender_directory"):
        if tool not in names:
            rows.append([tool, "-", "-", "-", "not available"])
            continue
        for limit in (20, 100):
            body = mcp_body(tool, {"limit": limit})
            session.post(f"{server.url}/mcp", headers=headers, data=body)  # warm-up
            times, size, items = [], 0, 0
            for _ in range(calls):
                started = time.perf_counter()
                response = session.post(f"{server.url}/mcp", headers=headers, data=body)
                times.append((time.perf_counter() - started) * 1000)
                size = len(response.content)
                payload = json.loads(response.json()["result"]["content"][0]["text"])
                items = len(next(v for v in payload.values() if isinstance(v, list)))
            rows.append([tool, limit, items, f"{statistics.median(times):.1f}", f"{size:,}"])
    return table(f"2. Page size: latency and response bytes (sequential, median of {calls})",
                 ["tool", "limit", "items", "p50 ms", "bytes"], rows)


def bench_breaker() -> str:
    """Breaker open vs a hanging backend, in this process (HTTP transport, real sockets)."""
    import django

    django.setup()
    import logging

    from django.conf import settings

    from mcp_tools import resilience
    from mcp_tools.client import HttpTransport, LevClient
    from mcp_tools.errors import ToolFailure
    from tests.backend_stub import BackendStub, Reply

    logging.getLogger("mcp_tools.client").setLevel(logging.ERROR)  # the timeouts are the point here
    settings.LEV_RETRY_TOTAL = 0
    settings.REDIS_URL = os.environ.get("REDIS_URL", "")
    resilience.reset_breaker()
    timeout = 1.0
    rows = []
    with BackendStub(Reply(200, {}, delay=30)) as backend:
        def call() -> float:
            client = LevClient(authorization=None, transport=HttpTransport(backend.url, timeout))
            started = time.perf_counter()
            with contextlib.suppress(ToolFailure):
                client.get("/deals/1/")
            return (time.perf_counter() - started) * 1000

        closed = [call() for _ in range(settings.LEV_BREAKER_FAIL_MAX)]
        state = resilience.breaker_state()
        fast = sorted(call() for _ in range(200))
        rows.append([f"backend hangs, breaker closed (timeout {timeout:.0f} s)", f"{statistics.median(closed):.1f}",
                     len(closed)])
        rows.append([f"breaker {state}: fast fail", f"{fast[len(fast) // 2]:.3f}", len(fast)])
        ratio = statistics.median(closed) / fast[len(fast) // 2]
    resilience.reset_breaker()
    storage = "Redis" if settings.REDIS_URL else "memory"
    summary = f"\nFast fail is {ratio:,.0f}x quicker than waiting for the timeout."
    return table(f"4. Breaker-open fast fail vs backend timeout (breaker state in {storage})",
                 ["case", "p50 ms", "calls"], rows) + summary


def script_section(title: str, script: str, timeout: int, *args: str) -> str:
    """One part measured by its own script (its own database, its own worker), under a heading."""
    out = subprocess.run([PY, str(ROOT / "bench" / script), *args], cwd=ROOT,
                         env={**ENV, "DJANGO_SETTINGS_MODULE": "lev.settings"}, capture_output=True, text=True,
                         timeout=timeout)
    return f"\n### {title}\n\n" + (out.stdout.strip() or out.stderr[-2000:])


def bench_ranking(one_million: bool = False) -> str:
    sizes = ["--sizes", "1000,10000,100000,1000000"] if one_million else []
    # With 2,000 lenders x 50 accounts of stored signals, timed with and without them (issue 37).
    return script_section("3. Ranking vs directory size", "bench_ranking.py", 2700, *sizes)


def bench_placements() -> str:
    return script_section("5. Placements: activity recompute and comparison", "bench_placements.py", 3600)


def bench_signals() -> str:
    return script_section("5b. Lender signals: refresh over 100k placements", "bench_signals.py", 3600)


def bench_lists() -> str:
    return script_section("6. Lists at 1k vs 100k deals and lenders", "bench_lists.py", 1800)


def bench_budget() -> str:
    return script_section("7. Byte budget of tool answers (bench/bench_budget.py)", "bench_budget.py", 600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5, help="seconds per load run (default 5)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent client threads (default 4)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--skip-ranking", action="store_true", help="skip the ranking benchmark")
    parser.add_argument("--skip-placements", action="store_true", help="skip the placements benchmark")
    parser.add_argument("--skip-signals", action="store_true", help="skip the lender signals refresh benchmark")
    parser.add_argument("--skip-lists", action="store_true", help="skip the list paging benchmark")
    parser.add_argument("--gunicorn", action="store_true", help="also compare gunicorn configurations")
    parser.add_argument("--ranking-1m", action="store_true", help="rank a 1M-program directory too (+3 min)")
    parser.add_argument("--ab-shortcuts", nargs="*", metavar="SWITCH", default=None,
                        help="A/B shortcuts behind these environment switches (none: an A/A run)")
    args = parser.parse_args()

    key, deal_id = demo_key_and_deal()
    from deals.models import Deal

    demo = Deal.objects.filter(account__slug="demo-capital")
    # Enough deals that a page of 100 is full (the demo itself has six).
    missing = 150 - demo.count()
    if missing > 0:
        account_id = demo.values_list("account_id", flat=True)[0]
        Deal.objects.bulk_create([Deal(account_id=account_id, title=f"Bench deal {n}", loan_amount=1_000_000 + n,
                                       loan_type="permanent") for n in range(missing)])
    from django.db import connection

    db = connection.vendor

    print(f"# Lev MCP benchmarks ({time.strftime('%Y-%m-%d %H:%M')}, {db}, {os.cpu_count()} cores)")
    server = Server(workers=2)
    try:
        print(bench_throughput(server, key, deal_id, args.seconds, args.clients, args.rounds), flush=True)
        print(bench_pages(server, key), flush=True)
    finally:
        server.stop()
    if not args.skip_ranking:
        print(bench_ranking(args.ranking_1m), flush=True)
    print(bench_breaker(), flush=True)
    if not args.skip_placements:
        print(bench_placements(), flush=True)
    if not args.skip_signals:
        print(bench_signals(), flush=True)
    if not args.skip_lists:
        print(bench_lists(), flush=True)
    print(bench_budget(), flush=True)
    if args.gunicorn:
        from bench.bench_gunicorn import bench_gunicorn

        print(bench_gunicorn(key, deal_id, ENV), flush=True)
    if args.ab_shortcuts is not None:
        from bench.ab_shortcuts import ab_shortcuts

        print(ab_shortcuts(key, deal_id, ENV, switches=args.ab_shortcuts), flush=True)


if __name__ == "__main__":
    main()
