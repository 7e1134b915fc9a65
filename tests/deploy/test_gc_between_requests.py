"""lev.asgi.BufferedWSGI (issue 24; no longer a switch since issue 40): the cyclic garbage a request leaves is
collected right after its response is sent, on the request thread, before the process's next request; and
deploy/gunicorn.conf.py's post_fork raises the automatic young-generation threshold in each ASGI worker, so
collections rarely run mid-request. Driven through the ASGI application with a real event loop and the
real request thread; the request's garbage is a real reference cycle, watched through a weak reference."""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest

from lev.asgi import BufferedWSGI


class Held:
    """An object in a reference cycle (it refers to itself), as a request's objects are."""

    def __init__(self):
        self.me = self


@pytest.fixture
def gc_state():
    """Automatic collection off for the test (only the application's own collect runs), then restored."""
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    gc.collect()
    gc.disable()
    yield
    gc.set_threshold(*threshold)
    if enabled:
        gc.enable()


def serve(app: BufferedWSGI, path: str = "/mcp") -> tuple[int, bytes, list]:
    """One request through `app`; returns (status, body, the weak references to each request's cycle),
    after the request thread has run whatever the application queued behind the response."""
    cycles: list[weakref.ref] = []

    def wsgi(environ, start_response):
        cycles.append(weakref.ref(Held()))
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    app.app = wsgi
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    async def main():
        scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": b"",
                 "headers": [(b"host", b"localhost")], "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 5),
                 "scheme": "http", "http_version": "1.1", "root_path": ""}
        await app(scope, receive, send)
        # What was queued on the request thread after the response has run once this has.
        await asyncio.get_running_loop().run_in_executor(app.executor, lambda: None)

    asyncio.run(main())
    return sent[0]["status"], sent[1]["body"], cycles


def test_the_request_garbage_is_collected_after_the_response(gc_state):
    app = BufferedWSGI(None)
    status, body, cycles = serve(app)
    assert (status, body) == (200, b"ok")
    assert cycles[0]() is None  # collected, with automatic collection off: the application's own collect


def test_probes_are_not_held_up_by_a_collection(gc_state):
    """/health runs on the probe thread and queues nothing; the next site request collects its garbage."""
    app = BufferedWSGI(None)
    _status, _body, probe_cycles = serve(app, "/health")
    assert probe_cycles[0]() is not None
    serve(app, "/mcp")
    assert probe_cycles[0]() is None


def _gunicorn_conf(**environ: str) -> dict:
    """deploy/gunicorn.conf.py as gunicorn reads it (executed as a file), under `environ`."""
    import os
    import runpy
    from pathlib import Path
    from unittest import mock

    with mock.patch.dict(os.environ, environ):
        return runpy.run_path(str(Path(__file__).resolve().parents[2] / "deploy" / "gunicorn.conf.py"))


@pytest.fixture
def signal_handlers():
    """The hook installs a worker's stop handlers (test_gunicorn_stop_at_boot.py): this process's are put back."""
    import signal

    names = ("SIGTERM", "SIGINT", "SIGQUIT")
    kept = {name: signal.getsignal(getattr(signal, name)) for name in names}
    yield
    for name, handler in kept.items():
        signal.signal(getattr(signal, name), handler)


@pytest.mark.parametrize(("worker_class", "raised"), [("", True), ("asgi", True), ("sync", False)])
def test_post_fork_raises_the_young_threshold_in_the_asgi_workers_only(gc_state, signal_handlers, worker_class,
                                                                       raised):
    gc.set_threshold(700, 10, 10)
    conf = _gunicorn_conf(GUNICORN_WORKER_CLASS=worker_class)
    conf["post_fork"](None, None)
    assert gc.get_threshold() == ((conf["GC_YOUNG_THRESHOLD"] if raised else 700), 10, 10)
