#!/usr/bin/env python
"""Lev MCP beside the official SDK servers (issue 24): MCP `tools/call get_deal` on six servers, side by
side in one run, each on 2 worker processes reading the same PostgreSQL row and answering the same
payload; every ratio is to the floor.

  floor    a plain Django view doing one SELECT (/bench/floor/<id>, bench.settings), production command
  sdk      the official MCP Python SDK 2.x (`MCPServer`, bench/peers/sdk_server.py) on uvicorn, no auth
  fastmcp  FastMCP 4.x (bench/peers/fastmcp_server.py) on uvicorn, no auth
  lev      Lev's /mcp, production command (`gunicorn --config deploy/gunicorn.conf.py`), every protection
           on: API key, scopes, tenancy, rate limits (on Redis when REDIS_URL is set), breaker, budget...
  lev-before
           Lev as it was at --before (default e051661, before issue 40 retired the shortcuts that reached
           into Django's, DRF's, asgiref's and gunicorn's internals), the same command from a detached git
           worktree of that commit (.tools/peers/lev-before-<commit>), Lev's virtualenv, the same database:
           before and after in the same run
  dmcp     a bare django-mcp-server tool (bench/peers/dmcp/), Lev's own virtualenv, gunicorn, no auth

The SDK and FastMCP need mcp 2.x, which Lev's virtualenv cannot hold (mcp<2): each is built in its own
virtualenv under .tools/peers/<name>/ (git-ignored) from bench/peers/requirements-<name>.txt, rebuilt
when that file changes. Every MCP server runs stateless (one POST per call, no initialize, no session):
the SDK and FastMCP with stateless_http and JSON responses, django-mcp-server with "stateless": True, Lev
as it is.

1. Latency: one client, a kept-alive connection per server (a server that closes it is reconnected,
   and that is timed), --rounds rounds of --calls calls per server after --warmup calls each, round-robin
   call by call with the order rotated every cycle, so drift on the shared machine hits all alike.
   p50 / p90 / p99 per server, p50 / floor per round and over all rounds, and server CPU per call.
2. Throughput: wrk, 8 connections (2 threads), --wrk-seconds per server, --passes passes (the order
   rotated each pass) after a 2 s warm-up: req/s and req/s / floor per pass, and how each pass's
   connections sat on the server's processes (ss); a pass with every connection on one process measured
   one worker and is run again, at most twice (ONE_PROCESS_RETRIES). wrk is the Debian package,
   installed with apt-get when missing; if that fails, a Python keep-alive load generator (threads,
   bench/run.py's `load`) stands in and the report says so.

Every answer is checked, timed or not: each MCP server's `result` must equal Lev's for the same deal
(the same JSON text and the same structuredContent), the floor must answer its first answer again; wrk's
script checks every answer for the payload. Any wrong answer fails the run (exit 1).

    python bench/peers/run.py [--calls 1000] [--rounds 3] [--wrk-seconds 15] [--passes 3]
                              [--only sdk,lev] [--base-port 0] [--warmup 200]
    make bench-peers PEERS_ARGS="--calls 200 --wrk-seconds 5"

Needs DATABASE_URL on PostgreSQL (a scratch database: demo data is seeded into it and the demo admin's
password reset, as bench/run.py does) and, for Lev's shared rate limits and breaker, REDIS_URL.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import http.client
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
PEERS = ROOT / "bench" / "peers"
TOOLS = ROOT / ".tools" / "peers"
# The venvs this command builds: name -> requirements file (pins with their reasons inside).
from bench.ab_shortcuts import Door, pct  # noqa: E402  (after the path above)

VENVS = {"sdk": PEERS / "requirements-sdk.txt", "fastmcp": PEERS / "requirements-fastmcp.txt"}
ORDER = ["floor", "sdk", "fastmcp", "lev", "lev-before", "dmcp"]
# The commit "lev-before" runs: main before issue 40 (its shortcuts into the libraries' internals in place).
BEFORE = "e051661"
LABELS = {
    "floor": "floor: a plain Django view, one SELECT",
    "sdk": "official MCP SDK {sdk} `MCPServer` on uvicorn (no auth)",
    "fastmcp": "FastMCP {fastmcp} on uvicorn (no auth)",
    "lev": "**Lev MCP** (production command, every protection on)",
    "lev-before": "Lev MCP at {before} (before issue 40)",
    "dmcp": "bare django-mcp-server {dmcp} tool (no auth)",
}
WRK_CONNECTIONS = 8


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def say(message: str) -> None:
    print(f"[peers {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- building the peers -----------------------------------------------------------------------------
def ensure_venv(name: str) -> Path:
    """The peer's virtualenv, (re)built from its pinned requirements when missing or when the file changed."""
    requirements = VENVS[name]
    venv = TOOLS / name
    stamp = venv / ".requirements-sha256"
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()
    if (venv / "bin" / "python").exists() and stamp.exists() and stamp.read_text() == digest:
        return venv
    say(f"building {venv.relative_to(ROOT)} from {requirements.relative_to(ROOT)}")
    TOOLS.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "-r", str(requirements)], check=True)
    stamp.write_text(digest)
    return venv


