"""Writes of outreach: the account's templates, a send of a deal's placements (the teaser, or a follow-up
to the silent ones), the deal package's links and what lenders do with them. Keyword-only and atomic;
callers (REST views, the admin, MCP through REST) pass the account's own records.

A send is queued here and delivered by the task (deals.outreach.mail, deals.outreach.tasks): this module
writes the outbox rows, one per placement with an address, each with its own package link, Message-ID
and reply tag, in bulk (50 lenders in a few queries), and moves the draft placements to `sent` through
the placements workflow (deals.placements.services.placements_mark_sent: their history and the deal's
timeline stay right). Nothing is sent twice: the deal's row lock orders two sends of one deal, each
placement with a teaser not refused is reported "already sent", and the database's
uniq_teaser_per_placement holds the same rule for a write that skipped the lock.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re
import secrets
from dataclasses import dataclass, field
from email.utils import make_msgid
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from deals.companies.models import Contact
from deals.documents.models import Document
from deals.models import Deal, DealFinancials, DealProperty
from deals.outreach import templates
from deals.outreach.models import (
    OutboundEmail,
    OutreachEvent,
    OutreachSend,
    OutreachTemplate,
    PackageLink,
)
from deals.placements import services as placement_services
from deals.placements.errors import ArchivedDealNotPlaceable
from deals.placements.models import Placement
from deals.services import _lock_deal
from lev import limits
from lev.accounts.models import Account
from lev.celery_app import app as celery_app
from lev.errors import Conflict, ErrorCode, NotFound, ValidationFailed
from lev.outages import is_dependency_outage, report_outage

logger = logging.getLogger(__name__)

Status = OutboundEmail.Status
# The tasks, sent by their names (deals.outreach.tasks).
DELIVER_TASK = "deals.tasks.deliver_outreach"
DELIVER_DUE_TASK = "deals.tasks.deliver_due_outreach"
# The statuses a placement may be emailed its teaser in (a sent one was perhaps only marked sent by hand).
TEASER_STATUSES = ("draft", "sent")
_ADDRESS = re.compile(limits.EMAIL_PATTERN)
TAG_BYTES = 16  # the reply tag: 128 random bits, lower-case hex (an address's local part ignores case)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def package_url(token: str) -> str:
    return f"{settings.LEV_PUBLIC_BASE_URL}/p/{token}/"


def reply_address(tag: str) -> str:
    return f"reply+{tag}@{settings.LEV_REPLY_DOMAIN}"


# --- templates --------------------------------------------------------------------------------------
def template_for(*, account: Account, kind: str) -> tuple[str, str, bool]:
    """(subject, body, saved): the account's template of `kind`, or Lev's own (saved False)."""
    saved = OutreachTemplate.objects.filter(account=account, kind=kind).first()
    if saved is not None:
        return saved.subject, saved.body, True
    subject, body = templates.DEFAULTS[kind]
    return subject, body, False


@transaction.atomic
def template_save(*, account: Account, kind: str, subject: str, body: str, user=None) -> OutreachTemplate:
    """Save the account's template of `kind` (replacing the one saved). Refused (VALIDATION_ERROR): a
    subject with a line break, an unknown placeholder."""
    templates.check_template(subject=subject, body=body)
    found, _created = OutreachTemplate.objects.update_or_create(
        account=account, kind=kind,
        defaults={"subject": subject, "body": body, "updated_by": user if getattr(user, "pk", None) else None})
    return found


@transaction.atomic
def template_reset(*, account: Account, kind: str) -> None:
    """Forget the account's template of `kind`: Lev's own is used again."""
    OutreachTemplate.objects.filter(account=account, kind=kind).delete()


# --- sending ----------------------------------------------------------------------------------------
@dataclass
class SendResult:
    """What one send queued: the send (its emails are its rows), and each placement left out with the
    error contract's code and a plain message ("already sent", "no email address")."""

    send: OutreachSend
    queued: list[OutboundEmail] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)


def _recipient(placement: Placement, contacts: dict[int, Contact]) -> tuple[str, str]:
    """(name, address) the placement is emailed at: the address written on it, else its contact's, else
    the account's first lender contact at its lender with an address."""
    if placement.contact_email:
        return placement.contact_name or (placement.contact.name if placement.contact_id else ""), \
            placement.contact_email
    if placement.contact_id and placement.contact.email:
        return placement.contact.name, placement.contact.email
    contact = contacts.get(placement.lender_id)
    if contact is not None:
        return contact.name, contact.email
    return "", ""


