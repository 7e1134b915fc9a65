"""What production serves: `gunicorn --config deploy/gunicorn.conf.py`, whose default worker is gunicorn's
ASGI worker (lev.adapters.gunicorn.ASGIWorker) running `application` below (reasons and numbers:
deploy/gunicorn.conf.py, docs/benchmarks.md "Slow clients").

gunicorn's ASGI worker reads every connection on an event loop, so a client trickling its headers or
body holds a socket and a coroutine, never the process. The site itself stays the WSGI site of
lev.wsgi, run the way a sync worker ran it: one request at a time per process, on one thread that keeps
the process's database connection, and only once the request is complete. This module speaks ASGI only
(the scope, `receive()`'s http.request and http.disconnect messages, `send()`), so any ASGI server runs it:

* `BodyGuard` reads the body on the event loop, within two bounds: a `Content-Length` over the limit is
  refused at once with 413, nothing read; a chunked body is refused with 413 as soon as it passes the
  limit (LEV_MCP_MAX_BODY_BYTES on /mcp, the upload bound on a history import's or a document's upload,
  DATA_UPLOAD_MAX_MEMORY_SIZE elsewhere: the bounds the views enforce; a body past
  DATA_UPLOAD_MAX_MEMORY_SIZE is spooled to a temporary file, so memory stays bounded); and the whole
  body must arrive within LEV_REQUEST_BODY_TIMEOUT_SECONDS of the headers,
  else 408. A client gone (or stalled past the server's own wait for the next piece) before its body
  ended gets 400 and never reaches Django. Malformed chunked framing never gets here: the server's
  parser refuses it (lev.adapters.gunicorn answers that 400 in the path's shape).
* `BufferedWSGI` then runs the WSGI application on its thread with the whole body in memory (a
  de-chunked body with its `Content-Length`, so the REST API reads it too) and sends the
  response once it is complete: one hand-off between the loop and the thread each way (a streamed response,
  a document's download, is written to a temporary file past 1 MiB and sent from there in pieces). The
  site has no other streaming responses (MCP answers JSON, never SSE; static files are small).

Why not Django's own ASGI handler or a2wsgi (docs/benchmarks.md "Slow clients and the ASGI worker"):
Django's ASGI handler hops between the loop and a thread for each signal and the middleware chain (about
twice the server CPU per request); a2wsgi runs the application while the body still streams in and hands
every response message across threads one by one (a worse p99). a2wsgi's `build_environ` (the WSGI
environ from the ASGI scope, PEP 3333 encodings) is used as it is.
"""

from __future__ import annotations

import asyncio
import gc
import io
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor

from a2wsgi.wsgi import build_environ

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lev.settings")

from django.conf import settings

from lev.wsgi import UNREADABLE, body_limit, refusal
from lev.wsgi import application as wsgi_application

# A body past DATA_UPLOAD_MAX_MEMORY_SIZE travels from BodyGuard to BufferedWSGI as its spooled file and size
# (keys of this module's own, in the one http.request message it hands over).
BODY_FILE = "lev.body_file"
BODY_SIZE = "lev.body_size"
# A streamed response past this is spooled to a temporary file, and sent in pieces of RESPONSE_PIECE_BYTES.
RESPONSE_SPOOL_BYTES = 1024 * 1024
RESPONSE_PIECE_BYTES = 256 * 1024


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

        # In memory up to DATA_UPLOAD_MAX_MEMORY_SIZE, on a temporary file past it (a document's upload,
        # up to LEV_DOCUMENT_UPLOAD_MAX_BYTES: memory stays bounded whatever the body's size).
        chunks = tempfile.SpooledTemporaryFile(max_size=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)  # noqa: SIM115
        size = 0
        seconds = settings.LEV_REQUEST_BODY_TIMEOUT_SECONDS
        try:
            async with asyncio.timeout(seconds):
                while True:
                    message = await receive()
                    if message["type"] != "http.request":  # http.disconnect before the body's end
                        return await _answer(send, refusal(path, 400, UNREADABLE, parse_error=True))
                    piece = message.get("body", b"")
                    size += len(piece)
                    if limit is not None and size > limit:
                        chunks.close()
                        return await _answer(send, refusal(path, 413, too_large))
                    chunks.write(piece)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            chunks.close()
            return await _answer(send, refusal(path, 408, f"must arrive within {seconds:g} seconds"))

        chunks.seek(0)
        if size <= settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
            whole = {"type": "http.request", "body": chunks.read(), "more_body": False}
            chunks.close()
        else:  # the body as the file it was spooled to (BufferedWSGI reads it from there)
            whole = {"type": "http.request", "body": b"", "more_body": False, BODY_FILE: chunks, BODY_SIZE: size}
        handed = False

        async def replay():
            nonlocal handed
            if not handed:
                handed = True
                return whole
            return await receive()  # the connection's own events after that (http.disconnect)

        return await self.app(scope, replay, send)