def installed_version(python: Path, package: str) -> str:
    return subprocess.run([str(python), "-c", f"import importlib.metadata as m; print(m.version({package!r}))"],
                          check=True, capture_output=True, text=True).stdout.strip()


def ensure_wrk() -> str | None:
    """wrk's path; installs Debian's package when missing (as root). None when it cannot be had."""
    found = shutil.which("wrk")
    if found or not shutil.which("apt-get"):
        return found
    say("wrk missing: apt-get install -y wrk")
    for command in (["apt-get", "install", "-y", "-q", "wrk"], ["apt-get", "update", "-q"],
                    ["apt-get", "install", "-y", "-q", "wrk"]):
        subprocess.run(command, capture_output=True)
        if shutil.which("wrk"):
            break
    return shutil.which("wrk")


# --- the servers ------------------------------------------------------------------------------------
class Process:
    """A peer server's process (uvicorn or a plain gunicorn), with what bench_gunicorn.Gunicorn offers:
    proc, port, wait_ready, stop."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], cwd: Path, port: int, ready: Door):
        import tempfile

        self.name, self.port, self.ready_door = name, port, ready
        self.log = tempfile.NamedTemporaryFile(prefix=f"peers-{name}-", suffix=".log", delete=False)  # noqa: SIM115
        self.proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=self.log, stderr=self.log)

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                _, status, _ = self.ready_door.call(conn)
                conn.close()
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"{self.name} did not start: {Path(self.log.name).read_text(errors='replace')[-2000:]}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        Path(self.log.name).unlink(missing_ok=True)


@dataclass
class Target:
    key: str
    label: str
    door: Door
    server: object  # Gunicorn or Process: .proc, .port, .wait_ready(), .stop()
    expect: bytes = b""  # what every answer must contain (wrk) / equal (parsed, below)
    reference: object = None
    latencies: list[list[float]] = field(default_factory=list)
    errors: int = 0
    first_error: str = ""
    cpu_ms: float = 0.0
    rps: list[float] = field(default_factory=list)
    splits: list[str] = field(default_factory=list)  # connections per worker process, per wrk pass
    wrk_errors: list[str] = field(default_factory=list)

    def correct(self, status: int, data: bytes) -> bool:
        """The floor answers its first answer again; an MCP server answers Lev's result."""
        if status != 200:
            return False
        if self.key == "floor":
            return data == self.reference
        try:
            return json.loads(data)["result"] == self.reference
        except (ValueError, KeyError, TypeError):
            return False


def mcp_door(key: str | None, deal_id: int) -> Door:
    from bench.run import ACCEPT, mcp_body

    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return Door("MCP tools/call get_deal", "POST", "/mcp", headers, mcp_body("get_deal", {"deal_id": deal_id}))


def before_tree(commit: str) -> Path:
    """A detached worktree of `commit` (made once, kept under .tools/peers/, git-ignored)."""
    sha = subprocess.run(["git", "rev-parse", "--short=12", commit], cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout.strip()
    tree = TOOLS / f"lev-before-{sha}"
    if not (tree / "manage.py").exists():
        say(f"checking out {commit} into {tree.relative_to(ROOT)}")
        TOOLS.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "worktree", "prune"], cwd=ROOT, check=True)
        subprocess.run(["git", "worktree", "add", "--detach", "--force", str(tree), sha], cwd=ROOT, check=True,
                       capture_output=True)
    return tree


