"""/mcp without the pages' middleware (issue 24) under the production server: two servers of the
production command, LEV_MCP_LEAN_MIDDLEWARE on (the default) and off (every request through
settings.MIDDLEWARE), answer every kind of /mcp request with the same status, the same headers (all of
them, but Date) and the same body. And the server keeps a /mcp client's connection alive. PostgreSQL only:
the servers are other processes on the test database."""

from __future__ import annotations

import http.client
import re

import pytest

from tests.deploy.production_server import HOST, assert_no_500, member_key, running
from tests.factories import DealFactory
from tests.mcp_tools.mcp_requests import cases, message

pytestmark = pytest.mark.slow

MAX_BODY = 5000
MINTED = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$")


def answer(conn: http.client.HTTPConnection, method: str, path: str, headers: dict[str, str], body: bytes):
    conn.request(method, path, body=body or None, headers=headers)
    response = conn.getresponse()
    content = response.read()
    kept = sorted((name.lower(), value) for name, value in response.getheaders() if name.lower() != "date")
    # django-csp writes the policy's directives in an order of its own per process: compare them as a set.
    kept = [(name, "; ".join(sorted(value.split("; "))) if name == "content-security-policy" else value)
            for name, value in kept]
    # Each server's own address (in WWW-Authenticate's resource_metadata) is not a difference.
    kept = [(name, value.replace(f":{conn.port}/", ":PORT/")) for name, value in kept]
    # A body refused before the application (lev.asgi.BodyGuard: 413) gets a request id of its own.
    kept = [(name, "(minted)" if name == "x-request-id" and MINTED.match(value) else value) for name, value in kept]
    return response.status, kept, content


def test_mcp_answers_are_the_full_stacks_under_the_production_server(transactional_db, tmp_path):
    account, key = member_key("lean")
    deal = DealFactory(account=account)
    env = {"LEV_MCP_MAX_BODY_BYTES": str(MAX_BODY), "LEV_RATE_LIMIT_READS": "100000/min", "WEB_CONCURRENCY": "1"}
    requests = cases(key, deal.pk, max_body=MAX_BODY)
    auth = requests[1][3]
    requests += [
        ("over https (a proxy's X-Forwarded-Proto): HSTS", "POST", "/mcp", {**auth, "X-Forwarded-Proto": "https"},
         message("tools/list")),
        ("a Host not allowed", "POST", "/mcp", {**auth, "Host": "evil.example"}, message("tools/list")),
    ]
    for name in ("lean", "full"):  # each server its own log and metrics directory
        (tmp_path / name).mkdir()
    with running(tmp_path / "lean", **env) as lean, \
            running(tmp_path / "full", LEV_MCP_LEAN_MIDDLEWARE="false", **env) as full:
        for index, (name, method, path, headers, body) in enumerate(requests):
            headers = {**headers, "X-Request-Id": f"diff-{index}", "Connection": "close"}
            got = answer(http.client.HTTPConnection(HOST, lean.port, timeout=30), method, path, headers, body)
            want = answer(http.client.HTTPConnection(HOST, full.port, timeout=30), method, path, headers, body)
            assert got == want, (name, sorted(set(got[1]) ^ set(want[1])), got[2] == want[2])
        statuses = {name: answer(http.client.HTTPConnection(HOST, lean.port, timeout=30), method, path,
                                 {**headers, "Connection": "close"}, body)[0]
                    for name, method, path, headers, body in requests}
        expected = {"tools/call ok": 200, "401 no credential": 401, "405 GET": 405, "406 Accept": 406,
                    "413 too large": 413, "403 another origin": 403, "a Host not allowed": 400}
        assert {name: statuses[name] for name in expected} == expected
        hsts = answer(http.client.HTTPConnection(HOST, lean.port, timeout=30), *requests[-2][1:])[1]
        assert any(name == "strict-transport-security" for name, _ in hsts)
        assert_no_500(lean)
        assert_no_500(full)


def test_the_production_server_keeps_mcp_connections_alive(transactional_db, tmp_path):
    account, key = member_key("alive")
    deal = DealFactory(account=account)
    call = cases(key, deal.pk, max_body=MAX_BODY)[5]
    with running(tmp_path, WEB_CONCURRENCY="1") as server:
        conn = http.client.HTTPConnection(HOST, server.port, timeout=30)
        ends = set()
        for _ in range(20):
            status, headers, _body = answer(conn, *call[1:])
            assert status == 200 and ("connection", "close") not in headers
            assert conn.sock is not None  # http.client drops the socket when the server says it closes
            ends.add(conn.sock.getsockname())
        assert len(ends) == 1  # one connection for every call
        conn.close()