async def _answer(send, answer: tuple[int, list, bytes]) -> None:
    """A refusal (lev.wsgi.refusal: the shape of its path), then the connection closes: the rest of the
    body is never read."""
    status, headers, body = answer
    await send({"type": "http.response.start", "status": status,
                "headers": [(name.lower().encode("latin1"), value.encode("latin1")) for name, value in headers]})
    await send({"type": "http.response.body", "body": body})


class BufferedWSGI:
    """A WSGI application as an ASGI one: the request's body whole (BodyGuard read it; in memory, or its
    temporary file past DATA_UPLOAD_MAX_MEMORY_SIZE), the
    application run on this process's one request thread, its response sent once complete."""

    # Operators' probes: polled exactly when something hangs, so never queued behind the site's requests.
    PROBE_PATHS = frozenset({"/health", "/metrics"})

    def __init__(self, app, *, threads: int = 1):
        self.app = app
        # One thread, as one sync worker: requests of a process run one after another and share its
        # database connection (Django keeps one per thread).
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="lev-request")
        # ...except /health and /metrics, on a thread of their own (with its own database connection):
        # a request stuck on a dependency (a lock, a statement up to LEV_DB_STATEMENT_TIMEOUT_MS, a tool
        # call's retry backoff) holds the request thread, and a poller's kept-alive connection stays with
        # this process, so /health would wait behind it (tests/deploy/test_health_beside_a_stuck_request.py).
        self.probe_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lev-probe")

    def _run(self, environ: dict) -> tuple[str, list[tuple[str, str]], bytes | tempfile.SpooledTemporaryFile]:
        started: dict = {}

        def start_response(status, headers, exc_info=None):
            started["status"], started["headers"] = status, headers
            return lambda chunk: None  # the legacy write() callable; nothing here uses it

        result = self.app(environ, start_response)
        try:
            if getattr(result, "streaming", False):
                # A streamed response (a document's download from the file system): written to a
                # temporary file past RESPONSE_SPOOL_BYTES, then sent from there in pieces, so neither
                # memory nor this thread is held by the file's size or a slow client.
                body = tempfile.SpooledTemporaryFile(max_size=RESPONSE_SPOOL_BYTES)  # noqa: SIM115
                for piece in result:
                    body.write(piece)
                body.seek(0)
            else:
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
        spooled = message.get(BODY_FILE)  # a large body BodyGuard spooled to a file
        environ = build_environ(scope, spooled if spooled is not None else io.BytesIO(body))
        environ["wsgi.input_terminated"] = True  # the stream ends where the body does
        if environ.pop("HTTP_TRANSFER_ENCODING", None) is not None:
            # De-chunked and whole: say how long it is, so Django reads it like any other body.
            environ["CONTENT_LENGTH"] = str(message[BODY_SIZE] if spooled is not None else len(body))
        environ["wsgi.multithread"] = True  # the probe thread beside the request thread
        loop = asyncio.get_running_loop()
        executor = self.probe_executor if scope.get("path") in self.PROBE_PATHS else self.executor
        try:
            status, headers, body = await loop.run_in_executor(executor, self._run, environ)
        finally:
            if spooled is not None:
                spooled.close()
        await send({"type": "http.response.start", "status": int(status.split(" ", 1)[0]),
                    "headers": [(name.lower().encode("latin1"), value.encode("latin1")) for name, value in headers]})
        if isinstance(body, bytes):
            await send({"type": "http.response.body", "body": body})
        else:
            with body:
                piece = body.read(RESPONSE_PIECE_BYTES)
                while True:
                    following = body.read(RESPONSE_PIECE_BYTES) if piece else b""
                    await send({"type": "http.response.body", "body": piece, "more_body": bool(following)})
                    if not following:
                        break
                    piece = following
        if executor is self.executor:
            # The request's cyclic garbage (Django's and DRF's request, view, serializer and model objects
            # refer to each other, so reference counting frees none of them) collected now, off the client's
            # wait: queued on the request thread, so the next request of this process runs after it, and
            # not awaited. With the young-generation threshold raised (deploy/gunicorn.conf.py, post_fork),
            # collections then rarely run in the middle of a request.
            executor.submit(self.collect)

    @staticmethod
    def collect() -> None:
        """The young generations: the request's garbage is all there (at most an automatic collection
        during the request moved part of it one generation up); the oldest generation is left to its
        own threshold, as before."""
        gc.collect(1)


application = BodyGuard(BufferedWSGI(wsgi_application))
