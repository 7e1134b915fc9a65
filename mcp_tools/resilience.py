"""Circuit breaker, backend-probe state and retry policy of the MCP layer.

The breaker is pybreaker's state machine over `SharedStorage` (Redis when REDIS_URL is set, so
every process sees one breaker, with per-process state while Redis is down; memory otherwise).
pybreaker holds a process-wide lock for the whole guarded call, which would serialise every
backend request of a threaded server, so `guarded` makes the call outside the breaker and then
replays its outcome through `breaker.call` (a microsecond under the lock) to drive the same state
transitions.

A closed breaker costs no Redis round trip on most calls: a success while closed resets the shared
failure counter and records the probe in one pipelined round trip that also reads the shared state
back, and for `LEV_BREAKER_SYNC_SECONDS` (1 s) after that, while every call of this process
succeeds, nothing more needs saying to Redis. Every failure still goes to the shared state at once
(so the breaker opens for every process after 5 consecutive outages), and a process learns that
another one opened the breaker at its next failure or within that interval.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pybreaker
from django.conf import settings
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from lev.metrics import register_live_collector
from lev.redis_gate import redis_for, redis_gate
from mcp_tools.metrics import BREAKER_STATES, BREAKER_TRANSITIONS

logger = logging.getLogger(__name__)
T = TypeVar("T")

_lock = threading.Lock()
_breaker: pybreaker.CircuitBreaker | None = None
# The storage the breaker was built with: pybreaker offers no public read of it, and the cooldown and
# the closed-success round trip need it, so the breaker's maker keeps it.
_storage: pybreaker.CircuitBreakerStorage | None = None
_memory_probe = {"state": "reachable"}
# Until when (time.monotonic) this process may take the shared breaker as closed with no failures
# counted and the probe reachable, as its last pipelined success read it (0: ask Redis).
_closed_until = {"at": 0.0}


def probe_key() -> str:
    """Redis key of the last backend probe, beside the breaker's own keys (one name per deployment)."""
    return f"{settings.LEV_BREAKER_NAME}:lev_api_probe"


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


def redis_client():
    """One Redis connection pool per process (per URL), or None without REDIS_URL."""
    return redis_for(settings.REDIS_URL, 1.0) if settings.REDIS_URL else None


class SharedStorage(pybreaker.CircuitBreakerStorage):
    """The breaker's state in Redis, shared by every process, and in this process's memory while
    Redis is down (so the breaker still opens and closes per process), back on Redis when it answers.

    Written here rather than using pybreaker's CircuitRedisStorage: that one touches Redis when it
    is built (so a process starting during a Redis outage cannot serve at all), logs a traceback on
    every call that fails, and falls back to "closed, no failures", a breaker that cannot open.
    """

    FIELDS = ("state", "fail_counter", "success_counter", "opened_at")

    def __init__(self, client: Any, name: str):
        super().__init__("redis")
        self._redis = client
        self._prefix = f"{name}:pybreaker:"
        self._memory = pybreaker.CircuitMemoryStorage(pybreaker.STATE_CLOSED)

    def keys(self) -> list[str]:
        return [self._prefix + field for field in self.FIELDS]

    def _shared(self, on_redis: Callable[[Any], T], in_memory: Callable[[], T]) -> T:
        if redis_gate.available():
            try:
                return on_redis(self._redis)
            except redis_errors() as exc:
                redis_gate.failed(exc, "circuit breaker state")
        return in_memory()

    @property
    def state(self) -> str:
        def read(r: Any) -> str:
            value = r.get(self._prefix + "state")
            return value.decode() if value else pybreaker.STATE_CLOSED

        return self._shared(read, lambda: self._memory.state)

    @state.setter
    def state(self, state: str) -> None:
        self._shared(lambda r: r.set(self._prefix + "state", str(state)),
                     lambda: setattr(self._memory, "state", state))

    def increment_counter(self) -> None:
        self._shared(lambda r: r.incr(self._prefix + "fail_counter"), self._memory.increment_counter)

    def reset_counter(self) -> None:
        self._shared(lambda r: r.set(self._prefix + "fail_counter", 0), self._memory.reset_counter)

    def increment_success_counter(self) -> None:
        self._shared(lambda r: r.incr(self._prefix + "success_counter"), self._memory.increment_success_counter)

    def reset_success_counter(self) -> None:
        self._shared(lambda r: r.set(self._prefix + "success_counter", 0), self._memory.reset_success_counter)

    @property
    def counter(self) -> int:
        return self._shared(lambda r: int(r.get(self._prefix + "fail_counter") or 0), lambda: self._memory.counter)

    @property
    def success_counter(self) -> int:
        return self._shared(lambda r: int(r.get(self._prefix + "success_counter") or 0),
                            lambda: self._memory.success_counter)

    @property
    def opened_at(self) -> dt.datetime | None:
        def read(r: Any) -> dt.datetime | None:
            value = r.get(self._prefix + "opened_at")
            return dt.datetime.fromtimestamp(float(value), dt.UTC) if value else None

        return self._shared(read, lambda: self._memory.opened_at)

    @opened_at.setter
    def opened_at(self, now: dt.datetime) -> None:
        # Sub-second precision: a whole-second timestamp would cut up to a second off the cooldown.
        self._shared(lambda r: r.set(self._prefix + "opened_at", repr(now.timestamp())),
                     lambda: setattr(self._memory, "opened_at", now))


