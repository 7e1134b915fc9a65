"""Idempotent creates: the first response to an `Idempotency-Key` is stored for 24 h per user and
replayed for repeats; the same key with another body is a 409 CONFLICT.

Hand-written because no maintained Django/DRF package does key → response replay with body
fingerprints on a plain database table (the ones that exist are abandoned or cache-only, and a
cache can drop a record and so duplicate a deal).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from deals.models import IdempotencyRecord
from lev.errors import Conflict, ValidationFailed

HEADER = "Idempotency-Key"
REPLAY_HEADER = "Idempotent-Replayed"


def _fingerprint(request: Request) -> str:
    payload = json.dumps(
        {"method": request.method, "path": request.path, "body": request.data},
        sort_keys=True, default=str, separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _ttl() -> dt.timedelta:
    return dt.timedelta(hours=settings.LEV_IDEMPOTENCY_TTL_HOURS)


def idempotent(request: Request, handler: Callable[[], Response]) -> Response:
    """Run `handler` at most once per (user, Idempotency-Key); without a key, just run it."""
    key = request.headers.get(HEADER)
    if key is None:
        return handler()
    key = key.strip()
    if not key or len(key) > 255:
        raise ValidationFailed({"Idempotency-Key": ["must be 1 to 255 characters"]})
    fingerprint = _fingerprint(request)
    user = request.user
    # One transaction for the record and the create: both land, or neither does. On PostgreSQL a
    # concurrent repeat waits on the unique index until this commits, then replays.
    with transaction.atomic():
        try:
            with transaction.atomic():
                record = IdempotencyRecord.objects.create(
                    user=user, key=key, method=request.method, path=request.path[:255],
                    request_hash=fingerprint,
                )
        except IntegrityError:
            existing = IdempotencyRecord.objects.select_for_update().get(user=user, key=key)
            if existing.created_at < timezone.now() - _ttl():
                existing.delete()
                return idempotent(request, handler)
            if existing.request_hash != fingerprint:
                raise Conflict(
                    "this Idempotency-Key was already used with a different request",
                    details={"idempotency_key": key},
                ) from None
            response = Response(existing.response_body, status=existing.status_code)
            response[REPLAY_HEADER] = "true"
            return response
        response = handler()
        if 200 <= response.status_code < 300:
            record.status_code = response.status_code
            # Stored as the client saw it (numbers stay numbers), so a replay is byte-for-byte alike.
            record.response_body = json.loads(JSONRenderer().render(response.data))
            record.save(update_fields=["status_code", "response_body"])
        else:
            # A failed attempt stores nothing, so the client may retry it with the same key.
            record.delete()
        return response


def idempotency_purge() -> int:
    """Delete records past their time to live; returns how many."""
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=timezone.now() - _ttl()).delete()
    return deleted
