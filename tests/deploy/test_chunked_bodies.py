"""Malformed chunked request bodies are the client's error: 400, never a 500 (issue #19, item 2).

Against the real server over raw sockets: the production command (the Dockerfile's CMD: gunicorn's ASGI
worker, whose parser refuses bad framing before the application sees the request and whose protocol,
lev.asgi's, answers it in the site's shape), and the same file with GUNICORN_WORKER_CLASS=sync, where the
application itself reads the body (lev.wsgi). Both answer in the site's shapes: on /mcp a JSON-RPC parse
error, under /api/ the API's VALIDATION_ERROR body, elsewhere a plain 400. Also the request body bounds
of lev.asgi (413 before reading, 408 for a body that does not arrive in time). PostgreSQL only: the
server is a second process on the test database.
"""

from __future__ import annotations

import json
import socket
import time

import pytest

from tests.deploy.production_server import HOST, assert_no_500, member_key, raw_request, running

pytestmark = pytest.mark.slow

PATHS = ["/mcp", "/api/v1/deals/", "/oauth/token/", "/admin/login/", "/health"]
# name -> (chunked body, close our sending side after it)
MALFORMED = {
    "bad size line": (b"ZZ\r\nxx\r\n0\r\n\r\n", False),
    "truncated chunk": (b"10\r\nabc", True),
    "missing CRLF after the data": (b"3\r\nabcXX0\r\n\r\n", False),
}


@pytest.fixture
def key(transactional_db) -> str:
    return member_key("chunky")[1]


@pytest.fixture
def production(transactional_db, tmp_path):
    with running(tmp_path, LEV_REQUEST_BODY_TIMEOUT_SECONDS="3", LEV_REQUEST_HEADER_TIMEOUT_SECONDS="3",
                 LEV_MCP_MAX_BODY_BYTES="2000") as server:
        yield server


@pytest.fixture
def sync_server(transactional_db, tmp_path):
    with running(tmp_path, GUNICORN_WORKER_CLASS="sync", WEB_CONCURRENCY="1") as server:
        yield server


def chunked_post(path: str, body: bytes, key: str | None = None, content_type: str = "application/json") -> bytes:
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    return (f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: {content_type}\r\n"
            f"Accept: application/json, text/event-stream\r\n{auth}Transfer-Encoding: chunked\r\n"
            "Connection: close\r\n\r\n").encode() + body


@pytest.mark.parametrize("with_key", [False, True], ids=["no credential", "api key"])
def test_production_server_answers_malformed_chunked_bodies_400(production, key, with_key):
    for path in PATHS:
        for name, (body, half_close) in MALFORMED.items():
            status, headers, answer = raw_request(production.port, chunked_post(path, body, key if with_key else None),
                                                   half_close=half_close)
            # A truncated body whose client stopped sending: the server may answer 400 or just close.
            allowed = {400, None} if half_close else {400}
            assert status in allowed, (path, name, status, answer[:300])
            if status is not None:
                assert_site_shaped_400(path, status, headers, answer, (name, with_key))
    assert_no_500(production)


@pytest.mark.parametrize("with_key", [False, True], ids=["no credential", "api key"])
def test_wsgi_application_answers_malformed_chunked_bodies_400_in_the_sites_shapes(sync_server, key, with_key):
    """The same bodies where the application reads them (gunicorn's sync worker hands lev.wsgi the raw
    stream): 400 on every path, before authentication, each in its path's shape."""
    for path in PATHS:
        for name, (body, half_close) in MALFORMED.items():
            content_type = "application/x-www-form-urlencoded" if path.startswith(("/oauth", "/admin")) else (
                "application/json")
            status, headers, answer = raw_request(
                sync_server.port, chunked_post(path, body, key if with_key else None, content_type),
                half_close=half_close)
            assert_site_shaped_400(path, status, headers, answer, (name, with_key))
    assert_no_500(sync_server)


def assert_site_shaped_400(path: str, status, headers: dict, answer: bytes, case) -> None:
    where = (path, case, status, answer[:300])
    assert status == 400, where
    if path == "/mcp":  # a JSON-RPC parse error
        error = json.loads(answer)
        assert error["jsonrpc"] == "2.0" and error["id"] is None and error["error"]["code"] == -32700, where
    elif path.startswith(("/api/", "/oauth/token/")):  # the API's error body
        assert json.loads(answer)["code"] == "VALIDATION_ERROR", where
    else:
        assert headers["content-type"].startswith("text/plain"), where


