#!/usr/bin/env python
"""Thread CPU per call of the deal reads, in process: REST `GET /api/v1/deals/{id}/` (without and with
`?include=financials`) and MCP `tools/call get_deal` (without, with include financials, with include
properties: the deal and its properties' first page), each a whole
WSGI request through lev.wsgi.application on this thread, the shapes interleaved call by call (the order
rotated each call). The thread's CPU time is the request's own work (the machine is shared: wall time is
other processes' too).

It measures whatever code it runs against, so a before/after is two runs of this same file, one per
checkout, back to back on the same database (issue 40: the deal read written explicitly, against the
compiled read and field writers it replaced):

    cd <checkout> && DATABASE_URL=postgres://... REDIS_URL=redis://... DEBUG=false \\
        PYTHONPATH=<checkout> python <this file> [--calls 1500] [--rounds 3] [--label before]

Each shape's answer is printed as a SHA-256 of its bytes: two checkouts that answer the same bytes print
the same digests.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import statistics
import sys
import time
from pathlib import Path

if os.environ.get("PYTHONPATH"):  # the checkout measured, as given (a before/after runs this file twice)
    sys.path.insert(0, os.environ["PYTHONPATH"].split(os.pathsep)[0])
else:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def rest_environ(key: str, path: str, query: str = "") -> dict:
    """The WSGI environ of a REST GET as gunicorn's worker hands it to the application."""
    return {"REQUEST_METHOD": "GET", "PATH_INFO": path, "SCRIPT_NAME": "", "QUERY_STRING": query,
            "SERVER_NAME": "localhost", "SERVER_PORT": "80", "HTTP_HOST": "localhost",
            "HTTP_ACCEPT": "application/json", "HTTP_AUTHORIZATION": f"Bearer {key}",
            "wsgi.input": io.BytesIO(b""), "wsgi.url_scheme": "http", "wsgi.errors": io.StringIO(),
            "REMOTE_ADDR": "127.0.0.1", "wsgi.input_terminated": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1500, help="calls per shape per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=300, help="untimed calls per shape")
    parser.add_argument("--label", default="", help="printed beside the figures (before, after)")
    args = parser.parse_args()
    from bench._django import setup

    setup(unthrottled=True, django=False)
    from bench._django import mcp_environ, wsgi_call
    from bench.run import demo_key_and_deal

    key, deal_id = demo_key_and_deal()
    from django.conf import settings
    from django.db import connection

    import lev.wsgi

    assert not settings.DEBUG, "run with DEBUG=false"
    app = lev.wsgi.application

    def mcp_body(arguments: dict) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "get_deal", "arguments": arguments}}).encode()

    shapes = {
        "REST GET /deals/{id}/": lambda: rest_environ(key, f"/api/v1/deals/{deal_id}/"),
        "REST ?include=financials": lambda: rest_environ(key, f"/api/v1/deals/{deal_id}/", "include=financials"),
        "MCP get_deal": lambda: mcp_environ(key, mcp_body({"deal_id": deal_id})),
        "MCP get_deal include financials": lambda: mcp_environ(
            key, mcp_body({"deal_id": deal_id, "include": ["financials"]})),
        "MCP get_deal include properties": lambda: mcp_environ(
            key, mcp_body({"deal_id": deal_id, "include": ["properties"]})),
    }

    def call(shape: str) -> bytes:
        status, _headers, out = wsgi_call(app, shapes[shape]())
        assert status.startswith("200"), (shape, status, out[:300])
        return out

    names = list(shapes)
    reference = {}
    for name in names:  # warm up; each shape answers the same bytes every call
        for _ in range(args.warmup):
            out = call(name)
            reference.setdefault(name, out)
            assert out == reference[name], name
    cpu: dict = {n: [] for n in names}
    per_round: dict = {n: [] for n in names}
    for round_ in range(args.rounds):
        start = {n: len(cpu[n]) for n in names}
        for i in range(args.calls):
            for j in range(len(names)):
                name = names[(i + j + round_) % len(names)]
                c0 = time.thread_time()
                out = call(name)
                cpu[name].append(time.thread_time() - c0)
                assert out == reference[name], name
        for n in names:
            per_round[n].append(statistics.median(cpu[n][start[n]:]) * 1e6)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"{args.label}: PostgreSQL {connection.vendor == 'postgresql'}, deal {deal_id}; {args.rounds} rounds x "
          f"{args.calls} calls per shape, interleaved; load average {load} after")
    print("| shape | median thread CPU us | median per round | answer SHA-256 (first 12) |")
    print("|---|---|---|---|")
    for n in names:
        print(f"| {n} | {statistics.median(cpu[n]) * 1e6:.1f} | "
              f"{' / '.join(f'{x:.1f}' for x in per_round[n])} | {hashlib.sha256(reference[n]).hexdigest()[:12]} |")


if __name__ == "__main__":
    main()
