"""Idempotent creates: the first response to an `Idempotency-Key` is stored for 24 h per
(account, user, key) and replayed for repeats; the same key with another body is a 409 CONFLICT.

Hand-written because no maintained Django/DRF package does key → response replay with body
fingerprints on a plain database table (the ones that exist are abandoned or cache-only, and a
cache can drop a record and so duplicate a deal).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from lev.errors import ValidationFailed
from lev.idempotency.errors import IdempotencyKeyNotClaimed, IdempotencyKeyReused
from lev.idempotency.models import IdempotencyRecord
from lev.limits import IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_KEY_PATTERN

HEADER = "Idempotency-Key"
REPLAY_HEADER = "Idempotent-Replayed"
_KEY = re.compile(IDEMPOTENCY_KEY_PATTERN)
# Inserting can lose twice in a row only when records vanish between the insert and the lookup
# (the hourly purge); after that many rounds something else is wrong, and the caller is told so.
_MAX_ROUNDS = 3


def _fingerprint(request: Request) -> str:
    payload = json.dumps(
        {"method": request.method, "path": request.path, "body": request.data},
        sort_keys=True, default=_part, separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _part(value: object) -> object:
    """A multipart body's file by its content (its name alone would let a repeat with another file of the
    same name replay the first answer); anything else as text."""
    if isinstance(value, UploadedFile):
        digest = hashlib.sha256()
        for chunk in value.chunks():  # from the start; the view reads it again from the start
            digest.update(chunk)
        return {"file": value.name, "size": value.size, "sha256": digest.hexdigest()}
    return str(value)


def _ttl() -> dt.timedelta:
    return dt.timedelta(hours=settings.LEV_IDEMPOTENCY_TTL_HOURS)


def _account_id(request: Request) -> int:
    """The account the request acts for: an API key's own account; for a session, the membership
    the deal views use (so both agree on where a create lands)."""
    account_id = getattr(request.auth, "account_id", None)
    if account_id:
        return account_id
    from lev.accounts.selectors import membership_for_user  # deals imports lev; import at use time

    return membership_for_user(user=request.user, api_key=request.auth).account_id


def check_key(key: str) -> str:
    """The key without surrounding blanks, or ValidationFailed naming the header. Visible ASCII
    only: the key is stored and compared, and PostgreSQL text cannot hold NUL."""
    key = key.strip(" \t")  # HTTP's optional whitespace only: str.strip() would eat control characters
    if not _KEY.fullmatch(key):
        raise ValidationFailed({HEADER: [
            f"must be 1 to {IDEMPOTENCY_KEY_MAX} visible ASCII characters (no spaces or control characters)"
        ]})
    return key


def _replay(existing: IdempotencyRecord, fingerprint: str, key: str) -> Response:
    """The stored answer to a repeat. A record another request can read is always finished (its
    status and body set): `idempotent` creates, fills or deletes it in the transaction of the
    create itself, so no one else ever reads it in between."""
    if existing.request_hash != fingerprint:
        raise IdempotencyKeyReused(key)
    response = Response(existing.response_body, status=existing.status_code)
    response[REPLAY_HEADER] = "true"
    return response


def idempotent(request: Request, handler: Callable[[], Response]) -> Response:
    """Run `handler` at most once per (account, user, Idempotency-Key); without a key, just run it."""
    raw_key = request.headers.get(HEADER)
    if raw_key is None:
        return handler()
    key = check_key(raw_key)
    fingerprint = _fingerprint(request)
    scope = {"account_id": _account_id(request), "user": request.user, "key": key}
    fields = {"method": request.method, "path": request.path[:255], "request_hash": fingerprint}
    # One transaction for the record and the create: both land, or neither does. On PostgreSQL a
    # concurrent repeat waits on the unique index (or the row lock) until this commits, then replays.
    with transaction.atomic():
        for _round in range(_MAX_ROUNDS):
            try:
                with transaction.atomic():
                    record = IdempotencyRecord.objects.create(**scope, **fields)
                break
            except IntegrityError:
                existing = IdempotencyRecord.objects.select_for_update().filter(**scope).first()
            if existing is None:
                continue  # purged since the insert failed: insert again
            if existing.created_at >= timezone.now() - _ttl():
                return _replay(existing, fingerprint, key)
            # Expired: reuse the row in place, under its lock. (Deleting it would make a concurrent
            # repeat waiting on this lock find nothing; now it finds this attempt and replays it.)
            for name, value in fields.items():
                setattr(existing, name, value)
            existing.created_at = timezone.now()
            existing.status_code, existing.response_body = None, None
            existing.save()
            record = existing
            break
        else:
            raise IdempotencyKeyNotClaimed(key)
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