def _documents(deal: Deal, document_ids: list[int]) -> list[Document]:
    wanted = list(dict.fromkeys(document_ids))
    found = {d.pk: d for d in Document.objects.filter(deal=deal, account_id=deal.account_id, pk__in=wanted,
                                                       deleted_at__isnull=True, current__isnull=False)}
    for document_id in wanted:
        if document_id not in found:
            raise NotFound("Document", document_id)
    return [found[i] for i in wanted]


def _figures(deal: Deal) -> dict[str, str]:
    return templates.deal_figures(deal=deal, financials=DealFinancials.objects.filter(deal=deal).first(),
                                  properties=list(DealProperty.objects.filter(deal=deal).order_by("id")))


def _skip(placement: Placement, code: str, message: str) -> dict[str, Any]:
    return {"placement_id": placement.pk, "lender_id": placement.lender_id, "lender_name": placement.lender.name,
            "code": code, "message": message}


def _sender_name(user) -> str:
    if user is None or not getattr(user, "pk", None):
        return ""
    return templates.one_line(user.get_full_name() or user.get_username())


@dataclass
class Plan:
    """Who a send would email (placement, name, address), who it would not and why, what it would share."""

    deal: Deal
    kind: str
    recipients: list[tuple[Placement, str, str]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    documents: list[Document] = field(default_factory=list)


def outreach_plan(*, deal: Deal, placements: list[Placement], kind: str = "teaser",
                  documents: list[int] | None = None) -> Plan:
    """What `outreach_send` would do, writing nothing (the MCP confirmation names the lenders and the
    documents from it). Raises as outreach_send does for input refused whole."""
    if kind not in ("teaser", "follow_up"):
        raise ValidationFailed({"kind": ["must be teaser or follow_up"]})
    if deal.archived:
        raise ArchivedDealNotPlaceable(deal)  # as placing it is refused: BUSINESS_RULE
    wanted = list(dict.fromkeys(p.pk for p in placements))
    rows = {p.pk: p for p in Placement.objects.filter(deal=deal, pk__in=wanted).select_related("lender", "contact")}
    for placement_id in wanted:
        if placement_id not in rows:
            raise NotFound("Placement", placement_id)
    plan = Plan(deal=deal, kind=kind, documents=_documents(deal, list(documents or [])))
    contacts: dict[int, Contact] = {}
    lender_ids = {p.lender_id for p in rows.values()}
    for contact in Contact.objects.filter(account_id=deal.account_id, lender_id__in=lender_ids).exclude(
            email="").order_by("id"):
        contacts.setdefault(contact.lender_id, contact)
    already = set(OutboundEmail.objects.filter(placement_id__in=wanted, kind="teaser")
                  .exclude(status=Status.REFUSED).values_list("placement_id", flat=True))
    # A follow-up is not sent again within LEV_OUTREACH_FOLLOW_UP_GAP_HOURS of the last (a second click).
    gap = timezone.now() - dt.timedelta(hours=settings.LEV_OUTREACH_FOLLOW_UP_GAP_HOURS)
    followed: set[int] = set()
    if kind == "follow_up":
        followed = set(OutboundEmail.objects.filter(placement_id__in=wanted, kind="follow_up", created_at__gte=gap)
                       .exclude(status=Status.REFUSED).values_list("placement_id", flat=True))
    for placement_id in wanted:
        placement = rows[placement_id]
        lender = placement.lender.name
        if kind == "teaser" and placement_id in already:
            plan.skipped.append(_skip(placement, ErrorCode.CONFLICT,
                                      f"Already sent: {lender} was emailed this deal's teaser."))
            continue
        if kind == "teaser" and placement.status not in TEASER_STATUSES:
            plan.skipped.append(_skip(placement, ErrorCode.BUSINESS_RULE,
                                      f"Not sent: the placement with {lender} is "
                                      f"{placement.get_status_display().lower()}; only draft or sent ones are "
                                      "emailed."))
            continue
        if kind == "follow_up" and placement_id in followed:
            plan.skipped.append(_skip(placement, ErrorCode.CONFLICT,
                                      f"Already followed up: {lender} was sent a follow-up in the last "
                                      f"{settings.LEV_OUTREACH_FOLLOW_UP_GAP_HOURS} hours."))
            continue
        if kind == "follow_up" and (placement.status != "sent" or placement.first_response_at is not None):
            plan.skipped.append(_skip(placement, ErrorCode.BUSINESS_RULE,
                                      f"Not followed up: {lender} has answered or the placement is no longer "
                                      "waiting."))
            continue
        name, address = _recipient(placement, contacts)
        address = address.strip()
        if not address:
            plan.skipped.append(_skip(placement, ErrorCode.VALIDATION_ERROR,
                                      f"No email address: add an email to the contact at {lender}."))
            continue
        if not _ADDRESS.match(address) or templates.one_line(address) != address:
            plan.skipped.append(_skip(placement, ErrorCode.VALIDATION_ERROR,
                                      f"Not sent: the address of the contact at {lender} is not a valid email "
                                      "address."))
            continue
        plan.recipients.append((placement, templates.one_line(name), address))
    return plan


@transaction.atomic
def outreach_send(*, deal: Deal, placements: list[Placement], user=None, kind: str = "teaser",
                  documents: list[int] | None = None, expires_in_days: int | None = None) -> SendResult:
    """Queue `kind` (teaser or follow_up) to each of the deal's `placements` whose lender contact has an
    email address, each with a package link of its own sharing `documents` (ids of the deal's documents)
    for `expires_in_days`. The delivery task runs once this commits.

    Left out and reported (`skipped`), the others queued all the same: a placement that already had its
    teaser (CONFLICT "already sent"), one whose status takes no email (BUSINESS_RULE), one without an
    address (VALIDATION_ERROR). Refused whole: a placement of another deal or account (NOT_FOUND), a
    document not the deal's (NOT_FOUND), an archived deal."""
    days = settings.LEV_PACKAGE_EXPIRES_DAYS if expires_in_days is None else expires_in_days
    if not 1 <= days <= limits.PACKAGE_EXPIRES_DAYS_MAX:
        raise ValidationFailed({"expires_in_days": [f"must be between 1 and {limits.PACKAGE_EXPIRES_DAYS_MAX}"]})
    _lock_deal(deal)  # two sends of one deal take turns: the second sees what the first queued
    plan = outreach_plan(deal=deal, placements=placements, kind=kind, documents=documents)
    subject_t, body_t, _saved = template_for(account=deal.account, kind=kind)
    figures = _figures(deal)
    now = timezone.now()
    send = OutreachSend.objects.create(account_id=deal.account_id, deal=deal, kind=kind, created_by=_user(user),
                                       created_at=now, queued_at=now)
    result = SendResult(send=send, skipped=plan.skipped)
    expires = now + dt.timedelta(days=days)
    domain = settings.LEV_REPLY_DOMAIN
    links: list[PackageLink] = []
    emails: list[OutboundEmail] = []
    common = _common_values(deal, user, expires)
    for placement, name, address in plan.recipients:
        token = secrets.token_urlsafe(32)
        link = PackageLink(account_id=deal.account_id, placement=placement, token_hash=token_hash(token),
                           expires_at=expires, created_by=_user(user), created_at=now)
        links.append(link)
        subject, body = _compose(subject_t, body_t, {**figures, **common, **_recipient_values(
            placement, name, package_url(token))})
        emails.append(OutboundEmail(
            account_id=deal.account_id, send=send, placement=placement, package=link, kind=kind,
            to_name=name[: limits.CONTACT_NAME_MAX], to_address=address, subject=subject, body=body,
            message_id=make_msgid(domain=domain), reply_tag=secrets.token_hex(TAG_BYTES),
            status=Status.QUEUED, created_at=now,
        ))
    try:
        with transaction.atomic():
            PackageLink.objects.bulk_create(links)
            for email in emails:
                email.package_id = email.package.pk
            if plan.documents and links:
                through = PackageLink.documents.through
                through.objects.bulk_create([through(packagelink_id=link.pk, document_id=document.pk)
                                             for link in links for document in plan.documents])
            result.queued = OutboundEmail.objects.bulk_create(emails)
    except IntegrityError:  # only a write that skipped the deal lock could get here
        raise Conflict(f"deal {deal.pk} is being sent by another request; send again to see what is left") from None
    send.total = len(result.queued)
    if not result.queued:
        send.status, send.finished_at = OutreachSend.Status.DONE, now
    send.save(update_fields=["total", "status", "finished_at"])
    if kind == "teaser" and result.queued:
        placement_services.placements_mark_sent(deal=deal, placements=[e.placement for e in result.queued], user=user)
    if result.queued:
        send_id = send.pk
        transaction.on_commit(lambda: enqueue_delivery(send_id))
    return result


def _user(user):
    return user if getattr(user, "pk", None) else None


def _common_values(deal: Deal, user, expires: dt.datetime) -> dict[str, str]:
    return {"sender_name": _sender_name(user), "account_name": templates.one_line(deal.account.name),
            "expires_on": f"{expires:%B} {expires.day}, {expires.year}"}


def _recipient_values(placement: Placement, name: str, link: str) -> dict[str, str]:
    return {"lender_name": templates.one_line(placement.lender.name), "contact_name": name or "there",
            "package_link": link}


def _compose(subject_t: str, body_t: str, values: dict[str, str]) -> tuple[str, str]:
    return templates.one_line(templates.fill(subject_t, values))[: limits.EMAIL_SUBJECT_MAX], \
        templates.fill(body_t, values)


# What a package link looks like in a preview: no token is made until the send.
PREVIEW_LINK = "(the lender's own link to the deal package)"


def outreach_preview_email(*, plan: Plan, user=None, expires_in_days: int | None = None) -> tuple[str, str] | None:
    """(subject, body) of the plan's first email as the send would write it — the account's template
    filled from the deal — its package link a placeholder; None when the plan emails no one."""
    if not plan.recipients:
        return None
    placement, name, _address = plan.recipients[0]
    days = settings.LEV_PACKAGE_EXPIRES_DAYS if expires_in_days is None else expires_in_days
    subject_t, body_t, _saved = template_for(account=plan.deal.account, kind=plan.kind)
    values = {**_figures(plan.deal), **_common_values(plan.deal, user, timezone.now() + dt.timedelta(days=days)),
              **_recipient_values(placement, name, PREVIEW_LINK)}
    return _compose(subject_t, body_t, values)


def follow_up_targets(*, deal: Deal) -> list[Placement]:
    """The deal's placements emailed their teaser and not answered: still `sent`, no first response."""
    emailed = OutboundEmail.objects.filter(placement__deal=deal, kind="teaser", status=Status.SENT)
    return list(Placement.objects.filter(deal=deal, status="sent", first_response_at__isnull=True,
                                         pk__in=emailed.values("placement_id")).order_by("id"))


def outreach_follow_up(*, deal: Deal, user=None, documents: list[int] | None = None) -> SendResult:
    """Send the follow-up template to the deal's silent placements (follow_up_targets), through the same
    path as a teaser: an outbox row, a fresh package link each, the same delivery."""
    return outreach_send(deal=deal, placements=follow_up_targets(deal=deal), user=user, kind="follow_up",
                         documents=documents)


def enqueue_delivery(send_id: int) -> None:
    """Hand the send to the delivery task (on commit), by the task's name (deals.outreach.tasks imports
    this module, not the reverse). A broker that cannot be reached is no error of the caller: the emails
    stay queued, and beat's deliver_due_outreach picks them up."""
    try:
        celery_app.tasks[DELIVER_TASK].apply_async((send_id,))
    except Exception as exc:
        if is_dependency_outage(exc):
            report_outage(exc, f"queueing outreach send {send_id}; beat delivers it when the broker is back")
        else:
            logger.exception("Could not queue outreach send %s; beat delivers it later", send_id)


# --- the deal package -------------------------------------------------------------------------------
@transaction.atomic
def package_revoke(*, package: PackageLink) -> PackageLink:
    """Withdraw the package link: its page and downloads answer "withdrawn" (410) from now on. Safe to repeat."""
    if package.revoked_at is None:
        package.revoked_at = timezone.now()
        package.save(update_fields=["revoked_at"])
    return package


def package_opened(*, package: PackageLink) -> None:
    """Count an open of the package page (opens, the latest open) and, the first time, record it on the
    placement (first_opened_at and an `opened` event: the timeline says it once, not at every reload)."""
    now = timezone.now()
    with transaction.atomic():
        PackageLink.objects.filter(pk=package.pk).update(opens=F("opens") + 1, last_opened_at=now)
        first = PackageLink.objects.filter(pk=package.pk, first_opened_at__isnull=True).update(first_opened_at=now)
        if first:
            OutreachEvent.objects.create(account_id=package.account_id, deal_id=package.placement.deal_id,
                                         placement_id=package.placement_id, kind="opened", at=now)


def package_downloaded(*, package: PackageLink, document: Document) -> None:
    OutreachEvent.objects.create(account_id=package.account_id, deal_id=package.placement.deal_id,
                                 placement_id=package.placement_id, kind="downloaded", document=document)


def package_documents_query(package: PackageLink) -> Q:
    """The documents a package may serve: shared in it, the deal's, not removed, with a file."""
    return Q(package_links=package, deal_id=package.placement.deal_id, account_id=package.account_id,
             deleted_at__isnull=True, current__isnull=False)
