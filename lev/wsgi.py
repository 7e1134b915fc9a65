"""The WSGI application: the site itself. Production runs it behind lev.asgi (gunicorn's ASGI worker);
`GUNICORN_WORKER_CLASS=sync` or `gthread` and `runserver` run it directly.

A request body the server cannot de-frame (a chunk-size that is not hex, a chunk without its CRLF, a
body cut off before its end) is the client's fault, and says nothing about the path it was sent to.
gunicorn's sync and gthread workers raise it from `wsgi.input.read()` as their own parser exceptions,
which Django does not know: the request became a 500, before authentication. So a chunked body is read
here, first, within the bound the views apply (`body_limit`): if its framing is broken the request is
answered 400 at once, in the shape of its path (`refusal`: on /mcp a JSON-RPC parse error, under /api/
and the JSON OAuth endpoints the API's VALIDATION_ERROR body, plain text elsewhere), and otherwise the
application reads the same bytes from memory, with their Content-Length. Any other failure to read a
body (a Content-Length body cut short) surfaces as Django's `UnreadablePostError`, which lev.errors and
lev.middleware answer 400.
(gunicorn's ASGI worker refuses bad framing in its parser, before lev.asgi sees the request;
lev.adapters.gunicorn answers that 400 with the same `refusal`.)

A registered endpoint (lev.endpoints: /mcp and its sub-paths, which mcp_tools registers) is served by a
Django handler that runs only the middleware the endpoint says it relies on (lev.handlers.EndpointHandler;
for /mcp, mcp_tools.urls.ENDPOINT_MIDDLEWARE: request id and access line, JSON errors, the security
headers, simple-history's user), not the pages' sessions, CSRF, authentication, messages, axes and
WhiteNoise (issue 24; docs/benchmarks.md). LEV_MCP_LEAN_MIDDLEWARE=false serves it through the full
stack like every other path.
"""

from __future__ import annotations

import io
import json
import os
import re
import tempfile

from django.core.wsgi import get_wsgi_application
from django.http import UnreadablePostError

try:  # the server's own framing errors, when gunicorn is the server
    from gunicorn.http.errors import ParseException as _ServerParseError
except ImportError:  # pragma: no cover - another WSGI server
    _ServerParseError = OSError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lev.settings")
django_application = get_wsgi_application()

from django.conf import settings  # noqa: E402  (after Django is set up)

from lev import endpoints, limits  # noqa: E402
from lev.errors import ValidationFailed  # noqa: E402
from lev.handlers import EndpointHandler  # noqa: E402
from lev.middleware import REQUEST_ID_HEADER, _is_api_path  # noqa: E402
from lev.request_id import new_request_id  # noqa: E402

UNREADABLE = "could not be read: its chunked framing is malformed or incomplete"


# The paths whose body may pass DATA_UPLOAD_MAX_MEMORY_SIZE: a history file's upload, through the API
# (deals.history.api) and through the admin's "Import history" page (deals.history.admin_views).
HISTORY_UPLOAD_PATHS = ("/api/v1/history-imports/", "/api/v1/history-imports",
                        "/admin/deals/deal/import-history/upload/")
# ...and a deal's document upload (deals.documents.api; the admin's deal page's upload): up to
# LEV_DOCUMENT_UPLOAD_MAX_BYTES and its form, on these paths alone.
DOCUMENT_UPLOAD_PATHS = re.compile(r"/api/v1/deals/[0-9]+/documents/?|/admin/deals/deal/[0-9]+/documents/upload/")


