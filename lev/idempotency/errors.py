"""Why an `Idempotency-Key` cannot be honoured: each a CONFLICT naming the key in its details."""

from __future__ import annotations

from lev.errors import Conflict


class IdempotencyKeyReused(Conflict):
    """The key's first request had another body: replaying its answer would answer the wrong request."""

    def __init__(self, key: str):
        super().__init__("this Idempotency-Key was already used with a different request",
                         details={"idempotency_key": key})


class IdempotencyKeyNotClaimed(Conflict):
    """The key's record kept vanishing and reappearing under concurrent requests: send it again."""

    def __init__(self, key: str):
        super().__init__("this Idempotency-Key could not be claimed; send the request again",
                         details={"idempotency_key": key})