def test_request_body_bounds_under_the_production_server(production, key):
    # The site's own refusals still hold behind lev.asgi: a Host not in ALLOWED_HOSTS, a foreign Origin.
    status, _headers, answer = raw_request(production.port, b"GET /api/v1/deals/ HTTP/1.1\r\nHost: evil.example\r\n"
                                                            b"Connection: close\r\n\r\n")
    assert status == 400 and json.loads(answer)["code"] == "VALIDATION_ERROR"
    message = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    status, _headers, answer = raw_request(production.port, (
        f"POST /mcp HTTP/1.1\r\nHost: {HOST}\r\nOrigin: https://evil.example\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: application/json\r\nAccept: application/json\r\nContent-Length: {len(message)}\r\n"
        "Connection: close\r\n\r\n").encode() + message)
    assert status == 403 and json.loads(answer)["code"] == "FORBIDDEN"

    # Over LEV_MCP_MAX_BODY_BYTES by Content-Length: 413 at once, the body never sent.
    head = (f"POST /mcp HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\nAuthorization: Bearer {key}\r\n"
            "Content-Length: 50000\r\n\r\n").encode()
    status, _headers, answer = raw_request(production.port, head)
    assert status == 413 and json.loads(answer)["code"] == "VALIDATION_ERROR"

    # Chunked past the limit: 413 as soon as it passes.
    piece = b"x" * 1000
    body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for _ in range(5)) + b"0\r\n\r\n"
    status, _headers, answer = raw_request(production.port, chunked_post("/mcp", body, key))
    assert status == 413 and json.loads(answer)["code"] == "VALIDATION_ERROR"

    # A well-formed chunked body within the limit is read and served.
    message = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).encode()
    body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(message), message)
    status, _headers, answer = raw_request(production.port, chunked_post("/mcp", body, key))
    assert status == 200 and json.loads(answer)["id"] == 3

    # The REST API reads a chunked body too (it is de-chunked whole before Django sees it).
    payload = json.dumps({"title": "Sent in chunks"}).encode()
    body = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (5, payload[:5], len(payload) - 5, payload[5:])
    status, _headers, answer = raw_request(production.port, chunked_post("/api/v1/deals/", body, key))
    assert status == 201 and json.loads(answer)["title"] == "Sent in chunks", answer

    # A body in two pieces half a second apart (read under the time bound, where one sent with its headers is
    # read without a timer: tests/deploy/test_body_guard.py) is served the same.
    message = json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}).encode()
    head = (f"POST /mcp HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Length: {len(message)}\r\nConnection: close\r\n\r\n").encode()
    whole = raw_request(production.port, head + message)
    status, _headers, answer = raw_request(production.port, head + message[:10], then=message[10:], pause=0.5)
    assert status == whole[0] == 200 and json.loads(answer) == json.loads(whole[2]) and json.loads(answer)["id"] == 4

    # A body that does not arrive within LEV_REQUEST_BODY_TIMEOUT_SECONDS (3 s here): 408.
    started = time.monotonic()
    head = (f"POST /api/v1/deals/ HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {key}\r\nContent-Length: 100\r\n\r\n{{").encode()
    status, _headers, answer = raw_request(production.port, head, timeout=20)
    assert status == 408 and json.loads(answer)["code"] == "VALIDATION_ERROR"
    assert 2.5 < time.monotonic() - started < 15
    assert_no_500(production)


def test_headers_trickled_past_the_header_timeout_close_the_connection(production):
    """gunicorn bounds only a kept-alive connection's later headers; lev.asgi.ASGIWorker bounds the
    first request's (LEV_REQUEST_HEADER_TIMEOUT_SECONDS, 3 s here)."""
    started = time.monotonic()
    with socket.create_connection((HOST, production.port), timeout=10) as sock:
        sock.sendall(f"GET /health HTTP/1.1\r\nHost: {HOST}\r\nX-Slow: ".encode())
        closed_after = None
        for _ in range(40):  # a byte every 0.25 s, for at most 10 s
            try:
                sock.sendall(b"y")
                sock.settimeout(0.25)
                if sock.recv(1024) == b"":
                    closed_after = time.monotonic() - started
                    break
            except TimeoutError:
                continue
            except OSError:  # reset: closed
                closed_after = time.monotonic() - started
                break
    assert closed_after is not None and 2.5 < closed_after < 8, closed_after
    # A request sent at once on a new connection is served as usual.
    status, _headers, _answer = raw_request(production.port, f"GET /health HTTP/1.1\r\nHost: {HOST}\r\n"
                                                              "Connection: close\r\n\r\n".encode())
    assert status == 200
