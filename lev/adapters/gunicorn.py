"""The gunicorn adapter: what production needs of gunicorn's ASGI worker that no setting or hook offers.

gunicorn's ASGI worker (`worker_class = "asgi"`) reads every connection on an event loop, bounds the body
waits by `timeout` and a kept-alive connection's next headers by `keepalive`, and its parser refuses
malformed chunked framing with a plain-text 400. Two of the site's guarantees need more, and gunicorn 27
has no setting or server hook for either (its hooks, pre_request/post_request, run only once a request's
headers are complete, and are not told the connection):

1. **A time bound on a connection's first request headers** (LEV_REQUEST_HEADER_TIMEOUT_SECONDS). gunicorn
   bounds none: a client that opens a connection and trickles its headers holds it as long as it likes
   (the ASGI worker does not enforce `worker_connections` either). `HeaderBoundProtocol` closes such a
   connection. It uses only asyncio's Protocol interface (connection_made, data_received,
   connection_lost) and the transport's close(): it watches the bytes for the end of the first request's
   headers itself (CRLF CRLF: both of gunicorn's parsers refuse a bare LF) instead of reading the parser's
   state. (A PROXY protocol v2 preamble, which begins with CRLF CRLF, ends the watch early: only a trusted
   proxy may send one, `proxy_allow_ips`, and this deployment does not turn it on.)
2. **Malformed chunked framing answered in the path's shape** (lev.wsgi.refusal: on /mcp a JSON-RPC parse
   error, under /api/ the API's VALIDATION_ERROR body): gunicorn's parser answers it before the
   application can, so the answer is the one thing here that overrides gunicorn's own code:
   `ASGIProtocol._send_error_response`, reading the request in progress from `_current_request` (its path).

Because it subclasses gunicorn's protocol, it must also ask gunicorn's C-parser check on ASGIProtocol itself
(`_check_h1c_protocol_available`): gunicorn reads the check's flags from that class, and a check run only
on a subclass (as each connection runs it) leaves them unset, so every connection got the pure-Python
parser (tests/deploy/test_http_parser.py). And the worker builds each connection with the name
`gunicorn.workers.gasgi.ASGIProtocol`, which `ASGIWorker.init_process` points at this protocol.

These are the private names of gunicorn this module uses: `_send_error_response`, `_current_request`,
`_check_h1c_protocol_available`. WRITTEN_FOR is the gunicorn version they were read from;
tests/deploy/test_gunicorn_adapter.py fails when the installed gunicorn is another, and the worker logs
an error at start (pyproject.toml's pin has no upper bound for this reason: the test, not the pin,
decides when an upgrade is safe).
"""

from __future__ import annotations

import asyncio
import contextlib
from importlib.metadata import version

from django.conf import settings
from gunicorn.asgi.protocol import ASGIProtocol
from gunicorn.workers import gasgi

from lev.wsgi import UNREADABLE, refusal

WRITTEN_FOR = "27.0.1"
INSTALLED = version("gunicorn")

END_OF_HEADERS = b"\r\n\r\n"


class HeaderBoundProtocol(ASGIProtocol):
    """gunicorn's HTTP/1 connection, closed when its first request's headers are not complete within
    LEV_REQUEST_HEADER_TIMEOUT_SECONDS of its opening; a body's malformed framing answered in the
    request path's shape."""

    lev_header_timer: asyncio.TimerHandle | None = None
    lev_head_tail = b""  # the last bytes seen before the end of the first headers (a blank line split)

    def connection_made(self, transport):
        super().connection_made(transport)
        seconds = settings.LEV_REQUEST_HEADER_TIMEOUT_SECONDS
        if seconds > 0:
            self.lev_header_timer = asyncio.get_running_loop().call_later(seconds, self.lev_headers_late)

    def data_received(self, data):
        if self.lev_header_timer is not None:
            seen = self.lev_head_tail + data
            if END_OF_HEADERS in seen:
                self.lev_stop_timer()
            else:
                self.lev_head_tail = seen[-(len(END_OF_HEADERS) - 1):]
        super().data_received(data)

    def connection_lost(self, exc):
        self.lev_stop_timer()
        super().connection_lost(exc)

    def lev_stop_timer(self) -> None:
        if self.lev_header_timer is not None:
            self.lev_header_timer.cancel()
            self.lev_header_timer = None

    def lev_headers_late(self) -> None:
        """The first request's headers did not end in time: close (gunicorn's connection_lost cleans up)."""
        self.lev_header_timer = None
        self.transport.close()

    def _send_error_response(self, status, message, extra_headers=()):
        """gunicorn's parser refuses malformed chunked framing with a plain-text 400 naming its complaint.
        When that happens in a request's body (its headers were parsed: gunicorn holds the request), the
        answer is the site's own 400 in the shape of the request's path, as the WSGI workers give it."""
        request = self._current_request
        if status != 400 or extra_headers or request is None:
            return super()._send_error_response(status, message, extra_headers)
        _status, headers, body = refusal(request.path or "", 400, UNREADABLE, parse_error=True)
        head = "HTTP/1.1 400 Bad Request\r\n" + "".join(f"{name}: {value}\r\n" for name, value in headers) + "\r\n"
        with contextlib.suppress(OSError, RuntimeError):  # the client may be gone already
            self.transport.write(head.encode("latin-1") + body)
        return None


# gunicorn's C-parser check sets its flags on the class it is called on and reads them from ASGIProtocol:
# asked once here, on ASGIProtocol, where gunicorn reads them (the subclass inherits them).
ASGIProtocol._check_h1c_protocol_available()


class ASGIWorker(gasgi.ASGIWorker):
    """gunicorn's ASGI worker (`asgi`), its connections HeaderBoundProtocol."""

    def init_process(self):
        if INSTALLED != WRITTEN_FOR:
            self.log.error("lev.adapters.gunicorn was written for gunicorn %s, this is %s: check it "
                           "(tests/deploy/test_gunicorn_adapter.py)", WRITTEN_FOR, INSTALLED)
        gasgi.ASGIProtocol = HeaderBoundProtocol  # the name the worker builds each connection with
        super().init_process()
