"""lev.adapters.gunicorn relies on gunicorn's internals (its docstring lists them): it was read against one
gunicorn version, and this test fails loudly on any other, so an upgrade re-reads the adapter before it
ships. The internals themselves are checked to be where the adapter expects them, so a mismatch names
what moved. Its behaviour is tested against the real server in tests/deploy/test_chunked_bodies.py (the
header time bound, malformed chunked bodies in the path's shape) and tests/deploy/test_http_parser.py."""

from __future__ import annotations

import inspect
from importlib.metadata import version

from gunicorn.asgi.protocol import ASGIProtocol
from gunicorn.workers import gasgi

from lev.adapters import gunicorn as adapter


def test_the_installed_gunicorn_is_the_one_the_adapter_was_written_for():
    assert version("gunicorn") == adapter.WRITTEN_FOR, (
        f"gunicorn {version('gunicorn')} is installed; lev/adapters/gunicorn.py was written for "
        f"{adapter.WRITTEN_FOR}. Re-read the internals it names against the new gunicorn (does it now offer "
        "a setting or a hook for the first request's header time bound, or for the answer to malformed "
        "chunked framing?), run tests/deploy, then set WRITTEN_FOR.")


def test_the_internals_the_adapter_uses_are_where_it_expects_them():
    assert list(inspect.signature(ASGIProtocol._send_error_response).parameters) == [
        "self", "status", "message", "extra_headers"]
    assert "self._current_request = None" in inspect.getsource(ASGIProtocol.__init__)
    assert callable(ASGIProtocol._check_h1c_protocol_available)
    # The worker builds each connection with the module's name ASGIProtocol, which the adapter's worker repoints.
    assert "ASGIProtocol(self)" in inspect.getsource(gasgi.ASGIWorker)
    assert issubclass(adapter.HeaderBoundProtocol, ASGIProtocol)
