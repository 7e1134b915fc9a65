"""Failure semantics (ARCHITECTURE.md): only outages are retried and counted by the breaker; a 500
is a bug that reaches the agent as INTERNAL_ERROR; the API's own dependency outages are 503s; and
every /mcp request gets a JSON-RPC answer even while the database is down. Faults are real: a
scripted HTTP backend, a cut TCP proxy in front of PostgreSQL, a statement the database cancels."""

from __future__ import annotations

import logging
import socket
import sqlite3

import httpx
import pytest
import redis
from django.db import connection, connections

from lev.accounts.credential_cache import credential_cache
from lev.outages import is_dependency_outage
from mcp_tools import resilience
from tests.backend_stub import BackendStub, Reply, wait_until
from tests.factories import DealFactory

pytestmark = pytest.mark.django_db(transaction=True)

UPSTREAM = "Upstream service is temporarily unavailable. Please retry in a few seconds."


def rpc(base_url: str, api_key: str, method: str, params: dict | None = None) -> httpx.Response:
    return httpx.post(
        f"{base_url}/mcp",
        json={"jsonrpc": "2.0", "id": 7, "method": method, "params": params or {}},
        headers={"Authorization": f"Bearer {api_key}", "Accept": "application/json, text/event-stream"},
        timeout=30,
    )


def tool_payload(response: httpx.Response) -> tuple[bool, dict]:
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    return bool(result.get("isError")), result["structuredContent"]


# --- a 500 is a bug: never retried, never counted, INTERNAL_ERROR ------------------------------------
def test_backend_500_is_internal_error_never_retried_and_never_opens_the_breaker(mcp, settings):
    body = {"code": "INTERNAL_ERROR", "message": "boom in SELECT * FROM deals", "details": {}}
    calls = 2 * settings.LEV_BREAKER_FAIL_MAX
    with BackendStub(*[Reply(500, body)] * calls) as backend:
        settings.LEV_API_BASE_URL = backend.url
        for _ in range(calls):
            payload = mcp.error("get_deal", {"deal_id": 1})
            assert payload["code"] == "INTERNAL_ERROR" and payload["errorCategory"] == "internal"
            assert payload["isRetryable"] is False and "retryAfterMs" not in payload
            assert payload["message"].startswith("Internal error: ") and "SELECT" not in str(payload)
        assert backend.count() == calls  # each call sent once: no local retries
    assert resilience.breaker_state() == "closed"
    assert resilience.get_breaker().fail_counter == 0


def test_outage_statuses_are_still_retried_and_counted(mcp, settings):
    settings.LEV_RETRY_TOTAL = 0
    with BackendStub(*[Reply(504, None)] * settings.LEV_BREAKER_FAIL_MAX) as backend:
        settings.LEV_API_BASE_URL = backend.url
        for _ in range(settings.LEV_BREAKER_FAIL_MAX):
            assert mcp.error("get_deal", {"deal_id": 1})["code"] == "UPSTREAM_UNAVAILABLE"
    assert resilience.breaker_state() == "open"


def test_bug_in_the_api_is_internal_error_logged_with_traceback_and_request_id(mcp, account, monkeypatch, caplog,
                                                                               settings):
    def bug(**kwargs):
        return 1 / 0

    monkeypatch.setattr("deals.selectors.deal_list", bug)
    caplog.set_level("INFO")
    for _ in range(2 * settings.LEV_BREAKER_FAIL_MAX):
        payload = mcp.error("list_deals")
        assert payload["code"] == "INTERNAL_ERROR" and payload["isRetryable"] is False
        assert "ZeroDivision" not in str(payload)
    assert resilience.breaker_state() == "closed"
    api_errors = [r for r in caplog.records if "Unhandled error in API view" in r.getMessage()]
    assert api_errors and all(r.exc_info for r in api_errors)
    mcp_errors = [r for r in caplog.records if "a bug in the API, not an outage" in r.getMessage()]
    assert {r.request_id for r in api_errors} == {r.request_id for r in mcp_errors}
    assert "-" not in {r.request_id for r in api_errors}


# A bug in the MCP layer itself, outside any tool (issue #19: a validator's OverflowError once made /mcp
# answer HTTP 500 with the REST error body). Simulated, as above: there is no known bug to trigger.
def test_a_bug_validating_arguments_is_an_internal_error_tool_result(live_server, api_key, monkeypatch, caplog):
    def bug(arguments):
        return 1 / 0

    monkeypatch.setattr("mcp_tools.arguments.arguments_json", bug)
    caplog.set_level("INFO")
    is_error, payload = tool_payload(rpc(live_server.url, api_key, "tools/call",
                                         {"name": "get_deal", "arguments": {"deal_id": 1}}))
    assert is_error and payload["code"] == "INTERNAL_ERROR" and payload["isRetryable"] is False
    assert payload["message"].startswith("Internal error: ") and "ZeroDivision" not in str(payload)
    logged = [r for r in caplog.records if "validating the arguments of tool get_deal" in r.getMessage()]
    assert logged and logged[0].exc_info
    assert resilience.breaker_state() == "closed"


def test_a_bug_answering_any_method_is_a_json_rpc_internal_error(live_server, api_key, monkeypatch, caplog):
    def bug(self, granted):
        return 1 / 0

    monkeypatch.setattr("mcp_tools.server.LevMCP.tools_list_for", bug)
    caplog.set_level("INFO")
    response = rpc(live_server.url, api_key, "tools/list")
    assert response.status_code == 500 and response.headers["Content-Type"] == "application/json"
    assert response.json() == {"jsonrpc": "2.0", "id": 7, "error": {
        "code": -32603, "message": "Internal error: an unexpected error occurred."}}
    logged = [r for r in caplog.records if "Unhandled error in MCP endpoint" in r.getMessage()]
    assert logged and logged[0].exc_info


