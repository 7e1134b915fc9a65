"""What production serves: `gunicorn --config deploy/gunicorn.conf.py`, whose default worker is gunicorn's
ASGI worker running `application` below (reasons and numbers: deploy/gunicorn.conf.py, docs/benchmarks.md
"Slow clients").

gunicorn's ASGI worker reads every connection on an event loop, so a client trickling its headers or
body holds a socket and a coroutine, never the process; `ASGIWorker` (the bottom of this file) adds a
time bound on a connection's first request headers, which gunicorn lacks. The site itself stays the WSGI site of
lev.wsgi, run the way a sync worker ran it: one request at a time per process, on one thread that keeps
the process's database connection, and only once the request is complete. So:

* `BodyGuard` reads the body on the event loop, within two bounds: a `Content-Length` over the limit is
  refused at once with 413, nothing read; a chunked body is refused with 413 as soon as it passes the
  limit (LEV_MCP_MAX_BODY_BYTES on /mcp, DATA_UPLOAD_MAX_MEMORY_SIZE elsewhere: the bounds the views
  enforce); and the whole body must arrive within LEV_REQUEST_BODY_TIMEOUT_SECONDS of the headers,
  else 408. A client gone (or stalled past gunicorn's wait for the next piece) before its body ended
  gets 400 and never reaches Django. Malformed chunked framing never gets here: the worker's parser
  refuses it, and `_HeaderBoundProtocol` (below) answers that 400 in the path's shape.
* `BufferedWSGI` then runs the WSGI application on its thread with the whole body in memory (a
  de-chunked body with its `Content-Length`, so the REST API reads it too) and sends the
  response once it is complete: one hand-off between the loop and the thread each way. The site has no
  streaming responses (MCP answers JSON, never SSE; static files are small).

Why not Django's own ASGI handler or a2wsgi, measured with bench/bench_gunicorn.py in one exploratory run
(2 interleaved rounds of 4 s, 6 clients; docs/benchmarks.md "Slow clients and the ASGI worker"):
Django's ASGI handler hops between the loop and a thread for each signal and the middleware chain and
doubled the server CPU per request (REST 6.3 against 2.8 ms, MCP 7.3 against 3.8 ms); a2wsgi runs the
application while the body still streams in and hands every response message across threads one by one
(REST p99 4.4x the sync worker's). This bridge: REST 2.2, MCP 2.8 ms. a2wsgi's `build_environ`
(the WSGI environ from the ASGI scope, PEP 3333 encodings) is used as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import os
from concurrent.futures import ThreadPoolExecutor

from a2wsgi.wsgi import build_environ
from gunicorn.asgi import protocol as _gunicorn_protocol

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lev.settings")

from django.conf import settings

from lev.wsgi import UNREADABLE, body_limit, refusal
from lev.wsgi import application as wsgi_application


class BodyGuard:
    """Reads an HTTP request's body within a size and a time bound, then hands the application the
    whole body as one `http.request` message. Requests without a body pass straight through."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length, chunked = None, False
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                length = value.strip()
            elif name == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
        if not chunked and length in (None, b"", b"0"):
            return await self.app(scope, receive, send)

        path = scope.get("path", "")
        limit = body_limit(path)
        too_large = f"must be at most {limit} bytes"
        if limit is not None and not chunked and length.isdigit() and int(length) > limit:
            return await _answer(send, refusal(path, 413, too_large))

        chunks: list[bytes] = []
        size = 0
        seconds = settings.LEV_REQUEST_BODY_TIMEOUT_SECONDS
        # A body already whole in the server's receiver is read from memory, nothing awaited: no timer.
        bound = contextlib.nullcontext() if _body_buffered(receive) else asyncio.timeout(seconds)
        try:
            async with bound:
                while True:
                    message = await receive()
                    if message["type"] != "http.request":  # http.disconnect before the body's end
                        return await _answer(send, refusal(path, 400, UNREADABLE, parse_error=True))
                    piece = message.get("body", b"")
                    size += len(piece)
                    if limit is not None and size > limit:
                        return await _answer(send, refusal(path, 413, too_large))
                    chunks.append(piece)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            return await _answer(send, refusal(path, 408, f"must arrive within {seconds:g} seconds"))

        whole = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        handed = False

        async def replay():
            nonlocal handed
            if not handed:
                handed = True
                return whole
            return await receive()  # the connection's own events after that (http.disconnect)

        return await self.app(scope, replay, send)