def redis_errors() -> tuple[type[BaseException], ...]:
    import redis

    return (redis.RedisError,)


class _TransitionCounter(pybreaker.CircuitBreakerListener):
    def state_change(self, cb: pybreaker.CircuitBreaker, old_state, new_state) -> None:
        BREAKER_TRANSITIONS.labels(new_state.name.replace("-", "_")).inc()
        logger.warning("Circuit breaker %s: %s -> %s", cb.name, getattr(old_state, "name", old_state),
                       new_state.name)


def get_breaker() -> pybreaker.CircuitBreaker:
    global _breaker, _storage
    with _lock:
        if _breaker is None:
            client = redis_client()
            _storage = storage = (
                SharedStorage(client, settings.LEV_BREAKER_NAME)
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
                listeners=[_TransitionCounter()],
            )
        return _breaker


def reset_breaker() -> None:
    """Forget the breaker (tests, settings changes); its shared storage is cleared too."""
    global _breaker, _storage
    with _lock:
        if _breaker is not None:
            _breaker.close()
        _breaker = _storage = None
    client = redis_client()
    if client is not None:
        storage = SharedStorage(client, settings.LEV_BREAKER_NAME)
        with contextlib.suppress(*redis_errors()):
            client.delete(*storage.keys(), probe_key())
    _memory_probe["state"] = "reachable"
    _closed_until["at"] = 0.0
    redis_gate.reset()


def _storage_of(breaker: pybreaker.CircuitBreaker) -> pybreaker.CircuitBreakerStorage | None:
    """The storage `get_breaker` built `breaker` with (None for a breaker made elsewhere)."""
    return _storage if breaker is _breaker else None


def _remaining_cooldown_ms(breaker: pybreaker.CircuitBreaker) -> int:
    storage = _storage_of(breaker)
    opened_at = storage.opened_at if storage is not None else None
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
    known_closed = time.monotonic() < _closed_until["at"]
    state = pybreaker.STATE_CLOSED if known_closed else breaker.current_state
    if state == pybreaker.STATE_OPEN:
        remaining = _remaining_cooldown_ms(breaker)
        if remaining > 0:
            raise BreakerOpen(remaining)
    try:
        result = call()
    except BackendUnavailable as exc:
        _closed_until["at"] = 0.0
        _record_probe("degraded")
        _replay(breaker, exc)
        raise
    if known_closed:
        return result  # closed, nothing counted, probe reachable: as Redis said a moment ago
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
    """A success while closed. pybreaker would only reset the shared failure counter; doing that and
    the probe in one Redis round trip (not four) is the same outcome. The same round trip reads the
    shared state back: still closed, this process skips Redis on its successes for
    LEV_BREAKER_SYNC_SECONDS."""
    client = redis_client()
    storage = _storage_of(breaker)
    if client is None or not isinstance(storage, SharedStorage) or not redis_gate.available():
        return False
    started = time.monotonic()
    try:
        pipe = client.pipeline(transaction=False)
        pipe.set(storage.keys()[1], 0)
        pipe.set(probe_key(), "reachable", ex=3600)
        pipe.get(storage.keys()[0])
        shared_state = pipe.execute()[2]
    except redis_errors() as exc:
        redis_gate.failed(exc, "circuit breaker state")
        return False
    if shared_state in (None, pybreaker.STATE_CLOSED.encode()):
        _closed_until["at"] = started + settings.LEV_BREAKER_SYNC_SECONDS
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
    _memory_probe["state"] = state  # this process's view, also the fallback while Redis is down
    client = redis_client()
    if client is None or not redis_gate.available():
        return
    try:
        client.set(probe_key(), state, ex=3600)
    except redis_errors() as exc:
        redis_gate.failed(exc, "backend probe")


def last_probe() -> str:
    """reachable | degraded: the outcome of the last backend request any MCP process made (this
    process's own while Redis is down)."""
    client = redis_client()
    if client is None or not redis_gate.available():
        return _memory_probe["state"]
    try:
        value = client.get(probe_key())
    except redis_errors() as exc:
        redis_gate.failed(exc, "backend probe")
        return _memory_probe["state"]
    return value.decode() if value else "reachable"


def backoff_ms(attempt: int) -> float:
    """Delay before retry number `attempt` (1-based): base * factor^(n-1), plus 0-25 % jitter."""
    base = settings.LEV_RETRY_BACKOFF_BASE_MS * settings.LEV_RETRY_BACKOFF_FACTOR ** (attempt - 1)
    return base * (1 + random.uniform(0, settings.LEV_RETRY_JITTER))


class BreakerStateCollector(Collector):
    """The breaker's shared state at scrape time (one series per state, 1 for the current one)."""

    def collect(self):
        current = breaker_state()
        family = GaugeMetricFamily("lev_mcp_circuit_breaker_state", "1 for the breaker's current state.",
                                   labels=["state"])
        for state in BREAKER_STATES:
            family.add_metric([state], 1.0 if state == current else 0.0)
        yield family


register_live_collector(BreakerStateCollector())
