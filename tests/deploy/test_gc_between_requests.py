"""LEV_GC_BETWEEN_REQUESTS (lev.asgi.BufferedWSGI, issue 24): the cyclic garbage a request leaves is
collected right after its response is sent, on the request thread, before the process's next request;
the automatic young-generation threshold is raised so collections rarely run mid-request. Off: Python's
own thresholds and timing. Driven through the ASGI application with a real event loop and the real
request thread; the request's garbage is a real reference cycle, watched through a weak reference."""

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


def test_on_the_request_garbage_is_collected_after_the_response(gc_state):
    app = BufferedWSGI(None, collect_between=True)
    assert gc.get_threshold()[0] == BufferedWSGI.GC_YOUNG_THRESHOLD
    status, body, cycles = serve(app)
    assert (status, body) == (200, b"ok")
    assert cycles[0]() is None  # collected, with automatic collection off: the application's own collect


def test_off_the_garbage_waits_for_pythons_own_collection(gc_state):
    gc.set_threshold(700, 10, 10)
    app = BufferedWSGI(None, collect_between=False)
    assert gc.get_threshold()[0] == 700  # Python's default left alone
    status, body, cycles = serve(app)
    assert (status, body) == (200, b"ok")
    assert cycles[0]() is not None  # still there: nothing collected it
    gc.collect()
    assert cycles[0]() is None


def test_probes_are_not_held_up_by_a_collection(gc_state):
    """/health runs on the probe thread and queues nothing; the next site request collects its garbage."""
    app = BufferedWSGI(None, collect_between=True)
    _status, _body, probe_cycles = serve(app, "/health")
    assert probe_cycles[0]() is not None
    serve(app, "/mcp")
    assert probe_cycles[0]() is None


def test_the_setting_is_on_by_default():
    from django.conf import settings

    assert settings.LEV_GC_BETWEEN_REQUESTS is True
