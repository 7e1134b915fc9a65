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


def test_only_the_adapter_imports_gunicorns_server_internals():
    """Product code outside lev/adapters imports nothing of gunicorn but its parser's public exception (lev.wsgi
    turns it into Django's UnreadablePostError under the WSGI workers); read from the code itself."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    allowed = {"gunicorn.http.errors"}
    found = []
    for package in ("lev", "deals", "lenders", "mcp_tools"):
        for path in (root / package).rglob("*.py"):
            if path.is_relative_to(root / "lev" / "adapters"):
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                found += [(str(path.relative_to(root)), name) for name in names
                          if name.split(".")[0] == "gunicorn" and name not in allowed]
    assert found == []