def start_servers(only: list[str], key: str, deal_id: int, base_port: int,
                  before: str = BEFORE) -> dict[str, Target]:
    from bench.bench_gunicorn import Gunicorn
    from bench.run import ENV, PY, free_port

    ports = {name: (base_port + i if base_port else free_port()) for i, name in enumerate(ORDER)}
    versions = {"dmcp": installed_version(Path(PY), "django-mcp-server")}
    targets: dict[str, Target] = {}
    # deploy/gunicorn.conf.py's defaults otherwise (the ASGI worker, preloaded), bench.settings (the product
    # plus the floor view; rate limits high enough never to refuse, still counted on Redis) and DEBUG off as
    # in production (the development default is on: it keeps every query's SQL).
    production = {"WEB_CONCURRENCY": "2", "DEBUG": "false"}
    peer_env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "PYTHONPATH"}}
    for name in ORDER:
        if name not in only:
            continue
        port = ports[name]
        if name == "floor":
            door = Door("GET /bench/floor/{id}", "GET", f"/bench/floor/{deal_id}", {}, None)
            server = Gunicorn(name, production, ENV, port=port)
        elif name == "lev":
            door = mcp_door(key, deal_id)
            server = Gunicorn(name, production, ENV, port=port)
        elif name == "lev-before":
            door = mcp_door(key, deal_id)
            server = Gunicorn(name, production, ENV, port=port, root=before_tree(before))
        elif name == "dmcp":
            door = mcp_door(None, deal_id)
            env = {**peer_env, "PYTHONPATH": str(ROOT), "DJANGO_SETTINGS_MODULE": "bench.peers.dmcp.settings"}
            # gunicorn's default sync workers: the library's own deployment (a WSGI Django view).
            server = Process(name, [str(Path(PY).parent / "gunicorn"), "bench.peers.dmcp.wsgi", "-w", "2",
                                    "-b", f"127.0.0.1:{port}", "--log-level", "warning"], env, ROOT, port, door)
        else:
            venv = ensure_venv(name)
            versions[name] = installed_version(venv / "bin" / "python", "mcp" if name == "sdk" else "fastmcp")
            door = mcp_door(None, deal_id)
            env = {**peer_env, "PEERS_DSN": os.environ["DATABASE_URL"]}
            server = Process(name, [str(venv / "bin" / "uvicorn"), f"{name}_server:app", "--workers", "2",
                                    "--host", "127.0.0.1", "--port", str(port), "--no-access-log",
                                    "--log-level", "warning", "--loop", "uvloop", "--http", "httptools"],
                             env, PEERS, port, door)
        label = LABELS[name].format(sdk=versions.get("sdk"), fastmcp=versions.get("fastmcp"), dmcp=versions["dmcp"],
                                    before=before)
        targets[name] = Target(name, label, door, server)
    return targets


def references(targets: dict[str, Target]) -> list[str]:
    """Each server's first answer checked against Lev's (MCP) or the deal (floor): the same payload."""
    answers = {}
    for name, target in targets.items():
        conn = http.client.HTTPConnection("127.0.0.1", target.server.port, timeout=30)
        _, status, data = target.door.call(conn)
        conn.close()
        if status != 200 or b'"isError":true' in data:
            raise SystemExit(f"{name} answered {status}: {data[:500]!r}")
        answers[name] = data
    lev = json.loads(answers["lev"])["result"]
    payload = lev["structuredContent"]
    if json.loads(lev["content"][0]["text"]) != payload:
        raise SystemExit(f"Lev's text and structuredContent differ: {lev}")
    checked = []
    for name, target in targets.items():
        if name == "floor":
            target.reference = answers[name]
            floor = json.loads(answers[name])
            if floor["id"] != payload["deal"]["id"] or floor["title"] != payload["deal"]["title"]:
                raise SystemExit(f"the floor reads another row: {floor}")
            target.expect = answers[name]
            checked.append(f"floor: {len(answers[name])} bytes, the same deal ({floor['title']!r})")
            continue
        result = json.loads(answers[name])["result"]
        if result != lev:
            raise SystemExit(f"{name} answers get_deal differently from Lev:\n{result}\n!=\n{lev}")
        target.reference = lev
        target.expect = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
        checked.append(f"{name}: {len(answers[name])} bytes, result equal to Lev's")
    return checked


