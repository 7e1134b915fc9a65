"""lev.asgi.BodyGuard through the ASGI interface alone: it reads a body sent in one `http.request` message or
in several (`more_body`), hands the application the whole body as one message, refuses a body over the
path's limit with 413 (at once when Content-Length says so, as soon as it passes when chunked), a body that
does not end within LEV_REQUEST_BODY_TIMEOUT_SECONDS with 408, and a client gone before its body ended
(`http.disconnect`) with 400, each in the path's shape (lev.wsgi.refusal).

The receive callables are plain ASGI ones, fed from another task on a real event loop as a server feeds
its own; no server's internals. The production server's side of the same (a body in one piece, in two
pieces apart, one that never ends: 408; malformed framing) is in tests/deploy/test_chunked_bodies.py."""

from __future__ import annotations

import asyncio
import json

from lev.asgi import BodyGuard

BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()


def _guard(messages: list[dict], *, path: str = "/mcp", headers=None, gap: float = 0.0, then_wait: bool = False):
    """Run BodyGuard over a receive() that answers `messages` one by one, `gap` seconds apart (then, with
    `then_wait`, never again: a client that stopped sending); (what the application received, what was sent)."""
    received, sent = [], []
    queue: asyncio.Queue = asyncio.Queue()

    async def app(scope, receive, send):
        received.append(await receive())

    async def send(message):
        sent.append(message)

    async def feed():
        for message in messages:
            await asyncio.sleep(gap)
            queue.put_nowait(message)

    async def main():
        length = sum(len(m.get("body", b"")) for m in messages)
        scope = {"type": "http", "path": path,
                 "headers": headers if headers is not None else [(b"content-length", str(length).encode())]}
        feeding = asyncio.ensure_future(feed())
        await BodyGuard(app)(scope, queue.get, send)
        feeding.cancel()

    asyncio.run(main())
    return received, sent


def _request(body: bytes, more: bool) -> dict:
    return {"type": "http.request", "body": body, "more_body": more}


def test_a_body_in_one_message_is_handed_on_whole():
    received, sent = _guard([_request(BODY, False)])
    assert received == [_request(BODY, False)] and sent == []


def test_a_body_in_pieces_is_handed_on_whole_with_the_same_answer():
    received, sent = _guard([_request(BODY[:10], True), _request(BODY[10:20], True), _request(BODY[20:], False)],
                            gap=0.01)
    assert received == [_request(BODY, False)] and sent == []


def test_a_body_that_never_ends_is_refused_408_in_time(settings):
    settings.LEV_REQUEST_BODY_TIMEOUT_SECONDS = 0.2
    received, sent = _guard([_request(BODY[:10], True)], headers=[(b"content-length", b"100")])
    assert received == []
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 408
    assert b"must arrive within 0.2 seconds" in sent[1]["body"]


def test_a_client_gone_before_its_body_ended_is_answered_400_as_a_parse_error():
    received, sent = _guard([_request(BODY[:10], True), {"type": "http.disconnect"}],
                            headers=[(b"content-length", b"100")])
    assert received == [] and sent[0]["status"] == 400
    assert json.loads(sent[1]["body"])["error"]["code"] == -32700


def test_over_the_limit_is_413_before_reading_or_as_soon_as_a_chunked_body_passes_it(settings):
    settings.LEV_MCP_MAX_BODY_BYTES = 50
    received, sent = _guard([], headers=[(b"content-length", b"51")])  # nothing read: no message at all
    assert received == [] and sent[0]["status"] == 413
    piece = b"x" * 30
    received, sent = _guard([_request(piece, True), _request(piece, True), _request(piece, False)],
                            headers=[(b"transfer-encoding", b"chunked")])
    assert received == [] and sent[0]["status"] == 413
    assert json.loads(sent[1]["body"])["code"] == "VALIDATION_ERROR"


def test_a_request_without_a_body_passes_straight_through():
    received, sent = _guard([_request(b"", False)], headers=[])
    assert received == [_request(b"", False)] and sent == []
