"""The WSGI application (`gunicorn … lev.wsgi:application` with a sync or gthread worker, `runserver`).

A request body the server cannot de-frame (a bad chunk-size line, a chunk without its CRLF, a body cut
off before its end) is the client's fault. gunicorn's sync workers raise that from `wsgi.input.read()`
as their own parser exceptions, which Django does not know, so the request became a 500. The input is
wrapped so every such failure is Django's `UnreadablePostError` (an `OSError`): lev.errors answers it
400 `VALIDATION_ERROR` under /api/, the MCP view as a JSON-RPC parse error, lev.middleware as a plain
400 elsewhere. (The production command, gunicorn's ASGI worker with lev.asgi, refuses bad framing itself
with 400 before the application sees the request.)
"""

import os

from django.core.wsgi import get_wsgi_application
from django.http import UnreadablePostError

try:  # the server's own framing errors, when gunicorn is the server
    from gunicorn.http.errors import ParseException as _ServerParseError
except ImportError:  # pragma: no cover - another WSGI server
    _ServerParseError = OSError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lev.settings")

_UNREADABLE = "the request body could not be read: its chunked framing is malformed or incomplete"


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
            raise UnreadablePostError(_UNREADABLE) from exc

    def read(self, *args):
        return self._call("read", *args)

    def readline(self, *args):
        return self._call("readline", *args)

    def readlines(self, *args):
        return self._call("readlines", *args)

    def __iter__(self):
        return iter(self.readline, b"")


def _guard_body(app):
    def guarded(environ, start_response):
        stream = environ.get("wsgi.input")
        if stream is not None:
            environ["wsgi.input"] = _BodyInput(stream)
        return app(environ, start_response)

    return guarded


application = _guard_body(get_wsgi_application())