# --- 1. latency, interleaved --------------------------------------------------------------------------
def measure_latency(targets: dict[str, Target], rounds: int, calls: int, warmup: int) -> None:
    from bench.run import cpu_seconds

    names = list(targets)
    conns = {n: http.client.HTTPConnection("127.0.0.1", targets[n].server.port, timeout=30) for n in names}

    def one(n: str) -> float:
        target = targets[n]
        try:
            seconds, status, data = target.door.call(conns[n])
        except (OSError, http.client.HTTPException) as exc:
            conns[n].close()
            seconds, status, data = 0.0, 0, repr(exc).encode()
        if not target.correct(status, data):
            target.errors += 1
            target.first_error = target.first_error or f"{status} {data[:300]!r}"
        return seconds

    for _ in range(warmup):
        for n in names:
            one(n)
    cpu_before = {n: cpu_seconds(targets[n].server.proc.pid) for n in names}
    for _ in range(rounds):
        for n in names:
            targets[n].latencies.append([])
        for i in range(calls):
            shift = i % len(names)
            for n in names[shift:] + names[:shift]:
                targets[n].latencies[-1].append(one(n))
    for n in names:
        targets[n].cpu_ms = (cpu_seconds(targets[n].server.proc.pid) - cpu_before[n]) * 1000 / (rounds * calls)
        conns[n].close()


