"""Delivery of the outbox (OutboundEmail rows) through Django's email framework.

`deliver_due` claims the emails that are due — queued, or retrying whose `next_attempt_at` has come —
with `SELECT … FOR UPDATE SKIP LOCKED` (two workers never claim the same row) and moves them to
`sending` (attempts + 1; while `sending`, `next_attempt_at` holds the moment the attempt began) in a
short transaction of its own. It then sends them one by one over one connection of the configured
backend (SMTP, or on the embedded default the outbox-only backend of lev.mail), and records each
outcome at once:

* accepted by the server → `sent` (sent_at) and an `emailed` event on the placement;
* the server refused the recipient for good (a 5xx answer to RCPT TO, SMTPRecipientsRefused) or the
  message (a 5xx to MAIL FROM or DATA) → `refused`, with a plain `last_error` ("The mail server refused
  the address granite@example.com.");
* the server cannot be reached (connection refused, timed out, dropped) or answered 4xx (try later)
  → `retrying`, `next_attempt_at` = now + LEV_OUTREACH_RETRY_BASE_SECONDS * 2^(attempts - 1); after
  LEV_OUTREACH_MAX_ATTEMPTS attempts → `refused` ("… could not be delivered after 5 attempts …");
* a header that cannot be written (a line break in it: Django raises BadHeaderError) → `refused` for
  that email alone, never an error of the run.

A worker killed mid-send leaves its emails `sending`. SMTP has no way to ask whether a message was
accepted before the connection dropped, so such an email is never resent blindly (that could email the
lender twice): `sweep_stale` marks an email `sending` for longer than LEV_OUTREACH_STALE_SECONDS
`refused` with "Delivery uncertain", which the team sees in the outbox and can resend on purpose (a
refused teaser does not count as sent: uniq_teaser_per_placement leaves it out).
"""

from __future__ import annotations

import datetime as dt
import logging
import smtplib
from collections.abc import Iterable

from django.conf import settings
from django.core.mail import BadHeaderError, EmailMultiAlternatives, get_connection
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from deals.outreach import templates
from deals.outreach.models import OutboundEmail, OutreachEvent, OutreachSend
from deals.outreach.services import reply_address

logger = logging.getLogger(__name__)

Status = OutboundEmail.Status
DUE = (Status.QUEUED, Status.RETRYING)
BATCH = 100  # emails claimed (and sent over one connection) at a time
UNCERTAIN = ("Delivery uncertain: sending stopped part way (the worker stopped), so the mail server may or may "
             "not have it. Check with the lender, then resend if needed.")
NOT_COMPOSED = "The email could not be written: its subject or a name had a line break in it."


class _Retry(Exception):
    """A failure that may pass: try this email again later."""


class _Refused(Exception):
    """A failure for good: this email is not tried again."""


