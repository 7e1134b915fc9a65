"""lev.request_id.new_request_id: the ids minted for requests and tool calls are version 4 UUIDs, never
repeated, accepted as X-Request-Id by our own check, and different in every forked worker (gunicorn forks
its workers from a preloaded master: a generator seeded once there would give every worker the same ids
unless reseeded in the child)."""

from __future__ import annotations

import os
import uuid

from lev.middleware import VALID_REQUEST_ID
from lev.request_id import new_request_id


def test_ids_are_version_4_uuids_and_never_repeat():
    ids = [new_request_id() for _ in range(20_000)]
    assert len(set(ids)) == len(ids)
    for value in ids[:200]:
        parsed = uuid.UUID(value)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122 and str(parsed) == value
        assert VALID_REQUEST_ID.match(value)


def test_forked_workers_mint_different_ids():
    """Two children forked from the same parent (as gunicorn forks its workers) mint different sequences."""
    new_request_id()  # the parent's generator in use before the fork, as in a preloaded master
    sequences = []
    for _ in range(2):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: write its first ids and leave at once
            os.close(read)
            os.write(write, ",".join(new_request_id() for _ in range(5)).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            sequences.append(pipe.read().decode())
        os.waitpid(pid, 0)
    parent = ",".join(new_request_id() for _ in range(5))
    assert len({*sequences, parent}) == 3, sequences