# --- 2. throughput with wrk -----------------------------------------------------------------------------
def run_wrk(wrk: str, target: Target, seconds: float) -> tuple[float, str, str]:
    """req/s of one wrk run, its errors ('' when none; a wrong answer is an error) and how its connections
    sat on the server's processes (connections_per_process)."""
    door = target.door
    env = {**os.environ, "PEERS_METHOD": door.method, "PEERS_BODY": (door.body or b"").decode(),
           "PEERS_HEADERS": "\n".join(f"{k}: {v}" for k, v in door.headers.items()),
           "PEERS_EXPECT": target.expect.decode()}
    with subprocess.Popen([wrk, "-t2", f"-c{WRK_CONNECTIONS}", f"-d{seconds:g}s", "-s", str(PEERS / "wrk.lua"),
                           f"http://127.0.0.1:{target.server.port}{door.path}"],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as run:
        time.sleep(min(1.0, seconds / 3))
        split = connections_per_process(target.server.port)
        text = run.communicate(timeout=seconds + 60)[0]
    rps = re.search(r"Requests/sec:\s+([\d.]+)", text)
    bad = re.search(r"PEERS_BAD (\d+) ?(.*)", text)
    if not rps or not bad:
        return 0.0, f"wrk failed: {text[-500:]}", split
    errors = []
    if int(bad.group(1)):
        errors.append(f"{bad.group(1)} wrong answers (first: {bad.group(2)[:200]})")
    if non_2xx := re.search(r"Non-2xx or 3xx responses: (\d+)", text):
        errors.append(f"{non_2xx.group(1)} non-2xx")
    if sockets := re.search(r"Socket errors: (.*)", text):
        errors.append(f"socket errors: {sockets.group(1)}")
    return float(rps.group(1)), "; ".join(errors), split


def connections_per_process(port: int) -> str:
    """How the load's connections to `port` sit on the server's processes, e.g. "5/3" (most first): every
    server here shares one listening socket between two worker processes, and which process accepts a
    connection is the kernel's race, so now and then all eight land on one (8/0, seen for the floor and for
    Lev alike) and that pass measures one worker, not two. Read with `ss`; "?" when it cannot be read."""
    try:
        out = subprocess.run(["ss", "-tnpH", "state", "established", f"( sport = :{port} )"], capture_output=True,
                             text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    counts = sorted(collections.Counter(re.findall(r"pid=(\d+)", out)).values(), reverse=True)
    if not counts:
        return "?"
    return "/".join(str(c) for c in counts) + ("/0" if len(counts) == 1 else "")


def run_python_load(target: Target, seconds: float) -> tuple[float, str, str]:
    """The fallback without wrk: bench/run.py's keep-alive load (threads, requests.Session)."""
    from bench.run import load

    door = target.door
    run = load(door.method, f"http://127.0.0.1:{target.server.port}{door.path}", door.headers, door.body, seconds,
               WRK_CONNECTIONS)
    return run["rps"], f"{run['errors']} errors" if run["errors"] else "", "?"


def measure_throughput(targets: dict[str, Target], wrk: str | None, seconds: float, passes: int) -> None:
    def go(target: Target, length: float) -> tuple[float, str, str]:
        return run_wrk(wrk, target, length) if wrk else run_python_load(target, length)

    names = list(targets)
    for n in names:  # warm-up: every worker and connection of every server
        go(targets[n], 2)
    for p in range(passes):
        shift = p % len(names)
        for n in names[shift:] + names[:shift]:
            split = ""
            for attempt in range(1 + ONE_PROCESS_RETRIES):
                say(f"pass {p + 1}/{passes}: {n}, {seconds:g} s" + (f" (again: {split})" if attempt else ""))
                rps, errors, split = go(targets[n], seconds)
                if errors:
                    targets[n].wrk_errors.append(f"pass {p + 1}: {errors}")
                if not one_process(split):
                    break
            targets[n].rps.append(rps)
            targets[n].splits.append(split + (f" (run {attempt + 1}x)" if attempt else ""))


# A pass whose eight keep-alive connections all sat on one of a server's two worker processes measured one
# process, not the server: it is run again (the same for every server), at most this many times, and the
# report says how often (connections per worker, "(run 2x)"). Which process accepts a connection is the
# kernel's race on the shared listening socket; seen for the floor, the SDK's, FastMCP's and Lev's alike.
ONE_PROCESS_RETRIES = 2


def one_process(split: str) -> bool:
    """Whether connections_per_process found every one of the load's connections on one process."""
    return split == f"{WRK_CONNECTIONS}/0"


# --- the report -------------------------------------------------------------------------------------
def report(targets: dict[str, Target], *, rounds: int, calls: int, warmup: int, wrk: str | None, seconds: float,
           passes: int, checked: list[str], loads: dict[str, str], elapsed: float) -> str:
    from bench.run import table

    floor = targets["floor"]
    floor_p50 = pct(list(itertools.chain.from_iterable(floor.latencies)), 0.5)
    floor_round = [pct(r, 0.5) for r in floor.latencies]
    floor_rps = statistics.median(floor.rps) if floor.rps else 0.0
    rows, detail = [], []
    for t in targets.values():
        every = list(itertools.chain.from_iterable(t.latencies))
        p50 = pct(every, 0.5)
        rps = statistics.median(t.rps) if t.rps else 0.0
        bold = "**" if t.key == "lev" else ""
        rows.append([t.label, f"{p50:.2f}", f"{pct(every, 0.9):.2f}", f"{pct(every, 0.99):.2f}",
                     f"{bold}{p50 / floor_p50:.2f}x{bold}", f"{rps:.0f}" if rps else "-",
                     f"{bold}{rps / floor_rps:.2f}x{bold}" if rps and floor_rps else "-", f"{t.cpu_ms:.2f}", t.errors])
        detail.append([t.key, " / ".join(f"{pct(r, 0.5) / f:.2f}x" for r, f in zip(t.latencies, floor_round,
                                                                                     strict=True)),
                       " / ".join(f"{r:.0f}" for r in t.rps),
                       " / ".join(f"{r / f:.2f}x" for r, f in zip(t.rps, floor.rps, strict=True)),
                       " / ".join(t.splits) or "-", "; ".join(t.wrk_errors) or "none"])
    tool = f"wrk -t2 -c{WRK_CONNECTIONS}" if wrk else \
        f"a Python keep-alive load generator ({WRK_CONNECTIONS} threads; wrk was not available)"
    throughput = (f"Throughput: {tool}, {seconds:g} s per server, {passes} passes (median), after a 2 s warm-up. "
                  if passes else "No throughput part (--passes 0). ")
    head = (f"### Beside the official SDK servers ({time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, "
            f"load average {loads['before']} before, {loads['middle']} between the parts, {loads['after']} after)\n\n"
            f"Latency: one client, {rounds} rounds x {calls} calls per server after {warmup} warm-up calls each, "
            f"round-robin call by call. {throughput}Each server on 2 worker processes; {elapsed:.0f} s in all.\n"
            "Same answers (and every timed answer checked again):\n" + "\n".join(f"- {c}" for c in checked))
    main_table = table("MCP tools/call get_deal, against the floor",
                       ["server", "p50 ms", "p90 ms", "p99 ms", "p50 / floor", "req/s at 8", "req/s / floor",
                        "server CPU ms/call", "wrong answers"], rows)
    rounds_table = table("Per round and per pass", ["server", "p50 / floor per round", "req/s per pass",
                                                    "req/s / floor per pass", "connections per worker", "load errors"],
                         detail)
    return head + "\n" + main_table + "\n" + rounds_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000, help="timed calls per server per round (default 1000)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--warmup", type=int, default=200, help="untimed calls per server first (default 200)")
    parser.add_argument("--wrk-seconds", type=float, default=15, help="wrk seconds per server per pass (default 15)")
    # Three: the median of two is their mean, so one pass whose connections sat unevenly on the two workers
    # (6/2 or 7/1: the kernel's race, for every server alike) moved it; the median of three is the middle one.
    parser.add_argument("--passes", type=int, default=3, help="wrk passes over every server (default 3; 0: none)")
    parser.add_argument("--only", default=",".join(ORDER[1:]),
                        help=f"servers beside the floor, comma-separated, of {','.join(ORDER[1:])} (default all)")
    parser.add_argument("--before", default=BEFORE,
                        help=f"the commit lev-before runs (default {BEFORE}, main before issue 40)")
    parser.add_argument("--base-port", type=int, default=0,
                        help="the servers listen on this port and the next five (default: free ports)")
    args = parser.parse_args()
    only = ["floor", *[n.strip() for n in args.only.split(",") if n.strip()]]
    unknown = set(only) - set(ORDER)
    if unknown:
        parser.error(f"unknown servers: {', '.join(sorted(unknown))} (of {', '.join(ORDER)})")
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        print("DATABASE_URL must name a PostgreSQL scratch database (demo data is seeded into it).", file=sys.stderr)
        raise SystemExit(2)
    if "lev" not in only:
        only.append("lev")  # the reference answer every MCP server must give
    from bench.run import demo_key_and_deal

    started = time.monotonic()
    loads = {"before": loadavg()}
    wrk = ensure_wrk() if args.passes else None
    if args.passes and not wrk:
        say("wrk unavailable (apt-get failed): throughput with the Python load generator instead")
    for name in VENVS:
        if name in only:
            ensure_venv(name)
    say("seeding the demo database")
    key, deal_id = demo_key_and_deal()
    targets = start_servers(only, key, deal_id, args.base_port, args.before)
    try:
        for target in targets.values():
            target.server.wait_ready()
        checked = references(targets)
        say(f"latency: {args.rounds} x {args.calls} calls per server")
        measure_latency(targets, args.rounds, args.calls, args.warmup)
        loads["middle"] = loadavg()
        if args.passes:
            measure_throughput(targets, wrk, args.wrk_seconds, args.passes)
        loads["after"] = loadavg()
    finally:
        for target in targets.values():
            target.server.stop()
    print(report(targets, rounds=args.rounds, calls=args.calls, warmup=args.warmup, wrk=wrk,
                 seconds=args.wrk_seconds, passes=args.passes, checked=checked, loads=loads,
                 elapsed=time.monotonic() - started), flush=True)
    wrong = [f"{t.key}: {t.errors} wrong answers (first: {t.first_error})" for t in targets.values() if t.errors]
    wrong += [f"{t.key}: {e}" for t in targets.values() for e in t.wrk_errors if "wrong answers" in e or "non-2xx" in e]
    if wrong:
        print("\nFAILED: every answer must be right:\n" + "\n".join(wrong), file=sys.stderr)
        raise SystemExit(1)


if __name__ == "__main__":
    main()
