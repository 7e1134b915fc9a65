"""Malformed chunked request bodies, fuzzed over raw sockets against the real server (issue #19, item 2).

`malformed_chunked_bodies()` builds a well-formed chunked body and breaks its framing in one of the ways
an HTTP/1.1 parser must refuse (RFC 9112 section 7.1): a chunk-size that is not hex, chunk data longer or
shorter than its size line says, a missing CRLF after the data, a body cut off before its last chunk (the
client then stops sending). Each is POSTed to /mcp, /api/v1/deals/, /oauth/token/, /admin/login/ and
/health, with and without an API key, against two servers started as the image starts them:

* the production command (Dockerfile CMD, gunicorn's ASGI worker: its parser refuses the framing and
  lev.asgi's protocol answers in the path's shape);
* the same file with GUNICORN_WORKER_CLASS=sync, where lev.wsgi reads the body.

Both answer on /mcp a JSON-RPC parse error, under /api/ and on /oauth/token/ the API's error body, plain
text elsewhere.

Every answer must be a 400 (or, on the production server, a closed connection for a body the client cut
off), never a 5xx, and the servers' logs must hold no traceback. PostgreSQL only (a second process on
the test database).
"""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.deploy.production_server import HOST, assert_no_500, member_key, raw_request, running
from tests.fuzz.conftest import budget
from tests.fuzz.test_mcp_fuzz import FUZZ

pytestmark = [pytest.mark.fuzz, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PATHS = ["/mcp", "/api/v1/deals/", "/oauth/token/", "/admin/login/", "/health"]
EXAMPLES = 150  # per server: x2 servers = 300 raw requests at LEV_FUZZ_SCALE=1
HEX = "0123456789abcdefABCDEF"


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


@st.composite
def malformed_chunked_bodies(draw: st.DrawFn) -> tuple[str, bytes, bool]:
    """(what is broken, the body, whether the client stops sending after it). Never well-formed."""
    before = b"".join(_chunk(d) for d in draw(st.lists(st.binary(min_size=1, max_size=40), max_size=3)))
    data = draw(st.binary(min_size=1, max_size=60))
    kind = draw(st.sampled_from(["size not hex", "data longer than its size", "no CRLF after the data",
                                 "cut off in a chunk", "cut off before the last chunk"]))
    if kind == "size not hex":
        # At least one character that is neither hex nor allowed around a size (no ';' extensions).
        junk = draw(st.text(alphabet=string.ascii_letters + string.digits + "-+ xX.,!", min_size=0, max_size=6))
        bad = draw(st.sampled_from("GHIJKLMNOPQRSTUVWXYZghijklmnopqrstuvwxyz-+.,!"))
        at = draw(st.integers(0, len(junk)))
        size = (junk[:at] + bad + junk[at:]).encode()
        return kind, before + size + b"\r\n" + data + b"\r\n0\r\n\r\n", False
    if kind == "data longer than its size":
        extra = draw(st.binary(min_size=3, max_size=20).filter(lambda b: not b.startswith(b"\r\n")))
        return kind, before + b"%x\r\n" % len(data) + data + extra + b"\r\n0\r\n\r\n", False
    if kind == "no CRLF after the data":
        tail = draw(st.sampled_from([b"XX", b"\n\n", b" \r\n", b"\r\r", b"ab"]))
        return kind, before + b"%x\r\n" % len(data) + data + tail + b"0\r\n\r\n", False
    if kind == "cut off in a chunk":
        missing = draw(st.integers(1, 40))
        return kind, before + b"%x\r\n" % (len(data) + missing) + data, True
    return kind, before + _chunk(data), True


def _request(path: str, body: bytes, key: str | None) -> bytes:
    form = path.startswith(("/oauth/", "/admin/"))
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    return (f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\n"
            f"Content-Type: {'application/x-www-form-urlencoded' if form else 'application/json'}\r\n"
            f"Accept: application/json, text/event-stream\r\n{auth}Transfer-Encoding: chunked\r\n"
            "Connection: close\r\n\r\n").encode() + body


def app_shaped(path: str, headers: dict, answer: bytes) -> bool:
    """lev.wsgi's refusal: a JSON-RPC parse error on /mcp, the API's VALIDATION_ERROR body under /api/ and
    on /oauth/token/, plain text elsewhere."""
    if path == "/mcp":
        return json.loads(answer).get("error", {}).get("code") == -32700
    if path.startswith(("/api/", "/oauth/token/")):
        return json.loads(answer).get("code") == "VALIDATION_ERROR"
    return headers.get("content-type", "").startswith("text/plain")


@pytest.fixture
def key() -> str:
    return member_key("chunk-fuzz")[1]


@pytest.mark.parametrize("worker", ["production (ASGI)", "sync"])
def test_malformed_chunked_bodies_get_400_on_every_path(key, tmp_path, worker):
    overrides = {"GUNICORN_WORKER_CLASS": "sync", "WEB_CONCURRENCY": "1"} if worker == "sync" else {}
    failures: list[str] = []
    sent = 0
    with running(tmp_path, **overrides) as server:
        @settings(max_examples=budget(EXAMPLES), **FUZZ)
        @given(case=malformed_chunked_bodies(), path=st.sampled_from(PATHS), with_key=st.booleans())
        def probe(case: tuple[str, bytes, bool], path: str, with_key: bool) -> None:
            nonlocal sent
            kind, body, cut_off = case
            status, headers, answer = raw_request(server.port, _request(path, body, key if with_key else None),
                                                  half_close=cut_off)
            sent += 1
            where = f"{worker} {path} {kind} key={with_key}: {status} {answer[:200]!r} for {body[:80]!r}"
            # The production server's parser refuses bad framing itself, answered in the path's shape by
            # lev.asgi (a client that cut its body off and left may be sent nothing); under the sync
            # worker lev.wsgi answers every one.
            refused = status == 400 if worker == "sync" else status in ({400, None} if cut_off else {400})
            if not refused or (status == 400 and not app_shaped(path, headers, answer)):
                failures.append(where)

        probe()
    assert sent >= budget(EXAMPLES) // 2
    assert not failures, f"{len(failures)} of {sent} malformed bodies: " + "\n".join(failures[:10])
    # No traceback, nothing answered 500 (production_server.assert_no_500: a client that cut its body
    # off and left was sent nothing, which gunicorn's ASGI worker logs as "500 0").
    assert_no_500(server)