def body_limit(path: str) -> int | None:
    """The most body a request to `path` may carry: what its view would accept."""
    if (endpoint := endpoints.claimed_by(path)) is not None:
        return endpoint.body_limit()
    if path in HISTORY_UPLOAD_PATHS:
        return settings.LEV_HISTORY_UPLOAD_MAX_BYTES
    if DOCUMENT_UPLOAD_PATHS.fullmatch(path):
        return settings.LEV_DOCUMENT_UPLOAD_MAX_BYTES + limits.DOCUMENT_FORM_OVERHEAD_BYTES
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def refusal(path: str, status: int, problem: str, *, parse_error: bool = False) -> tuple[int, list, bytes]:
    """(status, headers, body) refusing a request's body before the application runs. `parse_error`:
    the body could not be read, which /mcp answers as a JSON-RPC parse error, as its view would."""
    if parse_error and (endpoint := endpoints.claimed_by(path)) is not None:
        body = endpoint.unreadable(problem)
        content_type = "application/json"
    elif _is_api_path(path):
        error = ValidationFailed({"body": [problem]})
        body = json.dumps(error.as_body(), separators=(",", ":")).encode()
        content_type = "application/json"
    else:
        body = f"Bad request: the request body {problem}\n".encode()
        content_type = "text/plain; charset=utf-8"
    return status, [("Content-Type", content_type), ("Content-Length", str(len(body))), ("Connection", "close"),
                    (REQUEST_ID_HEADER, new_request_id())], body


class _BodyInput:
    """`wsgi.input` whose read failures are `UnreadablePostError` (the client's malformed body)."""

    __slots__ = ("_stream",)

    def __init__(self, stream):
        self._stream = stream

    def _call(self, method: str, *args):
        try:
            return getattr(self._stream, method)(*args)
        except UnreadablePostError:
            raise
        except (OSError, _ServerParseError) as exc:
            raise UnreadablePostError(f"the request body {UNREADABLE}") from exc

    def read(self, *args):
        return self._call("read", *args)

    def readline(self, *args):
        return self._call("readline", *args)

    def readlines(self, *args):
        return self._call("readlines", *args)

    def __iter__(self):
        return iter(self.readline, b"")


def read_spooled(stream, most: int | None) -> tuple[io.BufferedIOBase, int]:
    """At most `most` bytes of `stream` (all of it when None), in memory up to DATA_UPLOAD_MAX_MEMORY_SIZE
    and on a temporary file past it (a document's upload: memory stays bounded), rewound; and its size."""
    # Handed to the application as its wsgi.input, which outlives this function.
    body = tempfile.SpooledTemporaryFile(max_size=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)  # noqa: SIM115
    size = 0
    while most is None or size < most:
        piece = stream.read(SPOOL_PIECE if most is None else min(SPOOL_PIECE, most - size))
        if not piece:
            break
        body.write(piece)
        size += len(piece)
    body.seek(0)
    return body, size


SPOOL_PIECE = 64 * 1024


def _guard_body(app):
    def guarded(environ, start_response):
        server_stream = environ.get("wsgi.input")
        if server_stream is None:
            return app(environ, start_response)
        stream = _BodyInput(server_stream)
        environ["wsgi.input"] = stream
        if (environ.get("wsgi.input_terminated") and "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
                and not isinstance(server_stream, io.BytesIO)):
            # Read the de-chunked body now (at most one byte past the limit: the view answers 413).
            path = environ.get("PATH_INFO", "")
            limit = body_limit(path)
            try:
                body, size = read_spooled(stream, None if limit is None else limit + 1)
            except UnreadablePostError:
                status, headers, answer = refusal(path, 400, UNREADABLE, parse_error=True)
                start_response(f"{status} Bad Request", headers)
                return [answer]
            environ["wsgi.input"] = body
            # De-chunked and whole: say how long it is, so Django reads it like any other body (it reads
            # a body without Content-Length as empty).
            del environ["HTTP_TRANSFER_ENCODING"]
            environ["CONTENT_LENGTH"] = str(size)
        return app(environ, start_response)

    return guarded


def _route_endpoints(site):
    """A registered endpoint's paths (lev.endpoints) to a handler running only the middleware it relies
    on, every other path to `site`."""
    lean = {e.path: EndpointHandler(e.middleware, dict(e.replacements)) for e in endpoints.all_endpoints()
            if e.middleware}

    def routed(environ, start_response):
        endpoint = endpoints.served_by(environ.get("PATH_INFO", ""))
        app = lean.get(endpoint.path, site) if endpoint is not None else site
        return app(environ, start_response)

    return routed


site_application = _route_endpoints(django_application) if settings.LEV_MCP_LEAN_MIDDLEWARE else django_application
application = _guard_body(site_application)
