"""Counting the Redis round trips a piece of code makes (each command or pipeline sent is one)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import redis.connection


@contextmanager
def redis_round_trips() -> Iterator[list[bytes]]:
    """Yields the list of what was sent to Redis meanwhile, one item per round trip (this process,
    every client). The real connection still sends it: this only counts."""
    sent: list[bytes] = []
    original = redis.connection.Connection.send_packed_command

    def counting(self, command, check_health=True):
        sent.append(command if isinstance(command, bytes) else b"".join(command))
        return original(self, command, check_health)

    redis.connection.Connection.send_packed_command = counting
    try:
        yield sent
    finally:
        redis.connection.Connection.send_packed_command = original
