"""A short-lived, per-process cache of verified bearer credentials and the memberships they act under.

Checking an API key or an OAuth access token, and then the caller's membership, cost two or three
queries on every request (the biggest part of a tool call's time, docs/benchmarks.md). Here what a
check found valid is kept in this process for at most `LEV_AUTH_CACHE_SECONDS` (default 5; 0 turns
the cache off), so the bound on a revocation is:

* **in the process that made the change, at once**: every save or delete of a credential, a user, a
  membership, an account or an OAuth grant or token through the ORM (the admin, the management
  commands, the connected-apps page, `/oauth/revoke/`, the services) empties this cache
  (`invalidate_on`, connected by the apps' `ready()`), and so does `ApiKey.objects...update(...)`;
* **in every other process, within `LEV_AUTH_CACHE_SECONDS`**: an entry is never used past its
  lifetime, and the next request checks the database again.

Only successes are kept (a refused credential is checked against the database every time), and the
checks that depend on the clock or the request (expiry, the token's audience) are made on every
request from the cached values, so an expired key or token stops at its expiry to the second.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from django.conf import settings
from django.db.models.signals import post_delete, post_save

MAX_ENTRIES = 10_000

# The clock entries are timed by (a module attribute, so a test can move it).
monotonic: Callable[[], float] = time.monotonic


class CredentialCache:
    def __init__(self) -> None:
        self._entries: dict[Hashable, tuple[float, Any]] = {}
        self._lock = threading.Lock()
        self._generation = 0

    @staticmethod
    def lifetime() -> float:
        return float(getattr(settings, "LEV_AUTH_CACHE_SECONDS", 0) or 0)

    def generation(self) -> int:
        """Read before a database check; `put` stores its result only if nothing was invalidated
        meanwhile (a revocation that lands during the check must not be outlived by its result)."""
        return self._generation

    def get(self, key: Hashable) -> Any | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, value = entry
        if expires <= monotonic():
            with self._lock:
                if self._entries.get(key) is entry:
                    del self._entries[key]
            return None
        return value

    def put(self, key: Hashable, value: Any, generation: int) -> None:
        lifetime = self.lifetime()
        if lifetime <= 0:
            return
        now = monotonic()
        with self._lock:
            if generation != self._generation:
                return
            if len(self._entries) >= MAX_ENTRIES:
                self._entries = {k: v for k, v in self._entries.items() if v[0] > now}
                if len(self._entries) >= MAX_ENTRIES:
                    self._entries.clear()
            self._entries[key] = (now + lifetime, value)

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._entries = {}


credential_cache = CredentialCache()


def _changed(sender: Any, **kwargs: Any) -> None:
    credential_cache.clear()


def invalidate_on(*models: Any) -> None:
    """Empty the cache whenever a row of one of `models` is saved or deleted in this process."""
    for model in models:
        post_save.connect(_changed, sender=model, weak=False, dispatch_uid=f"credential_cache:save:{model._meta.label}")
        post_delete.connect(_changed, sender=model, weak=False,
                            dispatch_uid=f"credential_cache:delete:{model._meta.label}")
