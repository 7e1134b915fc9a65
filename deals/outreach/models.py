"""Outreach: a deal taken to its lenders by email (docs/outreach.md).

Imported by `deals.models`, so models of the `deals` app. Each is the account's own: another account
never reaches its templates, packages, emails, events or replies.

* OutreachTemplate — the account's words for the teaser and the follow-up (placeholders filled from the
  deal's summary); none saved means Lev's own.
* PackageLink — the deal package of one placement: a page for that lender alone, reached through an
  unguessable token (only its SHA-256 is kept), expiring and revocable, sharing the documents chosen.
* OutreachSend — one "send" of a deal's placements (or a follow-up to the silent ones): a job with
  progress; its emails are its rows.
* OutboundEmail — one email to one lender contact: the outbox. Sent at most once (its status moves
  queued → sending → sent under a row lock); failures are per email, retried with backoff, or refused
  for good (an address the server refused). Its reply address identifies the placement.
* OutreachEvent — what happened on the lender's side, recorded on the placement and shown on the deal's
  timeline: emailed, opened the package, downloaded a document, replied.
* InboundEmail — a reply received (the inbound endpoint or an IMAP mailbox): matched to its placement by
  the reply address, or kept for the team to assign; never dropped.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone
from encrypted_fields.fields import EncryptedCharField

from lev import limits
from lev.enums import OUTREACH_EVENT_KINDS, OUTREACH_KINDS, choices


class OutreachTemplate(models.Model):
    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="outreach_templates")
    kind = models.CharField(max_length=12, choices=choices(OUTREACH_KINDS))
    subject = models.CharField(max_length=limits.EMAIL_SUBJECT_MAX)
    body = models.TextField(max_length=limits.EMAIL_BODY_MAX)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["account", "kind"]
        constraints = [
            models.UniqueConstraint(fields=["account", "kind"], name="uniq_outreach_template_kind"),
            models.CheckConstraint(condition=Q(kind__in=OUTREACH_KINDS), name="outreach_template_kind_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} template"


class PackageLink(models.Model):
    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="+")
    placement = models.ForeignKey("deals.Placement", on_delete=models.CASCADE, related_name="package_links")
    # SHA-256 (hex) of the token in the lender's link; the token itself is never stored.
    token_hash = models.CharField(max_length=64, unique=True)
    documents = models.ManyToManyField("deals.Document", blank=True, related_name="package_links")
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    first_opened_at = models.DateTimeField(null=True, blank=True)
    last_opened_at = models.DateTimeField(null=True, blank=True)
    opens = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["placement", "-created_at"], name="package_link_placement")]

    def __str__(self) -> str:
        return f"Deal package for placement {self.placement_id}"


class OutreachSend(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Sending"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="+")
    deal = models.ForeignKey("deals.Deal", on_delete=models.CASCADE, related_name="outreach_sends")
    kind = models.CharField(max_length=12, choices=choices(OUTREACH_KINDS))
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    queued_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["deal", "-created_at"], name="outreach_send_deal")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of {self.deal_id} ({self.get_status_display().lower()})"


class OutboundEmail(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        SENDING = "sending", "Sending"
        SENT = "sent", "Sent"
        RETRYING = "retrying", "Will retry"
        REFUSED = "refused", "Refused"  # for good: the address was refused, or the retries ran out

    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="+")
    send = models.ForeignKey(OutreachSend, null=True, blank=True, on_delete=models.SET_NULL, related_name="emails")
    placement = models.ForeignKey("deals.Placement", on_delete=models.CASCADE, related_name="emails")
    package = models.ForeignKey(PackageLink, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    kind = models.CharField(max_length=12, choices=choices(OUTREACH_KINDS))
    to_name = models.CharField(max_length=limits.CONTACT_NAME_MAX, blank=True, default="")
    to_address = models.CharField(max_length=limits.EMAIL_MAX)
    subject = models.CharField(max_length=limits.EMAIL_SUBJECT_MAX)
    body = models.TextField()
    # <...@domain>, made once: a retry sends the same message, and a reply's In-Reply-To names it.
    message_id = models.CharField(max_length=255, unique=True)
    # The local part's tag of the reply address (reply+<tag>@LEV_REPLY_DOMAIN): names this placement.
    reply_tag = models.CharField(max_length=64, unique=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    # Retrying: when the next attempt is due. Sending: when this attempt began (deals.outreach.mail's stale bound).
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True, default="")  # a plain sentence, no internals
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # One teaser per placement: sending the deal twice emails nobody twice (a refused one may be
            # sent again, to a corrected address).
            models.UniqueConstraint(fields=["placement"], condition=Q(kind="teaser") & ~Q(status="refused"),
                                    name="uniq_teaser_per_placement"),
        ]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="outbound_email_due"),
            models.Index(fields=["account", "-created_at"], name="outbound_email_account"),
        ]

    def __str__(self) -> str:
        return f"{self.subject} to {self.to_address}"


class OutreachEvent(models.Model):
    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="+")
    deal = models.ForeignKey("deals.Deal", on_delete=models.CASCADE, related_name="outreach_events")
    placement = models.ForeignKey("deals.Placement", on_delete=models.CASCADE, related_name="outreach_events")
    kind = models.CharField(max_length=12, choices=choices(OUTREACH_EVENT_KINDS))
    document = models.ForeignKey("deals.Document", null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="+")
    email = models.ForeignKey(OutboundEmail, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=OUTREACH_EVENT_KINDS), name="outreach_event_kind_valid"),
        ]
        indexes = [
            models.Index(fields=["deal", "at"], name="outreach_event_deal"),
            models.Index(fields=["placement", "kind"], name="outreach_event_placement"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} on placement {self.placement_id}"


def _inbound_storage():
    # The documents' storage as it is configured now (deals.documents.models.DocumentsStorage).
    from deals.documents.models import documents_storage

    return documents_storage()


def _inbound_upload_to(inbound: InboundEmail, filename: str) -> str:
    # A random name in the private documents storage; never served from a URL.
    return f"inbound/{uuid.uuid4().hex}.eml"


class InboundEmail(models.Model):
    class Status(models.TextChoices):
        MATCHED = "matched", "On its placement"
        UNMATCHED = "unmatched", "To assign"  # no placement named, or a sender who is not the lender's
        ASSIGNED = "assigned", "Assigned"

    # Null only when the reply names no placement at all: then only the site's operators see it.
    account = models.ForeignKey("accounts.Account", null=True, blank=True, on_delete=models.CASCADE,
                                related_name="+")
    placement = models.ForeignKey("deals.Placement", null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="replies")
    status = models.CharField(max_length=10, choices=Status.choices)
    # Why it is to assign, in a plain sentence ("The sender is not the lender's contact.").
    reason = models.CharField(max_length=200, blank=True, default="")
    message_id = models.CharField(max_length=255, unique=True)
    from_address = models.CharField(max_length=limits.EMAIL_MAX)
    from_name = models.CharField(max_length=limits.CONTACT_NAME_MAX, blank=True, default="")
    to_address = models.CharField(max_length=limits.EMAIL_MAX, blank=True, default="")
    subject = models.CharField(max_length=limits.EMAIL_SUBJECT_MAX, blank=True, default="")
    body = models.TextField(blank=True, default="")
    # The attachments kept as the deal's documents (or, unmatched, as their names until assigned).
    attachments = models.JSONField(default=list, blank=True)
    note = models.ForeignKey("deals.Note", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The message as received, kept while it is to assign (its attachments become documents when it is
    # assigned); a private file, read only by deals.outreach.inbound.
    raw = models.FileField(storage=_inbound_storage, upload_to=_inbound_upload_to, max_length=255, blank=True)
    received_at = models.DateTimeField(default=timezone.now)
    assigned_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    assigned_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-received_at", "-id"]
        verbose_name = "lender reply"
        verbose_name_plural = "lender replies"
        indexes = [models.Index(fields=["account", "status", "-received_at"], name="inbound_email_account")]

    def __str__(self) -> str:
        return f"{self.subject or '(no subject)'} from {self.from_address}"


class AccountMailbox(models.Model):
    """An account's own IMAP mailbox for its lenders' replies (deals.outreach.imap), where the account
    prefers one to the site's: beat polls it as it polls the site's. Its replies are the account's alone:
    one that names another account's placement is kept for this account to assign, never applied there.
    The password is kept encrypted (django-fernet-encrypted-fields: a key derived from SECRET_KEY and
    SALT_KEY) and is never shown again once saved."""

    account = models.OneToOneField("accounts.Account", on_delete=models.CASCADE, related_name="mailbox")
    host = models.CharField(max_length=255, help_text="The IMAP server, e.g. imap.example.com.")
    port = models.PositiveIntegerField(default=993, validators=[MinValueValidator(1), MaxValueValidator(65535)])
    use_ssl = models.BooleanField("Use TLS", default=True, help_text="IMAP over TLS (port 993); off for plain IMAP.")
    username = models.CharField(max_length=255)
    password = EncryptedCharField(max_length=255)
    folder = models.CharField(max_length=255, default="INBOX")
    enabled = models.BooleanField(default=True, help_text="Checked for new replies every minute or so while on.")
    # What the last poll did, in a sentence a person can act on ("Signed in and read 3 messages.",
    # "The server refused the sign-in: check the username and password.").
    last_polled_at = models.DateTimeField(null=True, blank=True)
    last_result = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "replies mailbox"
        verbose_name_plural = "replies mailboxes"

    def __str__(self) -> str:
        return f"{self.username} at {self.host}"
