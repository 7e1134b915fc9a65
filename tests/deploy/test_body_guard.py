"""lev.asgi.BodyGuard reads a body already whole in gunicorn's receiver without starting a timer, and
reads any other under LEV_REQUEST_BODY_TIMEOUT_SECONDS, with the same answer either way (issue 24: under
uvloop a cancelled timer costs the request a GIL hand-off each way; docs/benchmarks.md, sixth round).

The receivers are gunicorn's own BodyReceiver (the pinned gunicorn, >= 27, < 28), fed the way its parser
feeds it; the loop is asyncio's, counting the timers started on it. The production server's side of the
same (a body in one piece, in two pieces apart, and one that never ends: 408) is in
tests/deploy/test_chunked_bodies.py."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

from gunicorn.asgi.protocol import BodyReceiver

from lev.asgi import BodyGuard, _body_buffered

BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()


class _Connection:
    """What gunicorn's BodyReceiver asks of its connection (ASGIProtocol) while the application reads."""

    _closed = False
    cfg = SimpleNamespace(timeout=30)

    def _maybe_resume_reading(self) -> None:
        pass


class _CountingLoop(asyncio.SelectorEventLoop):
    """asyncio's loop, counting the timers started on it (asyncio.timeout starts one with call_at)."""

    timers = 0

    def call_at(self, when, callback, *args, context=None):
        self.timers += 1
        return super().call_at(when, callback, *args, context=context)


def _receiver(*pieces: bytes, complete: bool) -> BodyReceiver:
    receiver = BodyReceiver(SimpleNamespace(content_length=len(BODY), chunked=False), _Connection())
    for piece in pieces:
        receiver.feed(piece)
    if complete:
        receiver.set_complete()
    return receiver


def _guard(receiver: BodyReceiver, *, later: list[bytes] = (), complete_later: bool = False):
    """Run BodyGuard over `receiver` (the rest of the body, if any, fed from another task a few loop
    iterations later, as the parser would); (what the application received, what was sent, timers)."""
    received, sent = [], []

    async def app(scope, receive, send):
        received.append(await receive())

    async def send(message):
        sent.append(message)

    async def feed():
        for piece in later:
            for _ in range(3):
                await asyncio.sleep(0)  # no timer: a bare yield to the loop
            receiver.feed(piece)
        if complete_later:
            receiver.set_complete()

    async def main():
        scope = {"type": "http", "path": "/mcp", "headers": [(b"content-length", str(len(BODY)).encode())]}
        feeding = asyncio.ensure_future(feed())
        await BodyGuard(app)(scope, receiver.receive, send)
        await feeding

    loop = _CountingLoop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    return received, sent, loop.timers


def test_a_body_whole_in_the_receiver_is_read_without_a_timer():
    receiver = _receiver(BODY[:10], BODY[10:], complete=True)
    assert _body_buffered(receiver.receive)
    received, sent, timers = _guard(receiver)
    assert received == [{"type": "http.request", "body": BODY, "more_body": False}]
    assert sent == [] and timers == 0


def test_a_body_still_arriving_is_read_under_the_timer_with_the_same_answer():
    receiver = _receiver(BODY[:10], complete=False)
    assert not _body_buffered(receiver.receive)
    received, sent, timers = _guard(receiver, later=[BODY[10:]], complete_later=True)
    assert received == [{"type": "http.request", "body": BODY, "more_body": False}]
    assert sent == [] and timers >= 1


def test_a_body_that_never_ends_is_refused_408_in_time(settings):
    settings.LEV_REQUEST_BODY_TIMEOUT_SECONDS = 0.2
    receiver = _receiver(BODY[:10], complete=False)
    received, sent, _timers = _guard(receiver)
    assert received == []
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 408
    assert b"must arrive within 0.2 seconds" in sent[1]["body"]


def test_only_an_untouched_whole_body_of_gunicorns_receiver_skips_the_timer():
    gone = _receiver(BODY, complete=True)
    gone.signal_disconnect()
    handed = _receiver(BODY, complete=True)
    asyncio.run(handed.receive())  # the application already took it: a later receive() waits for a disconnect

    async def other_receive():
        return {"type": "http.request", "body": BODY, "more_body": False}

    assert not _body_buffered(gone.receive)
    assert not _body_buffered(handed.receive)
    assert not _body_buffered(other_receive)  # another server's receive: the timer, always
