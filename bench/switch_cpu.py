#!/usr/bin/env python
"""Thread CPU per MCP `tools/call get_deal` in process with one boolean setting on and off (issue 24),
interleaved in one run: blocks of calls alternate on/off (the order flips every round), each a whole
WSGI request through lev.wsgi as gunicorn's worker makes it, every answer checked byte for byte against
the first. Thread CPU time is this request's work alone, whatever else the shared machine runs.

    DATABASE_URL=postgres://... REDIS_URL=redis://... LEV_RATE_LIMIT_READS=10000000/min \\
        python bench/switch_cpu.py --switch LEV_BOUND_FIELD_OUTPUT [--calls 400] [--rounds 16]

(The switch is set on django.conf.settings between blocks, so it must be one read per call, as
LEV_BOUND_FIELD_OUTPUT is; a switch read once at startup needs bench/ab_shortcuts.py, two servers.)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--switch", required=True, help="a boolean setting of lev/settings.py read per call")
    parser.add_argument("--calls", type=int, default=400, help="calls per block")
    parser.add_argument("--rounds", type=int, default=16, help="rounds of one block on and one off")
    args = parser.parse_args()
    from bench.run import demo_key_and_deal

    key, deal_id = demo_key_and_deal()
    from django.conf import settings

    import lev.wsgi

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "get_deal", "arguments": {"deal_id": deal_id}}}).encode()

    def call() -> bytes:
        environ = {"REQUEST_METHOD": "POST", "PATH_INFO": "/mcp", "SCRIPT_NAME": "", "QUERY_STRING": "",
                   "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)), "SERVER_NAME": "localhost",
                   "SERVER_PORT": "80", "HTTP_HOST": "localhost", "HTTP_ACCEPT": "application/json, text/event-stream",
                   "HTTP_AUTHORIZATION": f"Bearer {key}", "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http",
                   "wsgi.errors": io.StringIO(), "REMOTE_ADDR": "127.0.0.1", "wsgi.input_terminated": True}
        status = []
        result = lev.wsgi.application(environ, lambda s, h, exc_info=None: status.append(s))
        try:
            out = b"".join(result)
        finally:
            result.close()
        assert status[0].startswith("200"), (status, out[:300])
        return out

    load_before = os.getloadavg()
    reference = None
    for on in (True, False):  # warm up; both ways answer the same bytes
        setattr(settings, args.switch, on)
        for _ in range(200):
            out = call()
        reference = reference or out
        assert out == reference, "the answers differ"
    cpu: dict[bool, list[float]] = {True: [], False: []}
    for round_ in range(args.rounds):
        for on in ((True, False) if round_ % 2 == 0 else (False, True)):
            setattr(settings, args.switch, on)
            for _ in range(20):
                call()
            c0 = time.thread_time()
            for _ in range(args.calls):
                assert call() == reference
            cpu[on].append((time.thread_time() - c0) / args.calls * 1000)
    on, off = statistics.median(cpu[True]), statistics.median(cpu[False])
    pairs = [(b - a) / b * 100 for a, b in zip(cpu[True], cpu[False], strict=True)]
    print(f"{args.switch}: {args.rounds} rounds x {args.calls} calls a block, interleaved; load average "
          f"{' '.join(f'{x:.2f}' for x in load_before)} before, {' '.join(f'{x:.2f}' for x in os.getloadavg())} after")
    print(f"on  {on:.3f} ms/call (rounds {' '.join(f'{x:.3f}' for x in cpu[True])})")
    print(f"off {off:.3f} ms/call (rounds {' '.join(f'{x:.3f}' for x in cpu[False])})")
    print(f"saved {off - on:.3f} ms/call, {(off - on) / off * 100:.1f} % (per round pair median "
          f"{statistics.median(pairs):.1f} %); answers identical ({len(reference)} bytes)")


if __name__ == "__main__":
    main()
