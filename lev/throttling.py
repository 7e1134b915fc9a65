"""Per-user rate limits: reads and writes counted apart, in the shared cache (Redis when set).

A fixed window counted with an atomic increment (Redis INCR), rather than DRF's SimpleRateThrottle,
whose read-modify-write of a timestamp list lets concurrent workers undercount. On Redis the window
is counted in one round trip (`INCR` and `EXPIRE` pipelined), not the cache API's three (add, then
incr's EXISTS and INCRBY).

Leases (LEV_RATE_LIMIT_LEASE, on by default): a process does not wait on Redis for every request.
It takes a batch of the window's allowance from the shared count with one `INCRBY n` (+ `EXPIRE`,
pipelined) and spends it locally; only the request that takes a batch waits on Redis. A batch starts
at 1 in every window (a light user is counted exactly as without leases), doubles while the user keeps
calling, and is never more than 1/LEASE_SHARE of the limit, nor 1/LEASE_LEFT_SHARE of what this
process last saw left of it, nor LEASE_MAX; a lease belongs to its window's key, so it never crosses
a window. The shared count then counts requests leased, not requests made: no process is granted a
token past the limit, so no more than the limit is ever admitted in a window, across every process;
the error is on the refusing side, the tokens other processes leased and did not spend. A process holds at most one
batch of a window at a time (its threads wait for the batch one of them is taking), so with P
processes serving a user at most (P - 1) x (max(1, min(LEASE_MAX, limit // LEASE_SHARE)) - 1)
requests a window are refused early (200/min: 9 per other process); with one process the answers
are exactly the long way's. Once a process finds the window spent it refuses without asking Redis
until the window ends. Design and tests: docs/architecture.md, "Rate limits across processes".
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
from lev.redis_gate import redis_for, redis_gate

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
LEASE_SHARE = 20  # a lease is at most 1/20 of the limit (this bounds the requests refused early),
LEASE_LEFT_SHARE = 4  # at most 1/4 of what is left of it in the window (as this process last saw it),
LEASE_MAX = 64  # and never more than 64 requests, whatever the limit
LEASE_WAIT_SECONDS = 2.0  # a thread waits this long at most for another's batch (Redis calls time out sooner)


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
    client = _redis_client()
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
            client = _redis_client()
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


def _redis_client() -> Any | None:
    """The rate limits' own Redis client on the default cache's Redis (its LOCATION and socket timeout:
    lev.redis_gate.redis_for, one pool per process), when that cache is Django's RedisCache; None for
    any other cache (the counts then go through the cache's own API). The keys are the cache's
    (make_and_validate_key), so both read the same counters."""
    config = settings.CACHES.get("default", {})
    if not config.get("BACKEND", "").endswith("redis.RedisCache"):
        return None
    location = config["LOCATION"]
    location = location[0] if isinstance(location, list | tuple) else location.split(",")[0]
    return redis_for(location, float(config.get("OPTIONS", {}).get("socket_timeout") or 1.0))


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


class _Lease:
    __slots__ = ("exhausted", "expires", "next_batch", "seen", "taking", "tokens")

    def __init__(self, expires: float) -> None:
        self.tokens = 0  # leased from the shared count and not spent yet
        self.next_batch = 1  # the size of the next batch (before the share cap)
        self.seen = 0  # the shared count as this process last saw it
        self.exhausted = False  # the shared count has reached the limit: Redis has no token left
        self.taking = False  # a thread of this process is taking a batch from Redis now
        self.expires = expires


class _Leases:
    """This process's leased tokens, per (window key, limit): spent locally, one Redis round trip per
    batch. Thread-safe, and one batch at a time per lease: the lock is never held across the Redis
    call; a thread that finds no token while another is taking a batch waits for that batch (a round
    trip it would have made itself) rather than taking a second one, so a process never holds more than
    one batch of a window, whatever its threads."""

    def __init__(self) -> None:
        self._leases: dict[tuple[str, int], _Lease] = {}
        self._lock = threading.Lock()
        self._landed = threading.Condition(self._lock)

    def admit(self, client, key: str, limit: int, period: int) -> bool | None:
        """Whether one more request fits; None when Redis is down (the caller counts per process)."""
        with self._lock:
            lease = self._leases.get((key, limit))
            if lease is None:
                now = time.monotonic()
                if len(self._leases) > 10_000:  # windows roll over: forget the finished ones
                    self._leases = {k: v for k, v in self._leases.items() if v.expires > now}
                lease = self._leases[(key, limit)] = _Lease(now + period + 1)
            deadline = time.monotonic() + LEASE_WAIT_SECONDS
            while True:
                if lease.tokens > 0:
                    lease.tokens -= 1
                    return True
                if lease.exhausted:  # the count only grows within a window: refused without asking Redis
                    return False
                if not lease.taking or not self._landed.wait(deadline - time.monotonic()):
                    break  # nobody is taking a batch (or the one taking it is stuck): take one
                if not redis_gate.available():  # the batch was not taken: Redis is down
                    return None
            batch = min(lease.next_batch, LEASE_MAX, max(1, limit // LEASE_SHARE),
                        max(1, (limit - lease.seen) // LEASE_LEFT_SHARE))
            lease.next_batch = min(batch * 2, LEASE_MAX)
            lease.taking = True
        try:
            total = _lease_in_cache(client, key, period, batch)  # raises while Redis is down
        except BaseException as exc:
            outage = isinstance(exc, Exception) and is_dependency_outage(exc)
            if outage:  # before the waiting threads wake: they count per process, not try Redis again
                redis_gate.failed(exc, "rate limits")
            with self._lock:
                lease.taking = False
                self._landed.notify_all()
            if outage:
                return None
            raise
        granted = min(batch, max(limit - (total - batch), 0))  # the tokens numbered up to the limit
        with self._lock:
            lease.taking = False
            lease.seen = max(lease.seen, total)
            lease.tokens += granted
            if lease.tokens > 0:  # this batch (or a stuck thread's that landed meanwhile)
                lease.tokens -= 1
                admitted = True
            else:
                lease.exhausted, admitted = True, False
            self._landed.notify_all()
            return admitted

    def unspent(self, key: str, limit: int) -> int:
        with self._lock:
            lease = self._leases.get((key, limit))
            return lease.tokens if lease is not None else 0

    def clear(self) -> None:
        """Forget every lease (Redis failed: it may come back empty; and between tests)."""
        with self._lock:
            self._leases = {}


_leases = _Leases()


def _lease_in_cache(client, key: str, period: int, batch: int) -> int:
    """Take `batch` requests of `key`'s window from the shared count; the count after (one round trip,
    the expiry renewed as in _count_in_cache)."""
    pipe = client.pipeline(transaction=False)
    name = cache.make_and_validate_key(key)
    pipe.incrby(name, batch)
    pipe.expire(name, period + 1)
    return int(pipe.execute()[0])


def admit(key: str, limit: int, period: int) -> bool:
    """Whether one more request under `key` fits `limit` requests per fixed window of `period`
    seconds: from this process's leased tokens when LEV_RATE_LIMIT_LEASE is on and the cache is Redis,
    else counted one by one (count_in_window). While Redis is down, the per-process fallback counts."""
    if getattr(settings, "LEV_RATE_LIMIT_LEASE", True):
        if not redis_gate.available():
            _leases.clear()  # Redis may come back empty: no token leased before the outage is spent after it
            return _local_counts.incr(key, period) <= limit
        client = _redis_client()
        if client is not None:
            admitted = _leases.admit(client, key, limit, period)
            if admitted is not None:
                return admitted
            _leases.clear()
            return _local_counts.incr(key, period) <= limit
    return count_in_window(key, period) <= limit


def reset_leases() -> None:
    _leases.clear()


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
        if admit(key, limit, period):
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
    or while Redis is down; each process then counts apart, so the remaining figure is this one's).
    With leases, the shared count counts requests leased: remaining is the limit less that count, plus
    the tokens this process leased and has not spent (other processes' unspent tokens are not seen, so
    it may read low by at most the tolerance in this module's docstring)."""
    now = time.time()
    windows = {name: (throttle, methods, *throttle.rate()) for name, (throttle, methods) in LIMITS.items()}
    keys = [throttle.key(user.pk, int(now // period)) for throttle, _methods, _limit, period in windows.values()]
    counts, shared = peek_in_windows(keys)
    found: dict[str, Any] = {}
    for (name, (_throttle, methods, limit, period)), key, used in zip(windows.items(), keys, counts, strict=True):
        reset = (int(now // period) + 1) * period
        unspent = _leases.unspent(key, limit) if shared else 0
        found[name] = {
            "methods": list(methods), "limit": limit, "window_seconds": period,
            "remaining": min(max(limit - used, 0) + unspent, limit),
            "resets_at": dt.datetime.fromtimestamp(reset, tz=dt.UTC),
            "resets_in_seconds": max(int(reset - now + 0.999), 0),
        }
    return {**found, "counted": "shared" if shared else "per_process", "this_request_counted": False}
