"""Per-user rate limits: reads and writes counted apart, in the shared cache (Redis when set).

A fixed window counted with an atomic increment (Redis INCR), rather than DRF's SimpleRateThrottle,
whose read-modify-write of a timestamp list lets concurrent workers undercount. On Redis the window
is counted in one round trip (`INCR` and `EXPIRE` pipelined), not the cache API's three (add, then
incr's EXISTS and INCRBY).
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from typing import Any

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
            return _count_in_cache(key, period)
        except Exception as exc:
            if not is_dependency_outage(exc):
                raise
            redis_gate.failed(exc, "rate limits")
    return _local_counts.incr(key, period)


def _count_in_cache(key: str, period: int) -> int:
    client = _redis_client_of(cache)
    if client is not None:
        # Every count renews the expiry, so no key is ever left without one (whatever the clocks of
        # the processes say about the window), and a window's key is gone a second after its last
        # request. Works on every Redis version (EXPIRE NX would need 7.0).
        pipe = client.pipeline(transaction=False)
        name = cache.make_and_validate_key(key)
        pipe.incr(name)
        pipe.expire(name, period + 1)
        return int(pipe.execute()[0])
    cache.add(key, 0, timeout=period + 1)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=period + 1)
        return 1


def peek_in_windows(keys: list[str]) -> tuple[list[int], bool]:
    """How many requests each key's window has counted, without counting one (one round trip on Redis);
    and whether those counts are the shared ones (in Redis, for every process) rather than this
    process's own (the embedded cache, or the fallback while Redis is down: count_in_window counts
    there then)."""
    if redis_gate.available():
        try:
            client = _redis_client_of(cache)
            if client is not None:
                found = client.mget([cache.make_and_validate_key(key) for key in keys])
                return [int(value or 0) for value in found], True
            found = cache.get_many(keys)
            return [int(found.get(key) or 0) for key in keys], False
        except Exception as exc:
            if not is_dependency_outage(exc):
                raise
            redis_gate.failed(exc, "rate limits")
    return [_local_counts.peek(key) for key in keys], False


def _redis_client_of(backend) -> Any | None:
    """The redis.Redis client under Django's (or lev.cache's) RedisCache; None for any other cache."""
    inner = getattr(backend, "_cache", None)
    get_client = getattr(inner, "get_client", None)
    return get_client(write=True) if get_client is not None else None


class _LocalCounts:
    """Per-process fixed-window counters, the fallback while Redis is down."""

    def __init__(self) -> None:
        self._counts: dict[str, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def peek(self, key: str) -> int:
        with self._lock:
            expires, count = self._counts.get(key, (0.0, 0))
            return count if expires > time.monotonic() else 0

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
        limit, period = self.rate()
        now = time.time()
        window = int(now // period)
        key = self.key(request.user.pk, window)
        if count_in_window(key, period) <= limit:
            return True
        self._wait = (window + 1) * period - now
        return False

    def wait(self) -> float | None:
        return self._wait

    @classmethod
    def rate(cls) -> tuple[int, int]:
        return parse_rate(getattr(settings, cls.setting_name))

    @classmethod
    def key(cls, user_pk: Any, window: int) -> str:
        return f"throttle:{cls.scope}:{user_pk}:{window}"


class UserReadThrottle(_UserThrottle):
    scope = "user_read"
    setting_name = "LEV_RATE_LIMIT_READS"
    applies_to_safe = True


class UserWriteThrottle(_UserThrottle):
    scope = "user_write"
    setting_name = "LEV_RATE_LIMIT_WRITES"
    applies_to_safe = False


# name -> (the throttle, the methods it counts): what a caller is told of its limits (limits_left).
LIMITS = {"reads": (UserReadThrottle, SAFE_METHODS), "writes": (UserWriteThrottle, ("POST", "PUT", "PATCH", "DELETE"))}


def limits_left(user) -> dict[str, Any]:
    """What is left of each of `user`'s limits in the current window, read without counting a request:
    the limit, the requests remaining, the window and when it resets (a fixed window: all at once), and
    whether the counts are shared by every process (Redis) or this process's own (the embedded cache,
    or while Redis is down; each process then counts apart, so the remaining figure is this one's)."""
    now = time.time()
    windows = {name: (throttle, methods, *throttle.rate()) for name, (throttle, methods) in LIMITS.items()}
    keys = [throttle.key(user.pk, int(now // period)) for throttle, _methods, _limit, period in windows.values()]
    counts, shared = peek_in_windows(keys)
    found: dict[str, Any] = {}
    for (name, (_throttle, methods, limit, period)), used in zip(windows.items(), counts, strict=True):
        reset = (int(now // period) + 1) * period
        found[name] = {
            "methods": list(methods), "limit": limit, "window_seconds": period,
            "remaining": max(limit - used, 0), "resets_at": dt.datetime.fromtimestamp(reset, tz=dt.UTC),
            "resets_in_seconds": max(int(reset - now + 0.999), 0),
        }
    return {**found, "counted": "shared" if shared else "per_process", "this_request_counted": False}
