"""Redis down for real (a redis-server of the test's own, killed with SIGKILL and started again):
reads and writes keep working, rate limits and the breaker fall back to per-process state and go
back to Redis when it returns, and the outage is logged once per interval, not per call."""

from __future__ import annotations

import logging

import pytest
import redis

from lev.redis_gate import redis_gate
from mcp_tools import resilience
from tests.backend_stub import BackendStub, Reply, wait_until
from tests.faults import RedisServer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def own_redis(settings, monkeypatch):
    server = RedisServer().start()
    settings.REDIS_URL = server.url
    settings.CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": server.url,
        "OPTIONS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5},
    }}
    # Retry Redis soon after a failure, so "back on Redis" shows within the test.
    monkeypatch.setattr(redis_gate, "retry_interval", 0.3)
    resilience.reset_breaker()
    try:
        yield server
    finally:
        server.stop()
        resilience.reset_breaker()


def test_reads_and_writes_keep_working_while_redis_is_down(own_redis, api, mcp, caplog):
    caplog.set_level(logging.INFO)
    assert api.get("/api/v1/deals/").status_code == 200
    own_redis.kill()
    resilience.reset_breaker()  # as in a worker that starts during the outage
    for i in range(10):
        assert api.get("/api/v1/deals/").status_code == 200
        assert api.post("/api/v1/deals/", {"title": f"Redis down {i}"}, format="json").status_code == 201
        assert mcp.ok("list_deals")["total"] == 2 * i + 1
        assert mcp.ok("create_deal", {"title": f"Via MCP {i}"})["deal"]["id"]
    outage_lines = [r for r in caplog.records if r.name == "lev.outages"]
    # One line per dependency per interval: a handful, not one (or a traceback) per call.
    assert 1 <= len(outage_lines) <= 6
    assert not [r for r in caplog.records if r.exc_info and r.levelno >= logging.WARNING]


def test_rate_limits_fall_back_to_per_process_counting_and_return_to_redis(own_redis, api, settings,
                                                                           frozen_window):
    settings.LEV_RATE_LIMIT_READS = "3/day"
    own_redis.kill()
    assert [api.get("/api/v1/deals/").status_code for _ in range(4)] == [200, 200, 200, 429]

    own_redis.start()  # an empty Redis on the same port: counting starts again there
    assert wait_until(lambda: api.get("/api/v1/deals/").status_code == 200, timeout=10)
    shared = redis.Redis.from_url(own_redis.url)
    assert any(b"throttle:user_read" in key for key in shared.keys("*"))
    statuses = [api.get("/api/v1/deals/").status_code for _ in range(3)]
    assert statuses[-1] == 429


def test_breaker_opens_per_process_while_redis_is_down_and_returns_to_shared_state(own_redis, mcp, settings):
    settings.LEV_RETRY_TOTAL = 0
    fail = Reply(503, {"code": "UPSTREAM_UNAVAILABLE", "message": "down", "details": {}})
    with BackendStub(*[fail] * settings.LEV_BREAKER_FAIL_MAX) as backend:
        settings.LEV_API_BASE_URL = backend.url
        own_redis.kill()
        for _ in range(settings.LEV_BREAKER_FAIL_MAX):
            assert mcp.error("get_deal", {"deal_id": 1})["code"] == "UPSTREAM_UNAVAILABLE"
        assert resilience.breaker_state() == "open"
        payload = mcp.error("get_deal", {"deal_id": 1})
        assert payload["code"] == "UPSTREAM_UNAVAILABLE" and payload["retryAfterMs"] > 1000
        assert backend.count() == settings.LEV_BREAKER_FAIL_MAX  # failed fast without calling it

    # Redis is back: the shared state (a fresh, closed breaker) is the one that counts again.
    own_redis.start()
    assert wait_until(lambda: resilience.breaker_state() == "closed", timeout=10)
    with BackendStub(Reply(200, {"id": 1, "title": "Back"})) as backend:
        settings.LEV_API_BASE_URL = backend.url
        assert mcp.ok("get_deal", {"deal_id": 1}) == {"deal": {"id": 1, "title": "Back"}}
    shared = redis.Redis.from_url(own_redis.url)
    assert shared.get(f"{settings.LEV_BREAKER_NAME}:pybreaker:fail_counter") == b"0"


def test_a_frozen_redis_costs_a_bounded_wait_then_is_skipped(own_redis, api):
    own_redis.freeze()
    try:
        statuses = [api.get("/api/v1/deals/").status_code for _ in range(5)]
    finally:
        own_redis.thaw()
    assert statuses == [200] * 5


def test_health_reports_redis_down_and_back_and_answers_while_it_is_frozen(own_redis, client, caplog):
    assert client.get("/health").json()["redis"] == "reachable"
    own_redis.kill()
    caplog.set_level(logging.INFO)
    for _ in range(10):  # polled while down: said once per interval, never a traceback per poll
        body = client.get("/health").json()
        assert body["redis"] == "unreachable" and body["status"] == "degraded"
    assert not [r for r in caplog.records if r.exc_info]
    assert len([r for r in caplog.records if r.name == "lev.outages"]) <= 3
    own_redis.start()
    assert wait_until(lambda: client.get("/health").json()["redis"] == "reachable", timeout=10)
    own_redis.freeze()  # SIGSTOP: connections are accepted, nothing answers
    try:
        body = client.get("/health").json()
    finally:
        own_redis.thaw()
    assert body["redis"] == "unreachable" and body["status"] == "degraded"


def test_the_account_says_where_limits_are_counted_while_redis_is_down_and_after(own_redis, api, mcp, settings,
                                                                                 frozen_window):
    """GET /api/v1/account/ and get_account keep answering with Redis down, and say truthfully that the
    limits are then this process's own counts (each process counts apart), then shared again."""
    settings.LEV_RATE_LIMIT_READS = "50/day"

    def limits() -> dict:
        response = api.get("/api/v1/account/")
        assert response.status_code == 200, response.content
        return response.json()["rate_limits"]

    assert limits()["counted"] == "shared" and limits()["reads"]["remaining"] == 50
    api.get("/api/v1/deals/")
    assert limits()["reads"]["remaining"] == 49
    own_redis.kill()
    down = limits()
    assert down["counted"] == "per_process"
    for _ in range(2):
        assert api.get("/api/v1/deals/").status_code == 200
    assert limits()["reads"]["remaining"] == down["reads"]["remaining"] - 2
    via_mcp = mcp.ok("get_account")["rate_limits"]
    assert via_mcp["counted"] == "per_process" and via_mcp["reads"]["remaining"] == down["reads"]["remaining"] - 2

    own_redis.start()  # an empty Redis: the shared count starts again there
    assert wait_until(lambda: limits()["counted"] == "shared", timeout=10)
    assert limits()["reads"]["remaining"] == 50
    assert mcp.ok("get_account")["rate_limits"]["counted"] == "shared"