def _body_buffered(receive) -> bool:
    """True when `receive` is gunicorn's body receiver and its parser has already framed the whole body
    (the body came with the headers, as a small request's does): every `receive()` then answers at once
    from memory, so there is nothing to wait for and nothing to bound in time. The timer `asyncio.timeout`
    would start costs more than its own few microseconds under uvloop: a cancelled timer's handle is
    closed on a loop iteration of its own, which runs just after the request was handed to the request
    thread and takes the GIL back from it (a GIL hand-off each way per request; docs/benchmarks.md, sixth
    round). Any other receiver, or a body still arriving, is read under the timer.
    tests/deploy/test_body_guard.py holds this to gunicorn's receiver (pinned >= 27, < 28)."""
    receiver = getattr(receive, "__self__", None)
    return (type(receiver) is _gunicorn_protocol.BodyReceiver and receiver._complete
            and not receiver._body_finished and not receiver._disconnected)


async def _answer(send, answer: tuple[int, list, bytes]) -> None:
    """A refusal (lev.wsgi.refusal: the shape of its path), then the connection closes: the rest of the
    body is never read."""
    status, headers, body = answer
    await send({"type": "http.response.start", "status": status,
                "headers": [(name.lower().encode("latin1"), value.encode("latin1")) for name, value in headers]})
    await send({"type": "http.response.body", "body": body})


class BufferedWSGI:
    """A WSGI application as an ASGI one: the request's body whole in memory (BodyGuard read it), the
    application run on this process's one request thread, its response sent once complete."""

    # Operators' probes: polled exactly when something hangs, so never queued behind the site's requests.
    PROBE_PATHS = frozenset({"/health", "/metrics"})
    # With LEV_GC_BETWEEN_REQUESTS: the automatic young-generation threshold (Python's default is 700
    # allocations), a safety net for a request that allocates a great deal; the collection after each
    # response does the usual work.
    GC_YOUNG_THRESHOLD = 50_000

    def __init__(self, app, *, threads: int = 1, collect_between: bool | None = None):
        self.app = app
        # settings.LEV_GC_BETWEEN_REQUESTS: collect each request's cyclic garbage after its response is
        # sent (`_collect`), on the request thread, before the next request of the process runs.
        self.collect_between = settings.LEV_GC_BETWEEN_REQUESTS if collect_between is None else collect_between
        if self.collect_between:
            _young, older, oldest = gc.get_threshold()
            gc.set_threshold(self.GC_YOUNG_THRESHOLD, older, oldest)
        # One thread, as one sync worker: requests of a process run one after another and share its
        # database connection (Django keeps one per thread).
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="lev-request")
        # ...except /health and /metrics, on a thread of their own (with its own database connection):
        # a request stuck on a dependency (a lock, a statement up to LEV_DB_STATEMENT_TIMEOUT_MS, a tool
        # call's retry backoff) holds the request thread, and a poller's kept-alive connection stays with
        # this process, so /health would wait behind it (tests/deploy/test_health_beside_a_stuck_request.py).
        self.probe_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lev-probe")

    def _run(self, environ: dict) -> tuple[str, list[tuple[str, str]], bytes]:
        started: dict = {}

        def start_response(status, headers, exc_info=None):
            started["status"], started["headers"] = status, headers
            return lambda chunk: None  # the legacy write() callable; nothing here uses it

        result = self.app(environ, start_response)
        try:
            body = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        return started["status"], started["headers"], body

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":  # no websockets; lifespan is off (deploy/gunicorn.conf.py)
            return
        message = await receive()
        body = message.get("body", b"")
        environ = build_environ(scope, io.BytesIO(body))
        environ["wsgi.input_terminated"] = True  # the stream ends where the body does
        if environ.pop("HTTP_TRANSFER_ENCODING", None) is not None:
            # De-chunked and whole: say how long it is, so Django reads it like any other body.
            environ["CONTENT_LENGTH"] = str(len(body))
        environ["wsgi.multithread"] = True  # the probe thread beside the request thread
        loop = asyncio.get_running_loop()
        executor = self.probe_executor if scope.get("path") in self.PROBE_PATHS else self.executor
        status, headers, body = await loop.run_in_executor(executor, self._run, environ)
        await send({"type": "http.response.start", "status": int(status.split(" ", 1)[0]),
                    "headers": [(name.lower().encode("latin1"), value.encode("latin1")) for name, value in headers]})
        await send({"type": "http.response.body", "body": body})
        if self.collect_between and executor is self.executor:
            # Queued on the request thread: the next request of this process runs after it. Not awaited:
            # the client has its answer, and this connection's next request waits its turn anyway.
            executor.submit(self._collect)

    @staticmethod
    def _collect() -> None:
        """The young generations: the request's garbage is all there (at most an automatic collection
        during the request moved part of it one generation up); the oldest generation is left to its
        own threshold, as before."""
        gc.collect(1)


