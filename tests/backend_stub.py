"""A real HTTP server standing in for the Lev backend, scripted to fail in chosen ways."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # JSON-encoded, or bytes sent as they are
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (a hanging backend)
    drop: bool = False  # close the connection without an answer


class BackendStub:
    """Answers each request with the next scripted Reply (the last one repeats), or with what
    `responder(request)` returns when one is given."""

    def __init__(self, *replies: Reply, responder=None):
        self.replies: deque[Reply] = deque(replies or [Reply()])
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                """Keep test output quiet."""

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                request = {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": raw}
                with stub._lock:
                    stub.requests.append(request)
                    if stub.responder is None:
                        reply = stub.replies.popleft() if len(stub.replies) > 1 else stub.replies[0]
                if stub.responder is not None:
                    reply = stub.responder(request)
                if reply.delay:
                    stub._stop.wait(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                # bytes are sent as they are (a proxy's HTML page: give its Content-Type in headers).
                raw = isinstance(reply.body, bytes)
                payload = reply.body if raw else b"" if reply.body is None else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    if "Content-Type" not in reply.headers:
                        self.send_header("Content-Type", "text/html" if raw else "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first (a timeout test): nothing to answer

            do_GET = do_POST = do_PATCH = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> BackendStub:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()

    def count(self) -> int:
        with self._lock:
            return len(self.requests)


def forward_to(target: str, *, drop_first_response_of: str | None = None):
    """A responder that relays each request to `target`; the first `drop_first_response_of`
    request (a method) is relayed but its answer is lost, as when a network drops a response."""
    import requests

    dropped = threading.Event()

    def respond(request: dict[str, Any]) -> Reply:
        headers = {k: v for k, v in request["headers"].items() if k.lower() not in ("host", "content-length")}
        answer = requests.request(request["method"], target + request["path"], headers=headers,
                                  data=request["body"], timeout=30)
        if request["method"] == drop_first_response_of and not dropped.is_set():
            dropped.set()
            return Reply(drop=True)
        relayed = {k: v for k, v in answer.headers.items() if k.lower() in ("retry-after", "x-request-id")}
        return Reply(answer.status_code, answer.json() if answer.content else None, relayed)

    return respond


def closed_port_url() -> str:
    """A URL where nothing listens: connections are refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
