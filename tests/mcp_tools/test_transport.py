"""/mcp as a protocol endpoint, the way real MCP clients see it: methods, Origin, JSON-RPC errors,
protocol versions and chunked bodies (issue #9, section 4)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from django.db import connection
from django.test import Client

from tests.faults import free_port
from tests.mcp_helpers import McpCaller

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT_PARAMS = {"capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}

pytestmark = pytest.mark.django_db


@pytest.fixture
def post(api_key):
    """POST a raw body to /mcp through the whole Django stack (middleware, DRF, the view)."""
    client = Client()

    def send(body: str | bytes | dict, **headers: str):
        data = json.dumps(body) if isinstance(body, dict) else body
        all_headers = {**PROTOCOL_HEADERS, "Authorization": f"Bearer {api_key}", **headers}
        # Content-Type goes in the headers too: the test client drops `content_type` for an empty body.
        return client.generic("POST", "/mcp", data, content_type=all_headers["Content-Type"],
                              headers=all_headers)

    return send


def rpc_error(response) -> dict:
    body = json.loads(response.content)
    assert body["jsonrpc"] == "2.0" and "result" not in body, body
    return body


# --- 1. Methods other than POST: 405 whatever the Accept header -----------------------------------

@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "PATCH", "OPTIONS"])
@pytest.mark.parametrize("accept", ["text/event-stream", "application/json", "text/html", "*/*", None])
def test_every_method_but_post_is_405_for_every_accept(api_key, method, accept):
    headers = {"Authorization": f"Bearer {api_key}"} | ({"Accept": accept} if accept else {})
    response = Client().generic(method, "/mcp", headers=headers)
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["code"] == "METHOD_NOT_ALLOWED" and body["message"].startswith("Method not allowed: ")


def test_get_event_stream_is_405_over_http_without_a_key(live_server):
    # What mcp-remote and the TypeScript SDK send after initialize to open the optional stream.
    response = httpx.get(f"{live_server.url}/mcp", headers={"Accept": "text/event-stream"})
    assert response.status_code == 405 and response.headers["Allow"] == "POST"
    assert response.json()["code"] == "METHOD_NOT_ALLOWED"


# --- 2. Origin: the server's own origin is served, foreign ones are not ---------------------------

@pytest.mark.parametrize("origin", ["http://testserver", "http://TestServer:80"])
def test_same_origin_is_served(post, origin):
    response = post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, Origin=origin)
    assert response.status_code == 200 and response.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_same_origin_is_served_on_a_real_host_and_port(live_server, api_key):
    parts = urlsplit(live_server.url)
    response = httpx.post(f"{live_server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                          headers={**PROTOCOL_HEADERS, "Authorization": f"Bearer {api_key}",
                                   "Origin": f"{parts.scheme}://{parts.netloc}"})
    assert response.status_code == 200 and response.json()["result"]["tools"]


@pytest.mark.parametrize("origin", ["https://testserver", "http://testserver:8080", "http://evil.example",
                                    "null", "not an origin"])
def test_foreign_origin_is_403_naming_the_setting(post, origin):
    response = post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, Origin=origin)
    assert response.status_code == 403
    body = response.json()
    assert body["code"] == "FORBIDDEN" and body["message"].startswith("Forbidden: ")
    assert "LEV_MCP_ALLOWED_ORIGINS" in body["message"]


# --- 3. JSON-RPC errors are the project's: right code, the request's id, a plain message ----------

GOOD_ID = 41

@pytest.mark.parametrize(
    ("body", "status", "code", "request_id"),
    [
        (b"this is not json", 400, -32700, None),
        (b"", 400, -32700, None),
        (b"   ", 400, -32700, None),
        (b'{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"get_deal","arguments":'
         b'{"deal_id":NaN}}}', 400, -32700, None),
        (b'{"jsonrpc":"2.0","id":41,"method":"ping","params":{"x":-Infinity}}', 400, -32700, None),
        (b'{"jsonrpc":"2.0","id":41,"method":"ping","params":{"x":"\xff"}}', 400, -32700, None),
        (b"[" * 3000 + b"]" * 3000, 400, -32700, None),
        (b'[{"jsonrpc":"2.0","id":41,"method":"ping"}]', 400, -32600, None),
        (b"[]", 400, -32600, None),
        (b'"ping"', 400, -32600, None),
        (b"41", 400, -32600, None),
        (b"null", 400, -32600, None),
        (b'{"id":41,"method":"ping"}', 400, -32600, GOOD_ID),
        (b'{"jsonrpc":"1.0","id":41,"method":"ping"}', 400, -32600, GOOD_ID),
        (b'{"jsonrpc":"2.0","id":41}', 400, -32600, GOOD_ID),
        (b'{"jsonrpc":"2.0","id":41,"method":7}', 400, -32600, GOOD_ID),
        (b'{"jsonrpc":"2.0","id":41,"method":"ping","params":"x"}', 400, -32600, GOOD_ID),
        (b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', 400, -32600, None),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', 400, -32600, None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', 400, -32600, None),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', 400, -32600, None),
        (b'{"jsonrpc":"2.0","id":41,"method":"no/such/method"}', 200, -32601, GOOD_ID),
        (b'{"jsonrpc":"2.0","id":"abc","method":"tasks/list"}', 200, -32601, "abc"),
        # An empty method name is a method this server lacks (the protocol fuzzer's well-formed request).
        (b'{"jsonrpc":"2.0","id":"\\ud83d\\ude00x","method":"","params":{}}', 200, -32601, "\U0001f600x"),
        (b'{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":3}}', 200, -32602, GOOD_ID),
        (b'{"jsonrpc":"2.0","id":41,"method":"tools/call"}', 200, -32602, GOOD_ID),
        (b'{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"get_deal","arguments":[1]}}',
         200, -32602, GOOD_ID),
        (b'{"jsonrpc":"2.0","id":41,"method":"tools/call","params":[1]}', 200, -32602, GOOD_ID),
        (b'{"jsonrpc":"2.0","id":41,"method":"initialize","params":{}}', 200, -32602, GOOD_ID),
        (b'{"jsonrpc":"2.0","id":"x-1","method":"resources/read","params":{"uri":7}}', 200, -32602, "x-1"),
    ],
)
def test_jsonrpc_errors(post, body, status, code, request_id):
    response = post(body)
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    answer = rpc_error(response)
    assert answer["error"]["code"] == code, answer
    assert answer["id"] == request_id
    message = answer["error"]["message"]
    for leak in ("input_value", "pydantic", "errors.pydantic.dev", "Traceback", "type="):
        assert leak not in message
    assert len(message) < 200 and "\n" not in message


# Errors of methods the SDK answers (issue #19, item 8: resources/read errors carried code 0, the
# SDK's answer to any exception, with the exception's text).
@pytest.mark.parametrize("uri", ["lev://deals/1", "file:///etc/passwd", "https://example.com/" + "x" * 500])
def test_reading_a_resource_that_does_not_exist_is_resource_not_found(post, uri):
    response = post({"jsonrpc": "2.0", "id": "r-1", "method": "resources/read", "params": {"uri": uri}})
    assert response.status_code == 200
    assert rpc_error(response) == {"jsonrpc": "2.0", "id": "r-1", "error": {
        "code": -32002, "message": "Resource not found", "data": {"uri": uri[:200]}}}


def test_getting_a_prompt_that_does_not_exist_is_invalid_params(post):
    response = post({"jsonrpc": "2.0", "id": 9, "method": "prompts/get", "params": {"name": "nope"}})
    assert response.status_code == 200
    error = rpc_error(response)["error"]
    assert error["code"] == -32602 and error["message"].startswith("Invalid params: ")
    assert error["data"] == {"name": "nope"}


@pytest.mark.parametrize(("method", "params"), [("resources/read", {"uri": "lev://x"}), ("resources/list", {}),
                                                ("prompts/list", {}), ("prompts/get", {"name": "nope"})])
def test_a_bug_in_a_method_the_sdk_answers_is_an_internal_error_not_code_0(post, monkeypatch, caplog, method, params):
    # Simulated (no known bug): the resource and prompt registries fail.
    def bug(*args, **kwargs):
        raise RuntimeError("secret internals")

    from mcp_tools import server

    # The SDK binds its handlers to the server's methods when the server is made: a server made with them
    # failing answers these methods.
    for method_name in ("list_resources", "list_prompts", "get_prompt"):
        monkeypatch.setattr(server.LevMCP, method_name, bug)
    monkeypatch.setattr(server, "_server", server.LevMCP())
    caplog.set_level("ERROR")
    response = post({"jsonrpc": "2.0", "id": 3, "method": method, "params": params})
    assert rpc_error(response) == {"jsonrpc": "2.0", "id": 3, "error": {
        "code": -32603, "message": "Internal error: an unexpected error occurred."}}
    assert any(r.exc_info and f"answering {method}" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
         "Invalid params: protocolVersion is required"),
        ({"jsonrpc": "2.0", "id": 1, "method": "nope"}, "Method not found: nope"),
        ("{", "Parse error: the body is not valid JSON"),
        ("", "Parse error: the body is empty"),
    ],
)
def test_jsonrpc_error_messages_say_what_is_wrong(post, body, message):
    assert rpc_error(post(body))["error"]["message"] == message


@pytest.mark.parametrize(
    "body",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}},
        {"jsonrpc": "2.0", "id": 5, "result": {}},
    ],
)
def test_notifications_and_responses_are_accepted_with_202(post, body):
    response = post(body)
    assert response.status_code == 202 and response.content == b""


def test_form_body_is_415_json(post):
    response = post("a=b", **{"Content-Type": "application/x-www-form-urlencoded"})
    assert response.status_code == 415 and response.json()["code"] == "VALIDATION_ERROR"


def test_accept_without_json_is_406_json(post):
    response = post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, Accept="text/html")
    assert response.status_code == 406 and response.json()["code"] == "VALIDATION_ERROR"


# --- 4. Protocol versions --------------------------------------------------------------------------

@pytest.mark.parametrize(("requested", "answered"), [
    ("2025-11-25", "2025-11-25"),
    ("2025-06-18", "2025-06-18"),
    ("2025-03-26", "2025-03-26"),
    ("2026-07-28", "2025-11-25"),  # negotiation: the server answers a version it speaks
    ("1999-01-01", "2025-11-25"),
])
def test_initialize_negotiates_a_version(post, requested, answered):
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": requested, **INIT_PARAMS}}
    response = post(body)
    assert response.status_code == 200
    assert response.json()["result"]["protocolVersion"] == answered


@pytest.mark.parametrize("method", ["tools/list", "ping", "resources/list", "tools/call"])
def test_unsupported_protocol_version_header_is_400_listing_supported_versions(post, method):
    params = {"name": "list_deals", "arguments": {}} if method == "tools/call" else {}
    # 2026-07-28 is spoken since issue 21 (tests/mcp_tools/test_modern_era.py): an unknown date here.
    response = post({"jsonrpc": "2.0", "id": 9, "method": method, "params": params},
                    **{"MCP-Protocol-Version": "2099-01-01"})
    assert response.status_code == 400
    answer = rpc_error(response)
    assert answer["id"] == 9
    error = answer["error"]
    assert error["data"]["supported"][0] == "2025-11-25"
    assert {"2025-11-25", "2025-06-18", "2025-03-26"} <= set(error["data"]["supported"])
    assert error["data"]["requested"] == "2099-01-01"
    # A legacy client (no modern _meta) gets the legacy -32600, not 2026-07-28's -32022.
    assert error["code"] == -32600


def test_a_newer_client_is_served_2026_07_28_and_initialize_still_negotiates_2025_11_25(post):
    """Issue 21: a modern request is served as it is; a legacy client's initialize still gets
    2025-11-25 (initialize is not a 2026-07-28 method), and is served with that version."""
    modern = post({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                   "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                        "io.modelcontextprotocol/clientCapabilities": {}}}},
                  **{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
    assert modern.status_code == 200 and modern.json()["result"]["resultType"] == "complete"
    init = post({"jsonrpc": "2.0", "id": 2, "method": "initialize",
                 "params": {"protocolVersion": "2026-07-28", **INIT_PARAMS}})
    version = init.json()["result"]["protocolVersion"]
    assert version == "2025-11-25"
    listed = post({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, **{"MCP-Protocol-Version": version})
    assert listed.status_code == 200 and listed.json()["result"]["tools"]


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26"])
def test_supported_protocol_version_headers_are_served(post, version):
    response = post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, **{"MCP-Protocol-Version": version})
    assert response.status_code == 200 and response.json()["result"]["tools"]


@pytest.mark.django_db(transaction=True)
def test_official_python_client_still_works(live_server, api_key):
    tools = McpCaller(live_server.url, api_key).list_tools()
    assert "get_deal" in {tool.name for tool in tools}


# --- 5. Chunked request bodies ---------------------------------------------------------------------

def post_chunked(base_url: str, api_key: str, body: bytes, chunk: int = 100) -> tuple[int, dict, dict]:
    """A real HTTP/1.1 POST with Transfer-Encoding: chunked and no Content-Length.

    The whole request goes out in one write before the answer is read: a server that refuses the
    body (411) may close the connection without reading it, and a client still writing chunks
    then would fail on a broken pipe instead of reading that answer."""
    parts = urlsplit(base_url)
    headers = {**PROTOCOL_HEADERS, "Authorization": f"Bearer {api_key}", "Host": parts.netloc,
               "Transfer-Encoding": "chunked", "Connection": "close"}
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece)
                      for piece in (body[i:i + chunk] for i in range(0, len(body), chunk)))
    request = f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode() + chunks + b"0\r\n\r\n"
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(request)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, dict(response.getheaders()), json.loads(response.read())


TOOLS_LIST = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"pad": "x" * 500}}).encode()


@pytest.mark.django_db(transaction=True)
def test_chunked_body_on_a_server_that_cannot_read_it_is_411(live_server, api_key):
    # Django's runserver/live_server hands the view no de-chunked stream (no wsgi.input_terminated).
    status, _headers, body = post_chunked(live_server.url, api_key, TOOLS_LIST)
    assert status == 411
    assert body["code"] == "VALIDATION_ERROR" and "Content-Length" in body["message"]


@pytest.fixture
def gunicorn_url(transactional_db, tmp_path):
    """The site under gunicorn (deploy/gunicorn.conf.py) on the test database."""
    if connection.vendor != "postgresql":
        pytest.skip("a second process can share the test database only on PostgreSQL")
    port = free_port()
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "GUNICORN_BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "1",
        "LEV_MCP_MAX_BODY_BYTES": "2000", "DJANGO_SETTINGS_MODULE": "lev.settings",
    }
    log = tmp_path / "gunicorn.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "--config", "deploy/gunicorn.conf.py"],
                                cwd=ROOT, env=env, stdout=out, stderr=out)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/health", timeout=2)
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"gunicorn did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.2)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_chunked_body_is_read_under_gunicorn_within_the_size_limit(gunicorn_url, api_key):
    status, _headers, body = post_chunked(gunicorn_url, api_key, TOOLS_LIST)
    assert status == 200, body
    assert body["id"] == 7 and body["result"]["tools"]

    too_big = json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"pad": "x" * 3000}})
    status, _headers, body = post_chunked(gunicorn_url, api_key, too_big.encode())
    assert status == 413 and body["code"] == "VALIDATION_ERROR"

    # The same limit holds for a body sent with Content-Length.
    response = httpx.post(f"{gunicorn_url}/mcp", content=too_big,
                          headers={**PROTOCOL_HEADERS, "Authorization": f"Bearer {api_key}"})
    assert response.status_code == 413
