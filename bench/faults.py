#!/usr/bin/env python
"""Lev MCP under dependency faults: what agents get while PostgreSQL, Redis, a Celery worker or the
API behind a split MCP service is gone, and how long the product takes to recover by itself.

The stack is the production one, on loopback only: gunicorn with deploy/gunicorn.conf.py (its default
worker class, 2 workers), a Celery worker and celery beat, PostgreSQL reached THROUGH A TCP PROXY this
script owns (cut = every connection reset, new ones refused), and a redis-server of its own on a
free port (cache, rate limits, breaker state, broker). The machine's shared PostgreSQL and Redis are
never stopped. A few client threads keep calling while one fault at a time is injected:

  MCP   tools/call get_deal and list_deals (JSON-RPC over POST /mcp, like an agent host)
  REST  GET /api/v1/deals/{id}/ and /api/v1/deals/
  write POST /api/v1/deals/ (with an Idempotency-Key), about two a second
  /health polled every 0.5 s

Faults, each after the previous one recovered: PostgreSQL cut for 20 s; the own Redis SIGKILLed for
20 s, then started again (a lender search is requested during the outage); the Celery worker killed
with SIGKILL in the middle of a search, a new worker started at once; and the split MCP service
(a second gunicorn with LEV_API_BASE_URL pointing at the first) with the API killed for 20 s.
Every response is counted; the table at the end is in the format of docs/reliability.md.

Usage:  make faults          (or: python bench/faults.py [--fault-seconds 20] [--only pg,redis,worker,split])
DATABASE_URL must be PostgreSQL; default postgres://postgres@127.0.0.1:5432/lev_faults (created if
missing; demo data is seeded into it and the demo API key registered, so never point it at real data).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.faults import RedisServer, TcpProxy, free_port  # noqa: E402

PY = sys.executable
BIN = Path(PY).parent
ACCEPT = "application/json, text/event-stream"
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/lev_faults"
HEALTH_EVERY_S = 0.5
CLIENT_TIMEOUT_S = 30  # longer than any bounded call of the product (retry budget + one timeout)
RECOVERY_BOUND_S = 40  # breaker cooldown (30 s) + a probe; past this the row says "not recovered"
ACCESS_LINE = re.compile(rb" rid=")  # gunicorn access lines (deploy/gunicorn.conf.py access_log_format)


def now() -> float:
    return time.monotonic()


# --- the stack ------------------------------------------------------------------------------------
def ensure_database(url: str) -> None:
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin.replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def via_proxy(url: str, port: int) -> str:
    parts = urlsplit(url)
    auth = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
    return urlunsplit(parts._replace(netloc=f"{auth}127.0.0.1:{port}"))


class Proc:
    """A subprocess in its own process group, its output in a log file we can measure."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], logdir: Path):
        self.name, self.args, self.env = name, args, env
        self.log = logdir / f"{name}.log"
        self.process: subprocess.Popen | None = None

    def start(self) -> Proc:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(self.args, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        return self

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self.process = None

    def stop(self) -> None:
        self.kill(signal.SIGTERM)

    def size(self) -> int:
        return self.log.stat().st_size if self.log.exists() else 0


def log_slice(proc: Proc, start: int, end: int) -> dict[str, int]:
    with proc.log.open("rb") as f:
        f.seek(start)
        data = f.read(max(0, end - start))
    lines = data.splitlines(keepends=True)
    app = [line for line in lines if not ACCESS_LINE.search(line)]
    return {"bytes": len(data), "app_bytes": sum(map(len, app)), "tracebacks": data.count(b"Traceback")}


def wait_http(url: str, bound: float = 60) -> None:
    deadline = now() + bound
    while now() < deadline:
        with contextlib.suppress(requests.RequestException):
            if requests.get(url, timeout=2).status_code < 500:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {bound:.0f} s")


# --- load and what it saw -------------------------------------------------------------------------
@dataclass
class Record:
    started: float
    ended: float
    kind: str  # mcp | rest | write
    status: int  # HTTP status; 0 = no answer (refused, reset, timeout)
    code: str  # ok | tool or REST error code | jsonrpc-error | no-answer


@dataclass
class Health:
    at: float
    seconds: float
    status: int
    body: dict[str, Any]


@dataclass
class Load:
    api_url: str
    key: str
    deal_ids: list[int]
    mcp_url: str = ""
    records: list[Record] = field(default_factory=list)
    health: list[Health] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.mcp_url = self.mcp_url or self.api_url

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def _mcp(self, session: requests.Session, n: int) -> None:
        name, args = ("get_deal", {"deal_id": self.deal_ids[n % len(self.deal_ids)]}) if n % 2 else (
            "list_deals", {"limit": 20})
        body = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": args}}
        self._send(session, "mcp", "POST", f"{self.mcp_url}/mcp", json=body,
                   headers={**self.auth, "Accept": ACCEPT})

    def _rest(self, session: requests.Session, n: int) -> None:
        path = f"/api/v1/deals/{self.deal_ids[n % len(self.deal_ids)]}/" if n % 2 else "/api/v1/deals/?page_size=20"
        self._send(session, "rest", "GET", self.api_url + path, headers=self.auth)

    def _write(self, session: requests.Session, n: int) -> None:
        body = {"title": f"Fault bench deal {n}", "loan_amount": 5_000_000 + n, "loan_type": "permanent"}
        self._send(session, "write", "POST", f"{self.api_url}/api/v1/deals/", json=body,
                   headers={**self.auth, "Idempotency-Key": str(uuid.uuid4())})
        self.stop.wait(0.5)

    def _send(self, session: requests.Session, kind: str, method: str, url: str, **kwargs: Any) -> None:
        started = now()
        try:
            response = session.request(method, url, timeout=CLIENT_TIMEOUT_S, **kwargs)
            status, code = response.status_code, classify(kind, response)
        except requests.RequestException:
            status, code = 0, "no-answer"
            self.stop.wait(0.1)  # a refused connection returns at once: do not spin
        self.records.append(Record(started, now(), kind, status, code))  # list.append is atomic

    def _client(self, call) -> None:
        session, n = requests.Session(), 0
        while not self.stop.is_set():
            n += 1
            call(session, n)

    def _poll_health(self) -> None:
        while not self.stop.is_set():
            started = now()
            url = self.mcp_url + "/health"
            try:
                response = requests.get(url, timeout=5)
                body = response.json() if response.headers.get("Content-Type", "").startswith("application/json") \
                    else {}
                self.health.append(Health(started, now() - started, response.status_code, body))
            except (requests.RequestException, ValueError):
                self.health.append(Health(started, now() - started, 0, {}))
            self.stop.wait(max(0.0, HEALTH_EVERY_S - (now() - started)))

    def start(self, mcp_clients: int, rest_clients: int) -> list[threading.Thread]:
        threads = [threading.Thread(target=self._client, args=(self._mcp,), daemon=True) for _ in range(mcp_clients)]
        threads += [threading.Thread(target=self._client, args=(self._rest,), daemon=True)
                    for _ in range(rest_clients)]
        threads += [threading.Thread(target=self._client, args=(self._write,), daemon=True),
                    threading.Thread(target=self._poll_health, daemon=True)]
        for t in threads:
            t.start()
        return threads

    # -- reading the records --------------------------------------------------------------------
    def between(self, start: float, end: float, kind: str | None = None) -> list[Record]:
        return [r for r in list(self.records) if start <= r.started < end and (kind is None or r.kind == kind)]

    def first_ok_after(self, t: float, kind: str) -> float | None:
        oks = [r.ended for r in list(self.records) if r.kind == kind and r.started >= t and r.code == "ok"]
        return min(oks) - t if oks else None

    def health_between(self, start: float, end: float) -> list[Health]:
        return [h for h in list(self.health) if start <= h.at < end]


def classify(kind: str, response: requests.Response) -> str:
    try:
        if "text/event-stream" in response.headers.get("Content-Type", ""):
            line = next(x for x in response.text.splitlines() if x.startswith("data:"))
            payload = json.loads(line[5:])
        else:
            payload = response.json()
    except (ValueError, StopIteration):
        return "ok" if response.ok else f"http-{response.status_code}"
    if kind == "mcp" and isinstance(payload, dict) and response.status_code == 200:
        if "error" in payload:
            return "jsonrpc-error"
        result = payload.get("result") or {}
        return (result.get("structuredContent") or {}).get("code", "?") if result.get("isError") else "ok"
    if response.ok:
        return "ok"
    return payload.get("code", f"http-{response.status_code}") if isinstance(payload, dict) else "?"


# --- one fault ------------------------------------------------------------------------------------
@dataclass
class Row:
    fault: str
    fault_s: float
    mcp: collections.Counter
    mcp_http: collections.Counter
    rest: collections.Counter
    writes: collections.Counter
    breaker: str
    health: str
    recovery: str
    logs: str
    notes: list[str] = field(default_factory=list)


def fmt_counter(counter: collections.Counter) -> str:
    return ", ".join(f"{v:,} {k}" for k, v in counter.most_common()) or "none"


def measure(load: Load, name: str, start: float, end: float, procs: list[Proc], sizes: list[tuple[int, int]],
            notes: list[str]) -> Row:
    """Counts for requests started during [start, end), then waits (bounded) for the first successful
    MCP and REST calls after `end` and for the breaker to close."""
    deadline = end + RECOVERY_BOUND_S
    while now() < deadline:
        closed = any(h.body.get("circuit_breaker") == "closed" for h in load.health_between(end, now()))
        if load.first_ok_after(end, "mcp") is not None and load.first_ok_after(end, "rest") is not None and closed:
            break
        time.sleep(0.25)
    settle = now()
    mcp = load.between(start, end, "mcp")
    rest = load.between(start, end, "rest")
    writes = load.between(start, end, "write")
    states = [(h.at - start, h.body.get("circuit_breaker", "no answer")) for h in load.health_between(start, settle)]
    opened = next((t for t, s in states if s in ("open", "half_open")), None)
    closed_after = next((t - (end - start) for t, s in states if t > end - start and s == "closed"), None)
    if opened is None:
        breaker = "never opened"
    else:
        breaker = f"open {opened:.1f} s into the fault"
        breaker += f"; closed {closed_after:.1f} s after it" if closed_after is not None else "; still open"
    during = load.health_between(start, end)
    seen = collections.Counter(
        f"{h.body.get('status', 'no answer')}/{h.body.get('circuit_breaker', '-')}" if h.status else "no answer"
        for h in during)
    slowest = max((h.seconds for h in during), default=0)
    health = f"{fmt_counter(seen)} (slowest {slowest:.2f} s)"
    rec = []
    for kind in ("mcp", "rest"):
        first = load.first_ok_after(end, kind)
        rec.append(f"{kind.upper()} {first:.1f} s" if first is not None else f"{kind.upper()} not within "
                   f"{RECOVERY_BOUND_S} s")
    logs = []
    for proc, (a, b) in zip(procs, sizes, strict=True):
        sl = log_slice(proc, a, b)
        logs.append(f"{proc.name} {sl['bytes'] / 1024:,.0f} KB ({sl['app_bytes'] / 1024:,.0f} KB app, "
                    f"{sl['tracebacks']} tracebacks)")
    return Row(name, end - start, collections.Counter(r.code for r in mcp),
               collections.Counter(r.status for r in mcp), collections.Counter(r.code for r in rest),
               collections.Counter(r.code for r in writes), breaker, health, "; ".join(rec), "; ".join(logs), notes)


def start_search(load: Load, deal_title: str) -> tuple[int | None, str]:
    """A deal ready for ranking, and a lender search of it; (search id, what the API answered)."""
    session = requests.Session()
    deal = session.post(f"{load.api_url}/api/v1/deals/", timeout=CLIENT_TIMEOUT_S, headers=load.auth, json={
        "title": deal_title, "loan_amount": 18_500_000, "loan_type": "permanent", "business_plan": "stabilized",
        "properties": [{"name": "Riverside", "state": "TX", "asset_type": "multifamily"}]})
    if deal.status_code != 201:
        return None, f"deal create {deal.status_code} {classify('rest', deal)}"
    started = session.post(f"{load.api_url}/api/v1/deals/{deal.json()['id']}/lender-searches/", json={},
                           headers=load.auth, timeout=CLIENT_TIMEOUT_S)
    body = started.json() if started.headers.get("Content-Type", "").startswith("application/json") else {}
    return body.get("search_id"), f"{started.status_code} {body.get('status') or body.get('code')}"


def search_status(load: Load, search_id: int) -> tuple[str, int]:
    with contextlib.suppress(requests.RequestException, ValueError):
        r = requests.get(f"{load.api_url}/api/v1/lender-searches/{search_id}/?page_size=1", headers=load.auth,
                         timeout=5)
        if r.ok:
            body = r.json()
            return body.get("status", "?"), int(body.get("progress") or 0)
        return classify("rest", r), 0
    return "no-answer", 0


def watch_until_running(db_url: str, search_id: int, bound: float = 30) -> tuple[str, int]:
    import psycopg

    with psycopg.connect(db_url.replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
        t0, row = now(), ("?", 0)
        while now() - t0 < bound:
            row = conn.execute("SELECT status, progress FROM lenders_lendersearch WHERE id = %s",
                               (search_id,)).fetchone() or ("?", 0)
            if row[0] != "pending":
                break
            time.sleep(0.005)
    return row[0], int(row[1] or 0)


def wait_search(load: Load, search_id: int, bound: float) -> tuple[float | None, str]:
    t0, last = now(), ("?", 0)
    while now() - t0 < bound:
        last = search_status(load, search_id)
        if last[0] in ("completed", "failed"):
            return now() - t0, last[0]
        time.sleep(0.5)
    return None, f"{last[0]}, progress {last[1]} %"


# --- the run --------------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fault-seconds", type=float, default=20, help="how long each fault lasts (default 20)")
    parser.add_argument("--baseline-seconds", type=float, default=5, help="load before the first fault")
    parser.add_argument("--only", default="pg,redis,worker,split", help="faults to run, comma separated")
    parser.add_argument("--worker-wait", type=float, default=45,
                        help="how long to wait for a search whose worker was killed (default 45 s)")
    parser.add_argument("--mcp-clients", type=int, default=4)
    parser.add_argument("--rest-clients", type=int, default=2)
    parser.add_argument("--directory", type=int, default=3000, help="lenders in the directory (a search's size)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    faults = set(args.only.split(","))
    fault_s = args.fault_seconds
    run_started = now()

    db_url = os.environ.get("DATABASE_URL") or DEFAULT_DB
    if not db_url.startswith(("postgres://", "postgresql://")):
        sys.exit("bench/faults.py needs PostgreSQL: set DATABASE_URL=postgres://... (a scratch database)")
    ensure_database(db_url)
    pg = urlsplit(db_url)
    proxy = TcpProxy(pg.hostname or "127.0.0.1", pg.port or 5432).start()
    redis = RedisServer().start()
    logdir = Path(tempfile.mkdtemp(prefix="lev-faults-"))
    metrics_dir = logdir / "metrics"
    queue = f"faults-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ, "DJANGO_SETTINGS_MODULE": "lev.settings", "PYTHONPATH": str(ROOT),
        "DATABASE_URL": via_proxy(db_url, proxy.port), "REDIS_URL": redis.url, "CELERY_TASK_ALWAYS_EAGER": "false",
        "CELERY_TASK_DEFAULT_QUEUE": queue, "DEBUG": "false", "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "LOG_LEVEL": "INFO", "WEB_CONCURRENCY": "2",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        # The clients share one demo user: limits high enough that the counts show faults, not 429s.
        "LEV_RATE_LIMIT_READS": "1000000/min", "LEV_RATE_LIMIT_WRITES": "1000000/min",
        # gunicorn's max_requests (1000) recycles both workers within a second of each other every
        # ~15 s at this load, and the site answers nothing while they boot: a stall that is not the
        # fault being measured (docs/reliability.md). Off unless the caller sets it.
        "GUNICORN_MAX_REQUESTS": os.environ.get("GUNICORN_MAX_REQUESTS", "0"),
    }
    direct = {**env, "DATABASE_URL": db_url}
    subprocess.run([PY, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=direct, check=True, capture_output=True)
    creds = subprocess.run([PY, "manage.py", "seed_demo", "--print-credentials"], cwd=ROOT, env=direct, check=True,
                           capture_output=True, text=True).stdout
    key = next(line.split()[2] for line in creds.splitlines() if line.startswith("API key:"))
    subprocess.run([PY, "-c", f"import django; django.setup(); from deals.demo.directory import seed_directory; "
                    f"seed_directory({args.directory}, seed=17)"], cwd=ROOT, env=direct, check=True)

    api_port = free_port()
    gunicorn = [str(BIN / "gunicorn"), "--config", "deploy/gunicorn.conf.py"]  # the image's CMD
    web = Proc("web", gunicorn, {**env, "GUNICORN_BIND": f"127.0.0.1:{api_port}"}, logdir)
    celery = [str(BIN / "celery"), "-A", "lev"]
    worker_args = [*celery, "worker", "--pool=prefork", "--concurrency=1", "-Q", queue, "-n", f"{queue}@%h"]
    workers = [Proc("worker", worker_args, env, logdir)]
    beat = Proc("beat", [*celery, "beat", "-s", str(logdir / "beat-schedule")], env, logdir)
    split: Proc | None = None
    procs = [web, workers[0], beat]
    load: Load | None = None
    rows: list[Row] = []
    try:
        for p in procs:
            p.start()
        api_url = f"http://127.0.0.1:{api_port}"
        wait_http(api_url + "/health")
        deals = requests.get(f"{api_url}/api/v1/deals/?page_size=20", headers={"Authorization": f"Bearer {key}"},
                             timeout=30).json()["results"]
        load = Load(api_url, key, [d["id"] for d in deals])
        load.start(args.mcp_clients, args.rest_clients)
        baseline_start = now()
        time.sleep(args.baseline_seconds)
        base = load.between(baseline_start, now())
        print(f"baseline: {len(base)} calls in {args.baseline_seconds:.0f} s, "
              f"{fmt_counter(collections.Counter(r.code for r in base))}", flush=True)

        def logged() -> list[Proc]:
            return [web, workers[-1]]

        if "pg" in faults:
            watched = logged()
            before = [p.size() for p in watched]
            start = now()
            proxy.cut()
            time.sleep(fault_s)
            end = now()
            sizes = list(zip(before, [p.size() for p in watched], strict=True))
            proxy.restore()
            rows.append(measure(load, "PostgreSQL cut (TCP proxy)", start, end, watched, sizes, []))
            print(f"pg: done at {now() - run_started:.0f} s", flush=True)

        if "redis" in faults:
            watched = logged()
            before = [p.size() for p in watched]
            start = now()
            redis.kill()
            time.sleep(fault_s / 2)
            search_id, answer = start_search(load, "Search during Redis outage")
            time.sleep(max(0.0, fault_s - (now() - start)))
            end = now()
            sizes = list(zip(before, [p.size() for p in watched], strict=True))
            redis.start()
            notes = [f"lender search requested mid-outage: API answered {answer}"]
            row = measure(load, "Redis SIGKILL (own redis-server)", start, end, watched, sizes, notes)
            if search_id:
                took, final = wait_search(load, search_id, 15)
                notes.append(f"that search: {final} {now() - end:.0f} s after Redis returned" if took is not None
                             else f"that search: still {final} {now() - end:.0f} s after Redis returned")
            rows.append(row)
            print(f"redis: done at {now() - run_started:.0f} s", flush=True)

        if "worker" in faults:
            # The kill must land while the search runs (a ranking takes well under a second here), so
            # its status is watched in the database directly, not through the API.
            search_id, answer, seen = None, "", ("?", 0)
            for _attempt in range(3):
                search_id, answer = start_search(load, f"Search whose worker dies {uuid.uuid4().hex[:6]}")
                seen = watch_until_running(db_url, search_id) if search_id else ("?", 0)
                if seen[0] in ("running", "partial"):
                    break
            before = [p.size() for p in logged()]
            start = now()
            workers[-1].kill(signal.SIGKILL)
            new = Proc(f"worker{len(workers) + 1}", worker_args, env, logdir)
            new.log.unlink(missing_ok=True)
            watched = [*logged(), new.start()]
            workers.append(new)
            procs.append(new)
            took, final = wait_search(load, search_id, args.worker_wait) if search_id else (None, answer)
            end = now()
            sizes = list(zip([*before, 0], [p.size() for p in watched], strict=True))
            done = (f"completed {took:.1f} s after the kill" if took is not None and final == "completed"
                    else f"{final} after {took:.1f} s" if took is not None
                    else f"not done {args.worker_wait:.0f} s after the kill: {final}")
            notes = [f"search {search_id} was {seen[0]} ({seen[1]} %) when its worker got SIGKILL; {done}"]
            rows.append(measure(load, "Celery worker SIGKILL mid-search", start, end, watched, sizes, notes))
            print(f"worker: done at {now() - run_started:.0f} s", flush=True)

        if "split" in faults:
            split_port = free_port()
            split = Proc("mcp", gunicorn, {**env, "GUNICORN_BIND": f"127.0.0.1:{split_port}",
                                           "LEV_API_BASE_URL": api_url, "GUNICORN_PROC_NAME": "lev-mcp",
                                           "PROMETHEUS_MULTIPROC_DIR": str(logdir / "metrics-mcp")}, logdir).start()
            procs.append(split)
            wait_http(f"http://127.0.0.1:{split_port}/health")
            load.mcp_url = f"http://127.0.0.1:{split_port}"
            time.sleep(3)
            watched = [split, web]
            before = [p.size() for p in watched]
            start = now()
            web.kill(signal.SIGKILL)
            time.sleep(fault_s)
            end = now()
            sizes = list(zip(before, [p.size() for p in watched], strict=True))
            web.start()
            rows.append(measure(load, "split MCP service, API SIGKILLed (HTTP transport)", start, end, watched, sizes,
                                ["agents call the MCP service; REST clients call the dead API"]))
            print(f"split: done at {now() - run_started:.0f} s", flush=True)
    finally:
        if load is not None:
            load.stop.set()
        for p in reversed(procs):
            p.stop()
        redis.stop()
        proxy.close()

    print(report(rows, time.time(), now() - run_started))
    if args.json:
        args.json.write_text(json.dumps([row.__dict__ for row in rows], indent=2, default=str))
    print(f"\nlogs kept in {logdir}")


def report(rows: list[Row], wall: float, seconds: float) -> str:
    out = [f"\n## Lev MCP under faults ({time.strftime('%Y-%m-%d %H:%M', time.localtime(wall))}, "
           f"{os.cpu_count()} cores, whole run {seconds:.0f} s)\n",
           "| fault | what agents got (MCP tools/call) | REST reads / writes | breaker | `/health` during the fault "
           "| recovery after the fault (first success) | logs during the fault |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        http = ", ".join(f"HTTP {k or 'none'}: {v:,}" for k, v in sorted(r.mcp_http.items()))
        notes = "<br>" + "<br>".join(r.notes) if r.notes else ""
        out.append(f"| {r.fault} ({r.fault_s:.0f} s) | {fmt_counter(r.mcp)} ({http}) | reads: {fmt_counter(r.rest)}"
                   f"<br>writes: {fmt_counter(r.writes)} | {r.breaker} | {r.health} | {r.recovery}{notes} "
                   f"| {r.logs} |")
    return "\n".join(out)


if __name__ == "__main__":
    main()
