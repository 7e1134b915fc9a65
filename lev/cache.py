"""Django's RedisCache with one Redis client per connection pool, kept for the life of the process.

Django's own client builds a new `redis.Redis` for every cache call (its constructor copies every
response callback into a fresh dict: about a tenth of a millisecond, paid on each call, measured in
docs/benchmarks.md); the connection pool under it is already shared. `redis.Redis` is thread-safe,
so keeping one per pool changes nothing else.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class PooledRedisCacheClient(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def _pool_at(self, index: int) -> Any:
        if index not in self._pools:
            self._pools[index] = self._pool_class.from_url(self._servers[index], **self._pool_options)
        return self._pools[index]

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients.setdefault(index, self._client(connection_pool=self._pool_at(index)))
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server: Any, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = PooledRedisCacheClient