# --- which exceptions are outages: real ones -------------------------------------------------------
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_outage_classification_of_real_failures():
    conn = sqlite3.connect(":memory:")
    from django.db import OperationalError as DjangoOperationalError

    def django_sqlite_error(sql: str) -> Exception:
        try:
            conn.execute(sql)
        except sqlite3.OperationalError as exc:
            wrapped = DjangoOperationalError(str(exc))
            wrapped.__cause__ = exc
            return wrapped
        raise AssertionError("no error")

    assert is_dependency_outage(django_sqlite_error("SELECT * FROM no_such_table_here"))  # database removed
    assert not is_dependency_outage(django_sqlite_error("SELEC oops"))  # a bug
    try:
        redis.Redis(port=_closed_port(), socket_connect_timeout=1).ping()
    except redis.RedisError as exc:
        assert is_dependency_outage(exc)
    assert not is_dependency_outage(ZeroDivisionError())
    assert not is_dependency_outage(KeyError("x"))


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_postgres_cancellation_and_refusal_are_outages_but_bad_data_is_not():
    from django.db import DataError, OperationalError

    with pytest.raises(OperationalError) as cancelled, connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = 20")
        cursor.execute("SELECT pg_sleep(1)")
    assert is_dependency_outage(cancelled.value)
    connection.close()
    with pytest.raises(DataError) as bad, connection.cursor() as cursor:
        cursor.execute("SELECT 99999::smallint")
    assert not is_dependency_outage(bad.value)
    import psycopg

    with pytest.raises(psycopg.OperationalError) as refused:
        psycopg.connect(host="127.0.0.1", port=_closed_port(), user="postgres", connect_timeout=2)
    wrapped = OperationalError(str(refused.value))
    wrapped.__cause__ = refused.value
    assert is_dependency_outage(wrapped)


# --- the database down, for real ------------------------------------------------------------------
def test_database_outage_is_answered_in_json_rpc_opens_the_breaker_and_recovers(live_server, api_key, account,
                                                                                 db_proxy, settings, caplog):
    caplog.set_level("INFO")
    settings.LEV_BREAKER_RESET_TIMEOUT_S = 1
    DealFactory(account=account, title="Through the proxy")
    is_error, payload = tool_payload(rpc(live_server.url, api_key, "tools/call", {"name": "list_deals"}))
    assert not is_error and payload["total"] == 1

    db_proxy.cut()
    for _ in range(settings.LEV_BREAKER_FAIL_MAX):
        is_error, payload = tool_payload(rpc(live_server.url, api_key, "tools/call", {"name": "list_deals"}))
        assert is_error and payload["code"] == "UPSTREAM_UNAVAILABLE" and payload["message"] == UPSTREAM
        assert payload["isRetryable"] is True and payload["retryAfterMs"] > 0
    assert resilience.breaker_state() == "open"

    # Not a tool call: a JSON-RPC error with the same contract object, still HTTP 200. (The key checked
    # moments ago is in this process's credential cache, and tools/list needs nothing else from the
    # database: empty the cache so that this request checks the key in the database that is down.)
    credential_cache.clear()
    listed = rpc(live_server.url, api_key, "tools/list")
    assert listed.status_code == 200
    error = listed.json()["error"]
    assert error["message"] == UPSTREAM and error["data"]["code"] == "UPSTREAM_UNAVAILABLE"
    assert listed.json()["id"] == 7

    # REST: 503 with Retry-After, the one error body, no internals.
    rest = httpx.get(f"{live_server.url}/api/v1/deals/", headers={"Authorization": f"Bearer {api_key}"})
    assert rest.status_code == 503 and int(rest.headers["Retry-After"]) > 0
    assert rest.json() == {"code": "UPSTREAM_UNAVAILABLE", "message": UPSTREAM, "details": {}}

    # The outage is logged once per interval, not a line (or a traceback) per request.
    assert len([r for r in caplog.records if r.name == "lev.outages"]) <= 3
    assert not [r for r in caplog.records if r.name == "django.request"]
    assert not [r for r in caplog.records if r.exc_info and r.levelno >= logging.WARNING]

    db_proxy.restore()
    assert wait_until(lambda: resilience.breaker_state() == "half_open", timeout=10)
    is_error, payload = tool_payload(rpc(live_server.url, api_key, "tools/call", {"name": "list_deals"}))
    assert not is_error and payload["total"] == 1  # the probe succeeded
    assert resilience.breaker_state() == "closed"


def test_cancelled_statement_in_process_is_retried_then_upstream_unavailable(live_server, api_key, account,
                                                                             monkeypatch, settings):
    """The in-process transport's bound on a call: the database cancels a statement past
    statement_timeout (LEV_DB_STATEMENT_TIMEOUT_MS), the API answers 503, the MCP layer retries and
    then answers UPSTREAM_UNAVAILABLE, as it would for an HTTP timeout."""
    if connection.vendor != "postgresql":
        pytest.skip("statement_timeout is PostgreSQL's")
    db = connections.databases["default"]
    options = db.setdefault("OPTIONS", {})
    before = options.get("options")
    options["options"] = "-c statement_timeout=50"
    connections.close_all()
    calls = []

    def slow_list(**kwargs):
        calls.append(1)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(2)")

    monkeypatch.setattr("deals.selectors.deal_list", slow_list)
    try:
        is_error, payload = tool_payload(rpc(live_server.url, api_key, "tools/call", {"name": "list_deals"}))
    finally:
        options["options"] = before
        connections.close_all()
    assert is_error and payload["code"] == "UPSTREAM_UNAVAILABLE" and payload["isRetryable"] is True
    assert len(calls) == settings.LEV_RETRY_TOTAL + 1
