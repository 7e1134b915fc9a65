"""Slow clients and the probes that watch the site while they hold their connections (issue #19).

Used by bench/bench_gunicorn.py (the measurement) and tests/deploy/test_slow_clients.py (the test
that holds the production configuration to it). Loopback only; every loop is bounded in count and time.

A slow client opens a connection and then sends one byte a second: half of them a body (a POST to
/mcp announcing 1,000 bytes: none authenticated), the other half their request headers. A probe is
one request on a fresh connection, with a per-request timeout: GET /health, or an account's MCP
tools/call get_deal with its API key.
"""

from __future__ import annotations

import http.client
import json
import socket
import statistics
import threading
import time


class SlowClients:
    """`count` connections trickling a byte a second until `stop()` or `hold` seconds, whichever first."""

    def __init__(self, host: str, port: int, count: int, *, hold: float, interval: float = 1.0):
        self.host, self.port, self.count, self.hold, self.interval = host, port, count, hold, interval
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._trickle, args=(i,), daemon=True) for i in range(count)]
        self.connected = 0
        self.cut_off = 0  # connections the server closed (or refused) before the client finished
        self.trickling = 0  # connections that sent their head and a first trickled byte
        self._lock = threading.Condition()

    def _trickle(self, index: int) -> None:
        body = index % 2 == 0
        head = (f"POST /mcp HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                "Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n") if body else (
                f"GET /health HTTP/1.1\r\nHost: {self.host}\r\n")
        trickle = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "pad": "' + b"x" * 1000 if body else (
            b"X-Slow: " + b"y" * 1000)
        try:
            sock = socket.create_connection((self.host, self.port), timeout=5)
        except OSError:
            with self._lock:
                self.cut_off += 1
            return
        with self._lock:
            self.connected += 1
        try:
            sock.sendall(head.encode())
            deadline = time.monotonic() + self.hold
            for sent, byte in enumerate(trickle[: int(self.hold / self.interval) + 1]):  # at most hold/interval
                if self._stop.is_set() or time.monotonic() >= deadline:
                    break
                sock.sendall(bytes([byte]))
                if sent == 0:
                    with self._lock:
                        self.trickling += 1
                        self._lock.notify_all()
                self._stop.wait(self.interval)
        except OSError:
            with self._lock:
                self.cut_off += 1
                self._lock.notify_all()
        finally:
            sock.close()

    def wait_trickling(self, timeout: float = 10.0) -> bool:
        """Wait (bounded) until every client is trickling or was cut off; True when all are trickling."""
        with self._lock:
            self._lock.wait_for(lambda: self.trickling + self.cut_off >= self.count, timeout=timeout)
            return self.trickling == self.count

    def start(self) -> SlowClients:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=10)

    def __enter__(self) -> SlowClients:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def get_deal_body(deal_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "get_deal", "arguments": {"deal_id": deal_id}}}).encode()


def probe(host: str, port: int, what: str, *, key: str = "", deal_id: int = 0, timeout: float = 5.0) -> dict:
    """One request on a fresh connection: {"what", "ok", "status", "ms"}. ok means /health answered 200,
    or get_deal answered 200 with the deal (not an error result)."""
    started = time.monotonic()
    status: int | str
    ok = False
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        if what == "health":
            conn.request("GET", "/health", headers={"Host": host})
        else:
            conn.request("POST", "/mcp", get_deal_body(deal_id), {
                "Host": host, "Authorization": f"Bearer {key}", "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream"})
        response = conn.getresponse()
        payload = response.read()
        status = response.status
        if what == "health":
            ok = status == 200
        else:
            result = json.loads(payload).get("result") or {}
            ok = status == 200 and not result.get("isError", True)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        status = type(exc).__name__
    finally:
        conn.close()
    return {"what": what, "ok": ok, "status": status, "ms": (time.monotonic() - started) * 1000}


def probe_while(host: str, port: int, *, key: str, deal_id: int, seconds: float, timeout: float = 5.0,
                pause: float = 0.5, max_probes: int = 200) -> list[dict]:
    """/health and get_deal in turn for `seconds` (at most `max_probes` requests)."""
    results: list[dict] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end and len(results) < max_probes:
        for what in ("health", "get_deal"):
            results.append(probe(host, port, what, key=key, deal_id=deal_id, timeout=timeout))
        time.sleep(pause)
    return results


def summary(results: list[dict]) -> dict:
    answered = [r["ms"] for r in results if r["ok"]]
    return {"probes": len(results), "ok": len(answered),
            "p50": statistics.median(answered) if answered else float("nan"),
            "max": max(answered) if answered else float("nan")}
