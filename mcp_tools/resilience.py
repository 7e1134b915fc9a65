"""Circuit breaker, backend-probe state and retry policy of the MCP layer.

The breaker is pybreaker's state machine and storage (Redis when REDIS_URL is set, so every
process sees one breaker; memory otherwise). pybreaker holds a process-wide lock for the whole
guarded call, which would serialise every backend request of a threaded server, so `guarded`
makes the call outside the breaker and then replays its outcome through `breaker.call` (a
microsecond under the lock) to drive the same state transitions.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import logging
import random
import threading
from collections.abc import Callable
from typing import TypeVar

import pybreaker
from django.conf import settings

logger = logging.getLogger(__name__)
T = TypeVar("T")

_lock = threading.Lock()
_breaker: pybreaker.CircuitBreaker | None = None
_memory_probe = {"state": "reachable"}
PROBE_KEY = "lev:mcp:lev_api_probe"


class BackendUnavailable(Exception):
    """A 5xx, timeout or connection failure: the only outcomes that count against the breaker."""

    def __init__(self, reason: str, retry_after_ms: int | None = None, status: int | None = None):
        super().__init__(reason)
        self.retry_after_ms = retry_after_ms
        self.status = status  # None for timeouts and connection errors


class BreakerOpen(Exception):
    def __init__(self, remaining_ms: int):
        super().__init__("circuit breaker open")
        self.remaining_ms = remaining_ms


@functools.cache
def redis_client():
    """One Redis connection pool per process, or None without REDIS_URL."""
    if not settings.REDIS_URL:
        return None
    import redis

    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1.0, socket_connect_timeout=1.0)


def get_breaker() -> pybreaker.CircuitBreaker:
    global _breaker
    with _lock:
        if _breaker is None:
            client = redis_client()
            storage = (
                pybreaker.CircuitRedisStorage(
                    pybreaker.STATE_CLOSED, client, namespace=settings.LEV_BREAKER_NAME
                )
                if client is not None
                else pybreaker.CircuitMemoryStorage(pybreaker.STATE_CLOSED)
            )
            _breaker = pybreaker.CircuitBreaker(
                fail_max=settings.LEV_BREAKER_FAIL_MAX,
                reset_timeout=settings.LEV_BREAKER_RESET_TIMEOUT_S,
                # Only backend outages count; a 4xx or 429 is a healthy backend answering.
                exclude=[lambda exc: not isinstance(exc, BackendUnavailable)],
                state_storage=storage,
                name=settings.LEV_BREAKER_NAME,
                throw_new_error_on_trip=False,
            )
        return _breaker


def reset_breaker() -> None:
    """Forget the breaker (tests, settings changes); its shared storage is cleared too."""
    global _breaker
    with _lock:
        if _breaker is not None:
            _breaker.close()
        _breaker = None
    client = redis_client()
    if client is not None:
        client.delete(*[f"pybreaker:{settings.LEV_BREAKER_NAME}:{k}"
                        for k in ("state", "fail_counter", "success_counter", "opened_at")], PROBE_KEY)
    _memory_probe["state"] = "reachable"


def _remaining_cooldown_ms(breaker: pybreaker.CircuitBreaker) -> int:
    opened_at = breaker._state_storage.opened_at
    if opened_at is None:
        return 0
    reopen = opened_at + dt.timedelta(seconds=breaker.reset_timeout)
    return max(0, int((reopen - dt.datetime.now(dt.UTC)).total_seconds() * 1000))


def breaker_state() -> str:
    """closed | open | half_open, read without changing anything (safe for /health)."""
    try:
        breaker = get_breaker()
        state = breaker.current_state
        if state == pybreaker.STATE_OPEN and _remaining_cooldown_ms(breaker) == 0:
            return "half_open"  # cooldown over: the next call is the probe
        return state.replace("-", "_")
    except Exception:
        logger.exception("Could not read the circuit breaker state")
        return "closed"


def guarded(call: Callable[[], T]) -> T:
    """Run `call` behind the breaker: fail fast while open, count BackendUnavailable outcomes."""
    breaker = get_breaker()
    state = breaker.current_state
    if state == pybreaker.STATE_OPEN:
        remaining = _remaining_cooldown_ms(breaker)
        if remaining > 0:
            raise BreakerOpen(remaining)
    try:
        result = call()
    except BackendUnavailable as exc:
        _record_probe("degraded")
        _replay(breaker, exc)
        raise
    if state == pybreaker.STATE_CLOSED and _record_closed_success(breaker):
        return result
    _record_probe("reachable")
    _replay(breaker, None)
    return result


def record_outage() -> int | None:
    """Count a dependency outage met outside a guarded backend call (the /mcp endpoint could not
    check credentials because the database is down). Returns the remaining cooldown in ms when the
    breaker is open, else None. Never raises: this runs while something is already down."""
    try:
        breaker = get_breaker()
        _record_probe("degraded")
        _replay(breaker, BackendUnavailable("dependency outage"))
        if breaker.current_state == pybreaker.STATE_OPEN:
            return _remaining_cooldown_ms(breaker) or None
    except Exception:  # the breaker's own storage (Redis) may be what is down
        logger.debug("Could not record the outage in the breaker", exc_info=True)
    return None


def _record_closed_success(breaker: pybreaker.CircuitBreaker) -> bool:
    """The hot path: a success while closed. pybreaker would only reset the shared failure
    counter; doing that and the probe in one Redis round trip (not four) is the same outcome."""
    client = redis_client()
    if client is None:
        return False
    try:
        pipe = client.pipeline(transaction=False)
        pipe.set(breaker._state_storage._namespace("fail_counter"), 0)
        pipe.set(PROBE_KEY, "reachable", ex=3600)
        pipe.execute()
    except Exception:
        return False
    return True


def _replay(breaker: pybreaker.CircuitBreaker, exc: BaseException | None) -> None:
    def outcome():
        if exc is not None:
            raise exc

    # BackendUnavailable is this call's own failure, already counted; CircuitBreakerError means
    # another process opened the breaker meanwhile. Either way this call's own result stands.
    with contextlib.suppress(BackendUnavailable, pybreaker.CircuitBreakerError):
        breaker.call(outcome)


def _record_probe(state: str) -> None:
    client = redis_client()
    if client is None:
        _memory_probe["state"] = state
        return
    try:
        client.set(PROBE_KEY, state, ex=3600)
    except Exception:
        logger.warning("Could not record the backend probe in Redis")


def last_probe() -> str:
    """reachable | degraded: the outcome of the last backend request any MCP process made."""
    client = redis_client()
    if client is None:
        return _memory_probe["state"]
    try:
        value = client.get(PROBE_KEY)
    except Exception:
        return "degraded"
    return value.decode() if value else "reachable"


def backoff_ms(attempt: int) -> float:
    """Delay before retry number `attempt` (1-based): base * factor^(n-1), plus 0-25 % jitter."""
    base = settings.LEV_RETRY_BACKOFF_BASE_MS * settings.LEV_RETRY_BACKOFF_FACTOR ** (attempt - 1)
    return base * (1 + random.uniform(0, settings.LEV_RETRY_JITTER))