def _explain(exc: BaseException, address: str) -> Exception:
    """A plain sentence for what the mail server (or the network) said, as _Retry or _Refused."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        code = min((answer[0] for answer in exc.recipients.values()), default=550)
        if 400 <= code < 500:
            return _Retry(f"The mail server asked to try the address {address} later (code {code}).")
        return _Refused(f"The mail server refused the address {address}.")
    if isinstance(exc, smtplib.SMTPResponseException):  # MAIL FROM, DATA, … answered with an error code
        code = exc.smtp_code
        if 400 <= code < 500:
            return _Retry(f"The mail server asked to try later (code {code}).")
        if code >= 500:
            return _Refused(f"The mail server refused the message (code {code}).")
    if isinstance(exc, smtplib.SMTPServerDisconnected):
        return _Retry("The mail server could not be reached.")
    if isinstance(exc, smtplib.SMTPException):
        return _Retry("The mail server did not accept the message.")
    if isinstance(exc, OSError):  # refused, timed out, reset, no such host
        return _Retry("The mail server could not be reached.")
    raise exc


def _unreachable(exc: BaseException) -> bool:
    """The server itself could not be reached or dropped the connection (not an answer it gave)."""
    # smtplib's exceptions are OSErrors too: only the network's own, and a dropped connection, count.
    return isinstance(exc, smtplib.SMTPServerDisconnected) or (
        isinstance(exc, OSError) and not isinstance(exc, smtplib.SMTPException))


def compose(email: OutboundEmail, connection) -> EmailMultiAlternatives:
    """The message of an outbox row: From the site, To the contact, Reply-To the placement's reply
    address, the row's own Message-ID (a retry sends the same message). Line breaks in the subject and
    the name are removed here again (they were refused when saved; this is the last guard)."""
    name = templates.one_line(email.to_name).replace('"', "'")
    to = f'"{name}" <{email.to_address}>' if name else email.to_address
    return EmailMultiAlternatives(
        subject=templates.one_line(email.subject), body=email.body, from_email=settings.DEFAULT_FROM_EMAIL,
        to=[to], reply_to=[reply_address(email.reply_tag)], connection=connection,
        headers={"Message-ID": email.message_id, "Auto-Submitted": "no"},
    )


def _claim(*, send_id: int | None, now: dt.datetime, limit: int) -> list[OutboundEmail]:
    due = Q(status=Status.QUEUED) | Q(status=Status.RETRYING, next_attempt_at__lte=now)
    with transaction.atomic():
        rows = OutboundEmail.objects.select_for_update(skip_locked=True).filter(due)
        if send_id is not None:
            rows = rows.filter(send_id=send_id)
        ids = list(rows.order_by("id").values_list("id", flat=True)[:limit])
        if not ids:
            return []
        # Conditional: on SQLite (no row locks) a second claimer finds them no longer due.
        for_me = OutboundEmail.objects.filter(Q(pk__in=ids) & due)
        claimed = list(for_me.values_list("id", "attempts"))
        for pk, attempts in claimed:
            OutboundEmail.objects.filter(pk=pk).update(status=Status.SENDING, attempts=attempts + 1,
                                                       next_attempt_at=now)
    return list(OutboundEmail.objects.filter(pk__in=[pk for pk, _ in claimed], status=Status.SENDING)
                .select_related("placement").order_by("id"))


def _backoff(attempts: int) -> dt.timedelta:
    return dt.timedelta(seconds=settings.LEV_OUTREACH_RETRY_BASE_SECONDS * 2 ** max(attempts - 1, 0))


def _record(email: OutboundEmail, outcome: Exception | None, now: dt.datetime) -> None:
    """Write the email's outcome (only if it is still this attempt's: status sending)."""
    mine = OutboundEmail.objects.filter(pk=email.pk, status=Status.SENDING)
    if outcome is None:
        with transaction.atomic():
            if mine.update(status=Status.SENT, sent_at=now, next_attempt_at=None, last_error=""):
                OutreachEvent.objects.create(account_id=email.account_id, deal_id=email.placement.deal_id,
                                             placement_id=email.placement_id, kind="emailed", email=email, at=now)
        return
    message = str(outcome)[:500]
    if isinstance(outcome, _Retry) and email.attempts < settings.LEV_OUTREACH_MAX_ATTEMPTS:
        mine.update(status=Status.RETRYING, next_attempt_at=now + _backoff(email.attempts), last_error=message)
        return
    if isinstance(outcome, _Retry):
        message = (f"Not delivered after {email.attempts} attempts: {message} Check the address and the mail "
                   "settings, then resend.")[:500]
    with transaction.atomic():
        if mine.update(status=Status.REFUSED, next_attempt_at=None, last_error=message):
            OutreachEvent.objects.create(account_id=email.account_id, deal_id=email.placement.deal_id,
                                         placement_id=email.placement_id, kind="refused", email=email, at=now)


def _send_batch(emails: list[OutboundEmail]) -> None:
    connection = get_connection(fail_silently=False)
    unreachable: Exception | None = None
    try:
        for email in emails:
            if unreachable is not None:  # the server could not be reached for this batch: all retry later
                _record(email, unreachable, timezone.now())
                continue
            try:
                message = compose(email, connection)
                message.message()  # writes the headers: a line break in one raises BadHeaderError here
            except (BadHeaderError, ValueError):
                _record(email, _Refused(NOT_COMPOSED), timezone.now())
                continue
            try:
                connection.open()
                message.send()
            except Exception as exc:
                outcome = _explain(exc, email.to_address)
                if _unreachable(exc):
                    unreachable = outcome  # no use trying the rest of the batch now
                if not isinstance(exc, smtplib.SMTPRecipientsRefused):  # after a refused RCPT it is still good
                    _close(connection)
                _record(email, outcome, timezone.now())
                continue
            _record(email, None, timezone.now())
    finally:
        _close(connection)


def _close(connection) -> None:
    try:
        connection.close()
    except Exception:  # a connection already dropped: nothing to close
        logger.debug("closing the mail connection failed", exc_info=True)


def deliver_due(*, send_id: int | None = None, limit: int | None = None) -> int:
    """Send the due emails (of one send, or all), in batches; returns how many were attempted."""
    attempted = 0
    while True:
        batch = _claim(send_id=send_id, now=timezone.now(), limit=BATCH if limit is None else min(BATCH, limit))
        if not batch:
            break
        _send_batch(batch)
        attempted += len(batch)
        sends_refresh(send_ids={e.send_id for e in batch if e.send_id})
        if limit is not None and attempted >= limit:
            break
    return attempted


def sweep_stale(*, now: dt.datetime | None = None) -> int:
    """Mark emails `sending` for longer than LEV_OUTREACH_STALE_SECONDS refused, "delivery uncertain"
    (the module docstring says why they are not resent). Returns how many."""
    now = now or timezone.now()
    bound = now - dt.timedelta(seconds=settings.LEV_OUTREACH_STALE_SECONDS)
    stale = list(OutboundEmail.objects.filter(status=Status.SENDING, next_attempt_at__lt=bound)
                 .select_related("placement"))
    for email in stale:
        _record(email, _Refused(UNCERTAIN), now)
    sends_refresh(send_ids={e.send_id for e in stale if e.send_id})
    return len(stale)


def sends_refresh(*, send_ids: Iterable[int]) -> None:
    """Each send's status from its emails: running while any is queued, sending or retrying; else done."""
    ids = list(send_ids)
    if not ids:
        return
    open_counts = dict(OutboundEmail.objects.filter(send_id__in=ids, status__in=(*DUE, Status.SENDING))
                       .values_list("send_id").annotate(n=Count("id")).values_list("send_id", "n"))
    now = timezone.now()
    for send_id in ids:
        if open_counts.get(send_id):
            OutreachSend.objects.filter(pk=send_id, status=OutreachSend.Status.QUEUED).update(
                status=OutreachSend.Status.RUNNING)
        else:
            OutreachSend.objects.filter(pk=send_id).exclude(status=OutreachSend.Status.DONE).update(
                status=OutreachSend.Status.DONE, finished_at=now)
