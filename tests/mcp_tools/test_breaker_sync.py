"""The breaker's hot path with its state in Redis (mcp_tools.resilience, LEV_BREAKER_SYNC_SECONDS): a
success while closed syncs with Redis in one round trip, and then this process's successes skip Redis
for the sync interval; every failure still counts in Redis at once, so the breaker opens for every
process; and a process that has just synced learns that another opened it within the interval."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest
from django.conf import settings as django_settings

from mcp_tools import resilience
from tests.redis_round_trips import redis_round_trips

pytestmark = pytest.mark.skipif(not django_settings.REDIS_URL, reason="the shared breaker lives in Redis (REDIS_URL)")


@pytest.fixture
def clock(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(resilience, "time", SimpleNamespace(monotonic=lambda: now[0]))
    return now


def ok() -> str:
    return "answer"


def outage() -> str:
    raise resilience.BackendUnavailable("status 503", status=503)


def shared(name: str) -> bytes | None:
    return resilience.redis_client().get(f"{django_settings.LEV_BREAKER_NAME}:pybreaker:{name}")


def test_closed_successes_skip_redis_between_syncs(clock, settings):
    resilience.get_breaker()  # built (it reads the shared state once when built)
    with redis_round_trips() as sent:
        assert resilience.guarded(ok) == "answer"
    assert len(sent) == 2  # the state read, then one pipeline: reset the counter, the probe, read back
    with redis_round_trips() as sent:
        for _ in range(20):
            assert resilience.guarded(ok) == "answer"
    assert sent == []
    clock[0] += settings.LEV_BREAKER_SYNC_SECONDS
    with redis_round_trips() as sent:
        assert resilience.guarded(ok) == "answer"
    assert len(sent) == 2


def test_failures_count_in_redis_at_once_and_open_the_breaker_for_every_process(clock, settings):
    resilience.guarded(ok)  # synced: successes skip Redis now
    for count in range(1, settings.LEV_BREAKER_FAIL_MAX):
        with pytest.raises(resilience.BackendUnavailable):
            resilience.guarded(outage)
        assert shared("fail_counter") == str(count).encode()
    with pytest.raises(resilience.BackendUnavailable):
        resilience.guarded(outage)
    assert shared("state") == b"open"
    with pytest.raises(resilience.BreakerOpen):
        resilience.guarded(ok)


def test_a_success_between_syncs_leaves_no_failure_counted(clock, settings):
    resilience.guarded(ok)
    with pytest.raises(resilience.BackendUnavailable):
        resilience.guarded(outage)  # forgets the sync: the next success resets the shared counter
    resilience.guarded(ok)
    assert shared("fail_counter") == b"0"


def test_another_process_opening_the_breaker_is_seen_within_the_sync_interval(clock, settings):
    resilience.guarded(ok)
    other = resilience.SharedStorage(resilience.redis_client(), settings.LEV_BREAKER_NAME)
    other.opened_at = dt.datetime.now(dt.UTC)  # what another process's breaker writes when it opens
    other.state = "open"
    calls = []
    resilience.guarded(lambda: calls.append(1))  # within the interval this process may still call
    clock[0] += settings.LEV_BREAKER_SYNC_SECONDS
    with pytest.raises(resilience.BreakerOpen):
        resilience.guarded(lambda: calls.append(2))
    assert calls == [1]
