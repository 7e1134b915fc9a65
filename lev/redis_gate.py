"""Redis is a helper, not a dependency of correctness (ARCHITECTURE.md, "Failure semantics").

When a Redis call fails, the callers (rate limits, the circuit breaker's shared state) fall back to
per-process state. `redis_gate` remembers the failure for a short interval so that, while Redis is
down or frozen, requests skip it instead of each paying a connect or socket timeout; after the
interval the next caller tries Redis again, and on success everything is back on Redis. The outage
is logged once per interval (lev.outages), not per call.
"""

from __future__ import annotations

import functools
import threading
import time

from lev.outages import report_outage

RETRY_INTERVAL_SECONDS = 5.0


class RedisGate:
    def __init__(self, retry_interval: float = RETRY_INTERVAL_SECONDS):
        self.retry_interval = retry_interval
        self._down_until = 0.0
        self._lock = threading.Lock()

    def available(self) -> bool:
        """False while a recent failure says Redis is down (callers use their fallback)."""
        return time.monotonic() >= self._down_until

    def failed(self, exc: BaseException, where: str) -> None:
        with self._lock:
            self._down_until = time.monotonic() + self.retry_interval
        report_outage(exc, where)

    def reset(self) -> None:
        with self._lock:
            self._down_until = 0.0


redis_gate = RedisGate()


@functools.lru_cache(maxsize=8)
def redis_for(url: str, timeout: float):
    """One Redis connection pool per process for (url, timeout); every call is bounded by `timeout`
    (connect and socket), so a hung Redis costs a caller at most that long."""
    import redis

    return redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