application = BodyGuard(BufferedWSGI(wsgi_application))


# --- The worker: gunicorn's ASGI worker, with a time bound on a connection's first request headers ---
#
# gunicorn bounds the headers of a kept-alive connection's later requests (its keepalive timer, 5 s,
# runs until they are complete) but not the first request's: a client that opens a connection and
# trickles headers would hold it, and a socket, for as long as it likes (the ASGI worker does not
# enforce worker_connections either). This protocol closes a connection whose first request's headers
# are not complete within LEV_REQUEST_HEADER_TIMEOUT_SECONDS of its opening, and answers a body whose
# chunked framing the parser refuses in the site's own shape. It uses gunicorn's protocol methods
# (connection_made, _on_headers_complete, _send_error_response, _safe_write), its per-request state
# (_current_request, _body_receiver) and the worker's protocol name, checked by tests/deploy against
# the pinned gunicorn (>= 27, < 28).
from gunicorn.workers import gasgi  # noqa: E402


class _HeaderBoundProtocol(gasgi.ASGIProtocol):
    _lev_header_timer = None

    def connection_made(self, transport):
        super().connection_made(transport)
        seconds = settings.LEV_REQUEST_HEADER_TIMEOUT_SECONDS
        if seconds > 0:
            self._lev_header_timer = self.worker.loop.call_later(seconds, self._lev_headers_late)

    def _lev_cancel(self) -> None:
        if self._lev_header_timer is not None:
            self._lev_header_timer.cancel()
            self._lev_header_timer = None

    def _on_headers_complete(self):
        self._lev_cancel()
        return super()._on_headers_complete()

    def connection_lost(self, exc):
        self._lev_cancel()
        super().connection_lost(exc)

    def _lev_headers_late(self) -> None:
        self._lev_header_timer = None
        if not self._closed and self._current_request is None:
            self._close_transport()

    def _send_error_response(self, status, message, extra_headers=()):
        """gunicorn's parser refuses malformed chunked framing itself, with a plain-text 400 naming the
        parser's complaint. When that happens in a request's body (its headers were complete, its body
        was not), the answer is the site's own 400 in the shape of the request's path instead: on /mcp
        a JSON-RPC parse error, under /api/ the API's VALIDATION_ERROR body (lev.wsgi.refusal), the
        same answer the sync workers give."""
        receiver, request = self._body_receiver, self._current_request
        if status != 400 or extra_headers or request is None or receiver is None or receiver._complete:
            return super()._send_error_response(status, message, extra_headers)
        _status, headers, body = refusal(request.path or "", 400, UNREADABLE, parse_error=True)
        head = "HTTP/1.1 400 Bad Request\r\n" + "".join(f"{name}: {value}\r\n" for name, value in headers) + "\r\n"
        self._safe_write(head.encode("latin-1"))
        self._safe_write(body)
        return None


# gunicorn chooses between its C parser (gunicorn_h1c, with http_parser "auto") and its pure-Python one per
# connection, from flags its availability check sets on the class the check is called on, but it reads them
# from ASGIProtocol itself. Called on a subclass only (the check runs on `_HeaderBoundProtocol`, whose
# connections these are), ASGIProtocol's flags stay unset and every connection got the Python parser. Asked
# once on ASGIProtocol, the flags are where gunicorn reads them and the subclass inherits them.
# tests/deploy/test_http_parser.py.
_gunicorn_protocol.ASGIProtocol._check_h1c_protocol_available()


class ASGIWorker(gasgi.ASGIWorker):
    """gunicorn's ASGI worker (`asgi`), its connections bounded in header time (`_HeaderBoundProtocol`)."""

    def init_process(self):
        gasgi.ASGIProtocol = _HeaderBoundProtocol  # the name the worker builds each connection with
        super().init_process()
