"""Per-user rate limits: reads and writes counted apart, in the shared cache (Redis when set).

A fixed window counted with the cache's atomic `incr` (Redis INCR), rather than DRF's
SimpleRateThrottle, whose read-modify-write of a timestamp list lets concurrent workers undercount.
"""

from __future__ import annotations

import threading
import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle

from lev.outages import is_dependency_outage
from lev.redis_gate import redis_gate

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(rate: str) -> tuple[int, int]:
    """'200/min' -> (200, 60)."""
    count, period = rate.split("/")
    return int(count), PERIODS[period.strip()[0].lower()]


def count_in_window(key: str, period: int) -> int:
    """Count one more request under `key` (a fixed window of `period` seconds) and return the count:
    in the shared cache, or in this process while the cache's Redis is down (limits then hold per
    process, and go back to shared counting when Redis answers again)."""
    if redis_gate.available():
        try:
            cache.add(key, 0, timeout=period + 1)
            try:
                return cache.incr(key)
            except ValueError:  # expired between add and incr
                cache.add(key, 1, timeout=period + 1)
                return 1
        except Exception as exc:
            if not is_dependency_outage(exc):
                raise
            redis_gate.failed(exc, "rate limits")
    return _local_counts.incr(key, period)


class _LocalCounts:
    """Per-process fixed-window counters, the fallback while Redis is down."""

    def __init__(self) -> None:
        self._counts: dict[str, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def incr(self, key: str, period: int) -> int:
        now = time.monotonic()
        with self._lock:
            expires, count = self._counts.get(key, (now + period + 1, 0))
            if expires <= now:
                expires, count = now + period + 1, 0
            self._counts[key] = (expires, count + 1)
            if len(self._counts) > 10_000:  # windows roll over: forget the finished ones
                self._counts = {k: v for k, v in self._counts.items() if v[0] > now}
            return count + 1


_local_counts = _LocalCounts()


class _UserThrottle(BaseThrottle):
    scope = ""
    setting_name = ""
    applies_to_safe: bool = True

    def allow_request(self, request, view) -> bool:
        self._wait = None
        if (request.method in SAFE_METHODS) != self.applies_to_safe:
            return True
        if not request.user or not request.user.is_authenticated:
            return True  # unauthenticated requests are refused before they cost anything
        # Read at request time (not import time) so settings overrides and env changes apply.
        limit, period = parse_rate(getattr(settings, self.setting_name))
        now = time.time()
        window = int(now // period)
        key = f"throttle:{self.scope}:{request.user.pk}:{window}"
        if count_in_window(key, period) <= limit:
            return True
        self._wait = (window + 1) * period - now
        return False

    def wait(self) -> float | None:
        return self._wait


class UserReadThrottle(_UserThrottle):
    scope = "user_read"
    setting_name = "LEV_RATE_LIMIT_READS"
    applies_to_safe = True


class UserWriteThrottle(_UserThrottle):
    scope = "user_write"
    setting_name = "LEV_RATE_LIMIT_WRITES"
    applies_to_safe = False
