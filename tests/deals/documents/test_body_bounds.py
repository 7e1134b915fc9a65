"""A document upload's body bounds where the production servers read it (lev.wsgi under gunicorn's sync
worker, lev.asgi under its ASGI worker): the upload path alone may carry LEV_DOCUMENT_UPLOAD_MAX_BYTES;
a chunked body (no length, or a length that lies) is stopped as soon as it passes the bound and answered
413 in the error contract; a large body under the bound is spooled to a temporary file, never whole in
memory, and reaches the application whole."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json

from lev.asgi import BODY_FILE, BODY_SIZE, BufferedWSGI
from tests.deploy.test_body_guard import _guard, _request

LIMIT = 100_000
FORM = 64 * 1024
UPLOAD = "/api/v1/deals/7/documents/"


class Endless(io.RawIOBase):
    """A chunked request body that never ends; counts what is read of it."""

    def __init__(self):
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        buffer[:] = b"x" * len(buffer)
        self.read_bytes += len(buffer)
        return len(buffer)


def test_wsgi_a_lying_chunked_body_is_stopped_at_the_bound_and_answered_413(settings, db):
    from lev.wsgi import application

    settings.LEV_DOCUMENT_UPLOAD_MAX_BYTES = LIMIT
    stream = Endless()
    answered = {}

    def start_response(status, headers, exc_info=None):
        answered["status"], answered["headers"] = status, dict(headers)

    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": UPLOAD, "SERVER_NAME": "testserver", "SERVER_PORT": "80",
               "wsgi.url_scheme": "http", "wsgi.input": stream, "wsgi.input_terminated": True,
               "HTTP_TRANSFER_ENCODING": "chunked", "CONTENT_TYPE": "multipart/form-data; boundary=b",
               "CONTENT_LENGTH": "10", "wsgi.errors": io.StringIO()}  # the length says 10: it lies
    body = json.loads(b"".join(application(environ, start_response)))
    assert answered["status"].startswith("413")
    assert body["code"] == "VALIDATION_ERROR" and body["message"].startswith("Validation failed: file is too large")
    assert stream.read_bytes <= LIMIT + FORM + 1  # read up to one byte past the bound, never on


def test_wsgi_reads_a_chunked_body_under_the_bound_from_a_file_not_memory(settings):
    from lev.wsgi import read_spooled

    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    spooled, size = read_spooled(io.BytesIO(b"y" * 50_000), 60_000)
    assert size == 50_000 and spooled.read() == b"y" * 50_000
    assert spooled.name is not None  # rolled over to a temporary file on disk (in memory it has no name)


def test_asgi_a_chunked_upload_past_the_bound_is_413_as_soon_as_it_passes(settings):
    settings.LEV_DOCUMENT_UPLOAD_MAX_BYTES = LIMIT
    piece = b"x" * 40_000
    received, sent = _guard([_request(piece, True)] * 5 + [_request(piece, False)], path=UPLOAD,
                            headers=[(b"transfer-encoding", b"chunked")])
    assert received == [] and sent[0]["status"] == 413
    assert json.loads(sent[1]["body"])["message"].startswith("Validation failed: body must be at most")
    # ...and a Content-Length past it is refused with nothing read; another path keeps the small bound.
    received, sent = _guard([], path=UPLOAD, headers=[(b"content-length", str(2 * 1024**3).encode())])
    assert received == [] and sent[0]["status"] == 413
    received, sent = _guard([], path="/api/v1/deals/7/", headers=[(b"content-length", b"3000000")])
    assert received == [] and sent[0]["status"] == 413


def test_asgi_a_large_upload_under_the_bound_is_spooled_to_a_file_and_reaches_the_application_whole(settings):
    settings.LEV_DOCUMENT_UPLOAD_MAX_BYTES = 10 * 1024 * 1024
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100_000
    piece = bytes(range(256)) * 1024  # 256 KiB
    messages = [_request(piece, True)] * 11 + [_request(piece, False)]
    received, sent = _guard(messages, path=UPLOAD, headers=[(b"transfer-encoding", b"chunked")])
    assert sent == [] and received[0]["body"] == b""
    spooled, size = received[0][BODY_FILE], received[0][BODY_SIZE]
    assert size == 12 * len(piece) and spooled.name is not None  # on disk, not in memory
    # BufferedWSGI hands the file to the WSGI application as its wsgi.input, with the de-chunked length.
    seen = {}

    def wsgi_app(environ, start_response):
        data = environ["wsgi.input"].read()
        seen["length"], seen["sha"] = environ["CONTENT_LENGTH"], hashlib.sha256(data).hexdigest()
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    spooled.seek(0)
    message = received[0]
    out = []

    async def receive():
        return message

    async def send(msg):
        out.append(msg)

    scope = {"type": "http", "method": "POST", "path": UPLOAD, "raw_path": UPLOAD.encode(), "query_string": b"",
             "headers": [(b"transfer-encoding", b"chunked")], "http_version": "1.1", "scheme": "http",
             "server": ("testserver", 80), "client": ("127.0.0.1", 1), "root_path": ""}
    asyncio.run(BufferedWSGI(wsgi_app)(scope, receive, send))
    assert out[0]["status"] == 200
    assert seen == {"length": str(12 * len(piece)), "sha": hashlib.sha256(piece * 12).hexdigest()}
    assert spooled.closed



def _served(wsgi_app, path: str = "/api/v1/documents/1/download/") -> list[dict]:
    out = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(msg):
        out.append(msg)

    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": [], "http_version": "1.1", "scheme": "http", "server": ("testserver", 80),
             "client": ("127.0.0.1", 1), "root_path": ""}
    asyncio.run(BufferedWSGI(wsgi_app)(scope, receive, send))
    return out


def test_asgi_a_streamed_download_is_sent_in_pieces_from_a_file_not_whole_from_memory():
    from django.http import FileResponse, HttpResponse

    data = bytes(range(256)) * (20 * 1024)  # 5 MiB

    def download(environ, start_response):
        response = FileResponse(io.BytesIO(data), content_type="application/pdf")
        start_response("200 OK", list(response.items()))
        return response

    out = _served(download)
    pieces = [m for m in out if m["type"] == "http.response.body"]
    assert out[0]["status"] == 200 and len(pieces) == 20
    assert all(len(m["body"]) <= 256 * 1024 for m in pieces)
    assert [m["more_body"] for m in pieces] == [True] * 19 + [False]
    assert b"".join(m["body"] for m in pieces) == data

    def page(environ, start_response):  # an ordinary answer: one message, as before
        start_response("200 OK", [("Content-Type", "application/json")])
        return HttpResponse(b'{"ok":true}')

    out = _served(page, "/api/v1/deals/")
    assert [m.get("body") for m in out[1:]] == [b'{"ok":true}'] and "more_body" not in out[1]
