"""Resilience of the MCP layer against a real failing backend (HTTP transport to a local server
that answers 503, hangs or refuses connections), with the breaker in real Redis when configured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection

from deals.models import Deal
from mcp_tools import resilience
from tests.backend_stub import BackendStub, Reply, closed_port_url, forward_to, wait_until
from tests.deals.fixtures import eager_jobs  # /health: jobs in-process, so no worker is expected

pytestmark = pytest.mark.django_db(transaction=True)

UPSTREAM = "Upstream service is temporarily unavailable. Please retry in a few seconds."
DEAL = {"id": 1, "title": "Stub deal"}
ROOT = Path(__file__).resolve().parents[2]
__all__ = ["eager_jobs"]


def fail_503() -> Reply:
    return Reply(503, {"code": "UPSTREAM_UNAVAILABLE", "message": "down", "details": {}})


# --- request ids ----------------------------------------------------------------------------------
def test_one_request_id_per_tool_call_reused_by_retries_and_never_in_output(mcp, settings):
    with BackendStub(fail_503(), fail_503(), Reply(200, DEAL)) as backend:
        settings.LEV_API_BASE_URL = backend.url
        payload = mcp.ok("get_deal", {"deal_id": 1})
        ids = {r["headers"]["X-Request-Id"] for r in backend.requests}
        assert backend.count() == 3 and len(ids) == 1
        request_id = ids.pop()
        assert uuid.UUID(request_id)
        assert request_id not in json.dumps(payload)
        mcp.ok("get_deal", {"deal_id": 1})
        assert backend.requests[-1]["headers"]["X-Request-Id"] != request_id  # a new call, a new id


def test_api_echoes_or_mints_request_ids(api):
    assert api.get("/api/v1/deals/", HTTP_X_REQUEST_ID="abc-123")["X-Request-Id"] == "abc-123"
    minted = api.get("/api/v1/deals/", HTTP_X_REQUEST_ID="not valid; DROP TABLE")["X-Request-Id"]
    assert uuid.UUID(minted)


def test_log_lines_of_one_tool_call_share_its_request_id(mcp, account, caplog):
    caplog.set_level("INFO")
    mcp.error("get_deal", {"deal_id": 987654})
    api_lines = [r for r in caplog.records if r.name == "lev.access" and "/api/v1/deals/987654/" in r.getMessage()]
    tool_lines = [r for r in caplog.records if r.name == "mcp_tools.calls" and "get_deal" in r.getMessage()]
    assert api_lines and tool_lines
    ids = {r.request_id for r in api_lines + tool_lines}
    assert len(ids) == 1 and uuid.UUID(ids.pop())


# --- local retries ----------------------------------------------------------------------------------
def test_transient_failures_are_retried_locally_then_succeed(mcp, settings):
    with BackendStub(fail_503(), Reply(502, None), Reply(200, DEAL)) as backend:
        settings.LEV_API_BASE_URL = backend.url
        assert mcp.ok("get_deal", {"deal_id": 1}) == {"deal": DEAL}
        assert backend.count() == 3


def test_404_is_never_retried(mcp, settings):
    with BackendStub(Reply(404, {"code": "NOT_FOUND", "message": "Deal not found: 1", "details": {}})) as backend:
        settings.LEV_API_BASE_URL = backend.url
        assert mcp.error("get_deal", {"deal_id": 1})["code"] == "NOT_FOUND"
        assert backend.count() == 1


def test_non_idempotent_write_is_not_retried(mcp, settings):
    with BackendStub(fail_503()) as backend:
        settings.LEV_API_BASE_URL = backend.url
        assert mcp.error("archive_deal", {"deal_id": 1})["code"] == "UPSTREAM_UNAVAILABLE"
        assert backend.count() == 1


def test_short_retry_after_429_is_retried_long_one_is_returned(mcp, settings):
    with BackendStub(Reply(429, None, {"Retry-After": "0"}), Reply(200, DEAL)) as backend:
        settings.LEV_API_BASE_URL = backend.url
        assert mcp.ok("get_deal", {"deal_id": 1}) == {"deal": DEAL}
        assert backend.count() == 2
    with BackendStub(Reply(429, {"code": "RATE_LIMITED", "message": "Rate limit exceeded: slow down", "details": {}},
                           {"Retry-After": "30"})) as backend:
        settings.LEV_API_BASE_URL = backend.url
        payload = mcp.error("get_deal", {"deal_id": 1})
        assert payload["code"] == "RATE_LIMITED" and payload["retryAfterMs"] == 30_000
        assert backend.count() == 1


def test_hanging_backend_times_out_into_upstream_unavailable(mcp, settings):
    settings.LEV_API_TIMEOUT_SECONDS = 0.2
    with BackendStub(Reply(200, DEAL, delay=5)) as backend:
        settings.LEV_API_BASE_URL = backend.url
        payload = mcp.error("get_deal", {"deal_id": 1})
        assert payload["code"] == "UPSTREAM_UNAVAILABLE" and payload["message"] == UPSTREAM
        assert backend.count() == 3


def test_the_retry_budget_counts_the_first_attempt(mcp, settings):
    # The first attempt runs before tenacity starts (LevClient.request): its time still comes out of
    # LEV_RETRY_BUDGET_MS. A first attempt longer than the whole budget is not repeated...
    settings.LEV_API_TIMEOUT_SECONDS = 0.3
    settings.LEV_RETRY_BUDGET_MS = 250
    with BackendStub(Reply(200, DEAL, delay=5)) as backend:
        settings.LEV_API_BASE_URL = backend.url
        assert mcp.error("get_deal", {"deal_id": 1})["code"] == "UPSTREAM_UNAVAILABLE"
        assert backend.count() == 1
    # ...and within the budget, a failed first attempt is followed by the retries (LEV_RETRY_TOTAL).
    settings.LEV_RETRY_BUDGET_MS = 10_000
    with BackendStub(fail_503()) as backend:
        settings.LEV_API_BASE_URL = backend.url
        assert mcp.error("get_deal", {"deal_id": 1})["code"] == "UPSTREAM_UNAVAILABLE"
        assert backend.count() == settings.LEV_RETRY_TOTAL + 1


def test_refused_connections_are_upstream_unavailable(mcp, settings):
    settings.LEV_API_BASE_URL = closed_port_url()
    payload = mcp.error("list_deals")
    assert payload["code"] == "UPSTREAM_UNAVAILABLE" and payload["isRetryable"] is True


def test_backoff_is_exponential_with_up_to_25_percent_jitter(settings):
    settings.LEV_RETRY_BACKOFF_BASE_MS = 200
    for attempt, base in ((1, 200), (2, 400), (3, 800)):
        delays = [resilience.backoff_ms(attempt) for _ in range(200)]
        assert base <= min(delays) and max(delays) <= base * 1.25
        assert max(delays) > min(delays)  # jittered, not fixed


# --- idempotent creates -----------------------------------------------------------------------------
def test_create_whose_response_was_lost_makes_exactly_one_deal(mcp, live_server, settings, account):
    with BackendStub(responder=forward_to(live_server.url, drop_first_response_of="POST")) as proxy:
        settings.LEV_API_BASE_URL = proxy.url
        created = mcp.ok("create_deal", {"title": "Lost response", "loan_amount": 1_000_000})["deal"]
    posts = [r for r in proxy.requests if r["method"] == "POST"]
    assert len(posts) == 2  # the first one's answer was dropped, the retry was replayed
    assert len({r["headers"]["Idempotency-Key"] for r in posts}) == 1
    assert Deal.objects.filter(title="Lost response").count() == 1
    assert created["id"] == Deal.objects.get(title="Lost response").id


def test_same_key_same_body_replays_and_other_body_conflicts(api, mcp, account):
    first = mcp.ok("create_deal", {"title": "Once", "idempotency_key": "k-1"})["deal"]
    again = mcp.ok("create_deal", {"title": "Once", "idempotency_key": "k-1"})["deal"]
    assert first == again and Deal.objects.filter(title="Once").count() == 1
    payload = mcp.error("create_deal", {"title": "Twice", "idempotency_key": "k-1"})
    assert payload["code"] == "CONFLICT" and payload["errorCategory"] == "business"
    assert payload["message"].startswith("Conflict: ")
    assert not Deal.objects.filter(title="Twice").exists()
    # The key space is the user's, whatever the door: REST with the same key and body replays.
    replay = api.post("/api/v1/deals/", {"title": "Once"}, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert replay.status_code == 201 and replay["Idempotent-Replayed"] == "true"
    assert replay.json()["id"] == first["id"]


def test_failed_create_stores_nothing_so_the_key_can_be_retried(api):
    bad = api.post("/api/v1/deals/", {"title": "T", "loan_amount": -1}, format="json", HTTP_IDEMPOTENCY_KEY="k-2")
    assert bad.status_code == 400
    good = api.post("/api/v1/deals/", {"title": "T", "loan_amount": 5_000_000}, format="json",
                    HTTP_IDEMPOTENCY_KEY="k-2")
    assert good.status_code == 201


# --- circuit breaker ---------------------------------------------------------------------------------
def open_breaker(mcp, backend) -> None:
    for _ in range(django_settings.LEV_BREAKER_FAIL_MAX):
        assert mcp.error("get_deal", {"deal_id": 1})["code"] == "UPSTREAM_UNAVAILABLE"


def test_breaker_opens_after_5_failures_and_fails_fast(mcp, live_server, settings):
    settings.LEV_RETRY_TOTAL = 0
    with BackendStub(fail_503()) as backend:
        settings.LEV_API_BASE_URL = backend.url
        open_breaker(mcp, backend)
        assert backend.count() == 5
        assert resilience.breaker_state() == "open"
        payload = mcp.error("list_deals")
        assert payload["code"] == "UPSTREAM_UNAVAILABLE" and payload["message"] == UPSTREAM
        assert 25_000 <= payload["retryAfterMs"] <= 30_000
        assert backend.count() == 5  # answered without calling the backend


def test_429_and_4xx_never_open_the_breaker(mcp, settings):
    settings.LEV_RETRY_TOTAL = 0
    replies = [Reply(429, None, {"Retry-After": "60"}), Reply(404, None), Reply(400, None), Reply(403, None)] * 3
    with BackendStub(*replies) as backend:
        settings.LEV_API_BASE_URL = backend.url
        for _ in range(len(replies)):
            assert mcp.error("get_deal", {"deal_id": 1})["code"] != "UPSTREAM_UNAVAILABLE"
        assert resilience.breaker_state() == "closed"
        assert resilience.get_breaker().fail_counter == 0


def test_health_reports_breaker_and_backend_and_polling_changes_nothing(client, mcp, settings, eager_jobs):
    settings.LEV_RETRY_TOTAL = 0
    body = client.get("/health").json()
    # /health has more keys (database, worker: tests/lev/test_health.py); these four are the breaker's.
    assert {k: body[k] for k in ("status", "version", "lev_api", "circuit_breaker")} == {
        "status": "ok", "version": "0.1.0", "lev_api": "reachable", "circuit_breaker": "closed"}
    with BackendStub(fail_503()) as backend:
        settings.LEV_API_BASE_URL = backend.url
        open_breaker(mcp, backend)
        for _ in range(20):
            body = client.get("/health").json()
            assert body["circuit_breaker"] == "open" and body["lev_api"] == "degraded"
        assert backend.count() == 5
        assert resilience.get_breaker().current_state == "open"


def test_breaker_half_opens_after_cooldown_and_closes_on_success(mcp, settings):
    settings.LEV_RETRY_TOTAL = 0
    settings.LEV_BREAKER_RESET_TIMEOUT_S = 1
    with BackendStub(*[fail_503()] * 5, Reply(200, DEAL)) as backend:
        settings.LEV_API_BASE_URL = backend.url
        open_breaker(mcp, backend)
        assert resilience.breaker_state() == "open"
        assert wait_until(lambda: resilience.breaker_state() == "half_open", timeout=5)
        assert mcp.ok("get_deal", {"deal_id": 1}) == {"deal": DEAL}  # the probe
        assert resilience.breaker_state() == "closed"


def test_breaker_is_shared_by_processes_through_redis(mcp, settings):
    if not django_settings.REDIS_URL:
        pytest.skip("needs REDIS_URL: the shared breaker lives in Redis")
    settings.LEV_RETRY_TOTAL = 0
    # Long enough for a second Python process to start on a busy machine while it is still open.
    settings.LEV_BREAKER_RESET_TIMEOUT_S = 8
    with BackendStub(*[fail_503()] * 5, Reply(200, DEAL)) as backend:
        settings.LEV_API_BASE_URL = backend.url
        open_breaker(mcp, backend)
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "lev.settings", "REDIS_URL": django_settings.REDIS_URL,
               "LEV_API_BASE_URL": backend.url, "LEV_BREAKER_RESET_TIMEOUT_S": "8", "LEV_RETRY_TOTAL": "0",
               "DATABASE_URL": os.environ.get("DATABASE_URL", ""), "LOG_LEVEL": "ERROR"}

        def other_process() -> dict:
            out = subprocess.run([sys.executable, "-m", "tests.mcp_tools.breaker_probe"], cwd=ROOT, env=env,
                                 capture_output=True, text=True, timeout=60, check=True)
            return json.loads(out.stdout.strip().splitlines()[-1])

        seen = other_process()
        assert seen["state_before"] == "open"
        assert seen["is_error"] and seen["payload"]["code"] == "UPSTREAM_UNAVAILABLE"
        assert 0 < seen["payload"]["retryAfterMs"] <= 8000
        assert backend.count() == 5  # the other process did not call the backend either

        # After the cooldown the other process makes the probe; its success closes it for everyone.
        assert wait_until(lambda: resilience.breaker_state() == "half_open", timeout=20)
        seen = other_process()
        assert seen["is_error"] is False and seen["state_after"] == "closed"
        assert resilience.breaker_state() == "closed"
        assert connection.vendor in ("postgresql", "sqlite")


def test_only_consecutive_failures_count(mcp, settings):
    settings.LEV_RETRY_TOTAL = 0
    replies = [fail_503()] * 4 + [Reply(200, DEAL)] + [fail_503()] * 4 + [Reply(200, DEAL)]
    with BackendStub(*replies) as backend:
        settings.LEV_API_BASE_URL = backend.url
        for reply in replies:
            is_error, _payload = mcp.call("get_deal", {"deal_id": 1})
            assert is_error is (reply.status == 503)
        assert resilience.breaker_state() == "closed"
        assert backend.count() == len(replies)
