"""POST /api/v1/inbound-email/: a lender's reply, as raw MIME, from an inbound relay (docs/outreach.md).

Not a REST view of an account: no API key reaches it. The caller is an inbound-mail service or our own
relay (`deploy/inbound_relay.py`), and proves it with the shared secret LEV_INBOUND_EMAIL_SECRET:

    X-Lev-Timestamp: <unix seconds>
    X-Lev-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>." + body)>
    Content-Type: message/rfc822

Answers (the API's JSON error body for every refusal):
* 503 — no secret configured on this site: a relay keeps the mail and retries (nothing is lost);
* 413 — the body is larger than LEV_INBOUND_EMAIL_MAX_BYTES, from its Content-Length before it is read
  (or once that many bytes were read, for a body without one);
* 415 — not `message/rfc822`;
* 401 — unsigned, a bad signature (compared in constant time), or a timestamp older than
  LEV_INBOUND_EMAIL_MAX_AGE_SECONDS or ahead of this server's clock (a replay);
* 400 — the body is not a readable email message;
* 201 — kept: {"received": true, "duplicate": false, "status": "matched" | "unmatched", "id": n};
* 200 — already kept (the same Message-ID): {"received": true, "duplicate": true, ...}, nothing twice.

A plain Django view (no DRF): the body is the signed bytes, read once and bounded here.
"""

from __future__ import annotations

import hashlib
import hmac
import time

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from deals.outreach.inbound import inbound_receive
from lev.errors import (
    ApplicationError,
    AuthenticationFailed,
    MethodNotAllowed,
    UpstreamUnavailable,
    ValidationFailed,
)
from lev.middleware import error_response

PATH = "/api/v1/inbound-email"  # registered with lev.endpoints (its own body bound): DealsConfig.ready()
CONTENT_TYPE = "message/rfc822"
TIMESTAMP_HEADER = "HTTP_X_LEV_TIMESTAMP"
SIGNATURE_HEADER = "HTTP_X_LEV_SIGNATURE"


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The X-Lev-Signature value of `body` sent at `timestamp` (the relay's side too)."""
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def _refused(error: ApplicationError, status: int | None = None) -> HttpResponse:
    if status is not None:
        error.http_status = status
    return error_response(error)


def _unauthorized(why: str) -> HttpResponse:
    return _refused(AuthenticationFailed(f"Unauthorized: {why}"))


def _too_large(limit: int) -> HttpResponse:
    return _refused(ValidationFailed({"body": [f"must be at most {limit} bytes"]},
                                     message=f"Validation failed: the message is larger than {limit} bytes"), 413)


def body_limit() -> int:
    return settings.LEV_INBOUND_EMAIL_MAX_BYTES


def unreadable_body(problem: str) -> bytes:
    """The body answering a request whose body the server could not read (lev.endpoints)."""
    return error_response(ValidationFailed({"body": [problem]})).content


def _timestamp_problem(value: str) -> str | None:
    if not value.isascii() or not value.isdigit() or len(value) > 12:
        return "X-Lev-Timestamp must be the signing time in Unix seconds."
    age = time.time() - int(value)
    if age > settings.LEV_INBOUND_EMAIL_MAX_AGE_SECONDS:
        return "the signature is too old (a replay?); sign each delivery when it is sent."
    if age < -settings.LEV_INBOUND_EMAIL_SKEW_SECONDS:
        return "the signature's timestamp is in the future; check the relay's clock."
    return None


@csrf_exempt
def inbound_email(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _refused(MethodNotAllowed("Method not allowed: send the message with POST.", allow="POST"))
    secret = settings.LEV_INBOUND_EMAIL_SECRET
    if not secret:
        return _refused(UpstreamUnavailable("Service unavailable: inbound email is not configured on this site "
                                            "(no shared secret); keep the message and retry later."))
    limit = settings.LEV_INBOUND_EMAIL_MAX_BYTES
    length = request.META.get("CONTENT_LENGTH") or ""
    if length.isdigit() and int(length) > limit:
        return _too_large(limit)  # before a byte of it is read
    if request.content_type.lower() != CONTENT_TYPE:
        return _refused(ValidationFailed({"Content-Type": [f"must be {CONTENT_TYPE}"]}), 415)
    timestamp = request.META.get(TIMESTAMP_HEADER, "").strip()
    signature = request.META.get(SIGNATURE_HEADER, "").strip()
    if not timestamp or not signature:
        return _unauthorized("the message is not signed (X-Lev-Timestamp and X-Lev-Signature).")
    if (problem := _timestamp_problem(timestamp)) is not None:
        return _unauthorized(problem)
    body = request.read(limit + 1)
    if len(body) > limit:
        return _too_large(limit)
    expected = sign(secret, timestamp, body)
    if not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
        return _unauthorized("the signature does not match the message.")
    try:
        received = inbound_receive(raw=body)
    except ValidationFailed as error:
        return _refused(error)
    inbound = received.inbound
    answer = {"received": True, "duplicate": not received.created, "status": inbound.status, "id": inbound.pk}
    if not received.created:
        answer["message"] = "Already received: this message was kept before; nothing was done twice."
    return JsonResponse(answer, status=201 if received.created else 200)
