"""Replies back: a lender's email read, matched to its placement and applied (docs/outreach.md).

One function receives a reply whatever door it came through (the signed endpoint,
`deals.outreach.inbound_api`; the IMAP mailbox, `deals.outreach.imap`): `inbound_receive(raw=...)`.

* Read with the standard library's `email` package (policy=default), defensively: a body that is not an
  email message (no sender) is refused with a plain sentence, never a traceback.
* Matched by the reply address `reply+<tag>@…` in To, Cc, Delivered-To or X-Original-To (the tag names one
  OutboundEmail, so one placement of one account), else by In-Reply-To / References naming an
  OutboundEmail's Message-ID. The account is the email's: a reply can only land on the account whose
  email it answers.
* Applied only when its sender is the lender's: the address the email went to, the placement's contact
  address, or the address of one of the account's contacts at that lender (exact address, case
  ignored; a colleague's reply is kept "to assign", one click in the admin). Otherwise, or when it names
  no placement, it is kept unmatched with its reason and the raw message, for the team (or, naming no
  account, the site's operators) to assign — never dropped.
* Applying (in one transaction): the placement's first response through the placements workflow (a
  `sent` or `no_response` placement moves to `reviewing`: history and timeline stay right), its text
  as a note of kind "email" on the deal, an OutreachEvent "replied", and its attachments as the deal's
  documents (a refused attachment is listed on the reply, never fails it).
* Idempotent by Message-ID (a message without one is named by its bytes' SHA-256): the same reply twice
  is kept once.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses
from html.parser import HTMLParser
from typing import Any

from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.utils import timezone

from deals.companies.models import Contact
from deals.documents import services as document_services
from deals.notes import services as note_services
from deals.outreach.models import InboundEmail, OutboundEmail, OutreachEvent
from deals.placements import services as placement_services
from deals.placements.models import Placement
from lev import limits
from lev.errors import ApplicationError, Conflict, UpstreamUnavailable, ValidationFailed

logger = logging.getLogger(__name__)

# The local part of a reply address: reply+<tag> (the tag as deals.outreach makes it: letters, digits, - and _).
REPLY_TAG = re.compile(r"^reply\+([A-Za-z0-9_-]{1,64})$", re.IGNORECASE)
ADDRESS_HEADERS = ("to", "cc", "delivered-to", "x-original-to")
MESSAGE_ID = re.compile(r"<[^<>\s]{1,250}>")

NO_PLACEMENT = "The reply names no placement (no reply address or reference of ours)."
NOT_THE_LENDER = "The sender is not the lender's contact."

# Bounds of what one reply may bring (each refused attachment is listed on the reply, with why).
ATTACHMENTS_MAX = 20
ATTACHMENT_MAX_BYTES = 25 * 1024 * 1024  # the endpoint's own bound already holds the whole message
FORWARD_DEPTH_MAX = 3
BODY_MAX_CHARS = 200_000  # text read from the message before trimming (the note keeps NOTE_BODY_MAX)

_CONTROL = re.compile(rf"[{limits.CONTROL_CHARACTERS}\r\n\t\x7f]+")


# --- reading ---------------------------------------------------------------------------------------
@dataclass
class Attachment:
    name: str
    content_type: str
    data: bytes


@dataclass
class Reply:
    message_id: str
    from_address: str
    from_name: str
    subject: str
    text: str
    tags: list[tuple[str, str]]  # (tag, the address it was in), in header order
    references: list[str]
    attachments: list[Attachment] = field(default_factory=list)
    refused: list[dict[str, str]] = field(default_factory=list)  # attachments refused while reading


def unreadable(problem: str) -> ValidationFailed:
    return ValidationFailed({"body": [problem]},
                            message=f"Validation failed: the body is not a readable email message: {problem}")


def _line(value: Any, limit: int) -> str:
    """A header's text on one line, without control characters, at most `limit` characters."""
    return " ".join(_CONTROL.sub(" ", str(value or "")).split())[:limit]


def _message_id(msg: EmailMessage, raw: bytes) -> str:
    found = MESSAGE_ID.findall(str(msg.get("Message-ID", "") or ""))
    if found and len(found[0]) <= 255:
        return found[0]
    # None (or unusable): the message is named by its bytes, so the same message twice is still once.
    return f"<sha256.{hashlib.sha256(raw).hexdigest()}@inbound.invalid>"


def parse_message(raw: bytes) -> Reply:
    """The reply in `raw` (RFC 5322 bytes). ValidationFailed when it cannot be read as an email."""
    if not raw or not raw.strip():
        raise unreadable("it is empty")
    try:
        msg = BytesParser(policy=policy.default).parsebytes(raw)
        senders = getaddresses([str(value) for value in msg.get_all("From", [])])
    except Exception:  # the parser is lenient; a header it still cannot read is the sender's fault
        logger.info("inbound: unreadable message headers", exc_info=True)
        raise unreadable("its headers cannot be read") from None
    sender = next(((name, address) for name, address in senders if "@" in address), None)
    if sender is None:
        raise unreadable("it has no sender (From) address")
    from_name, from_address = sender
    reply = Reply(
        message_id=_message_id(msg, raw),
        from_address=_line(from_address, limits.EMAIL_MAX).lower(),
        from_name=_line(from_name, limits.CONTACT_NAME_MAX),
        subject=_line(_header(msg, "Subject"), limits.EMAIL_SUBJECT_MAX),
        text="",
        tags=_tags(msg),
        references=[ref for header in ("In-Reply-To", "References")
                    for ref in MESSAGE_ID.findall(_header(msg, header))],
    )
    reply.text = _text_of(msg)
    _collect_attachments(msg, reply, depth=0)
    return reply


def _header(msg: EmailMessage, name: str) -> str:
    try:
        return str(msg.get(name, "") or "")
    except Exception:  # a header the parser cannot decode is read as absent
        return ""


def _tags(msg: EmailMessage) -> list[tuple[str, str]]:
    found = []
    for header in ADDRESS_HEADERS:
        values = [_header(msg, header)] if header in ("delivered-to", "x-original-to") else \
            [str(v) for v in msg.get_all(header, [])]
        for _name, address in getaddresses(values):
            local, _, domain = address.rpartition("@")
            match = REPLY_TAG.match(local) if domain else None
            if match:
                found.append((match.group(1), address.lower()))
    return found


def _decoded(part: EmailMessage) -> str:
    try:
        content = part.get_content()
    except (LookupError, ValueError, AssertionError):  # an unknown charset, a broken encoding
        payload = part.get_payload(decode=True) or b""
        content = payload.decode("utf-8", errors="replace")
    return content if isinstance(content, str) else ""


def _text_of(msg: EmailMessage) -> str:
    """The reply's own words: the plain part (else the HTML one as text), the quoted previous message
    trimmed, then the text of any message forwarded in it."""
    try:
        body = msg.get_body(preferencelist=("plain", "html"))
    except Exception:
        body = None
    text = ""
    if body is not None:
        content = _decoded(body)[:BODY_MAX_CHARS]
        text = html_to_text(content) if body.get_content_type() == "text/html" else content
    return trim_quoted(text.replace("\r\n", "\n").replace("\r", "\n"))


class _TextParser(HTMLParser):
    """HTML to plain text: the text nodes, blocks on their own lines; scripts, styles and heads dropped.
    Nothing is rendered or fetched."""

    BLOCKS = frozenset({"p", "div", "br", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote",
                        "table", "ul", "ol", "hr", "pre", "section", "article"})
    SKIPPED = frozenset({"script", "style", "head", "title", "template", "noscript"})

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIPPED:
            self.skipping += 1
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in self.SKIPPED:
            self.skipping = max(0, self.skipping - 1)
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    parser = _TextParser()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # HTMLParser is lenient; keep what was read
        pass
    lines = [" ".join(line.split()) for line in "".join(parser.parts).splitlines()]
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


# Where a reply's quoted previous message starts (the simple cases: Gmail, Apple Mail, Outlook).
_WROTE = re.compile(r"^On\s.{1,300}\swrote:\s*$", re.IGNORECASE | re.DOTALL)
_ORIGINAL = re.compile(r"^(-{2,}\s*Original Message\s*-{2,}|_{10,})\s*$", re.IGNORECASE)
_OUTLOOK_FROM = re.compile(r"^\*?From:\*?\s.+$", re.IGNORECASE)
_OUTLOOK_NEXT = re.compile(r"^\*?(Sent|Date|To|Subject):\*?\s", re.IGNORECASE)
# A forward written inline ("---------- Forwarded message ---------", Apple's "Begin forwarded message:"):
# what follows is the point of the email, never trimmed.
_FORWARDED = re.compile(r"^(-+\s*Forwarded message\s*-+|Begin forwarded message:)\s*$", re.IGNORECASE)


def _quote_starts(lines: list[str], index: int) -> bool:
    line = lines[index].strip()
    following = [rest.strip() for rest in lines[index + 1: index + 5]]
    if _WROTE.match(line) or (following and _WROTE.match(f"{line} {following[0]}")):
        return True
    if _ORIGINAL.match(line):
        return True
    # Outlook's header block: "From: …" then "Sent:"/"Date:"/"To:" within the next lines.
    return bool(_OUTLOOK_FROM.match(line)) and any(_OUTLOOK_NEXT.match(rest) for rest in following)


def trim_quoted(text: str) -> str:
    """`text` without the previous message it quotes: from the first "On … wrote:", "-----Original
    Message-----" or Outlook "From:/Sent:" block on, and trailing "> " lines. An inline forward is kept
    whole, and so is the whole text when trimming would leave nothing."""
    lines = text.split("\n")
    cut = len(lines)
    for index, line in enumerate(lines):
        stripped = line.strip()
        if _FORWARDED.match(stripped):
            break
        if _quote_starts(lines, index):
            cut = index
            break
        if stripped.startswith(">") and all(not rest.strip() or rest.lstrip().startswith(">")
                                            for rest in lines[index:]):
            cut = index
            break
    trimmed = "\n".join(lines[:cut]).strip()
    return trimmed or text.strip()


def _collect_attachments(msg: EmailMessage, reply: Reply, *, depth: int) -> None:
    try:
        parts = list(msg.iter_attachments())
    except Exception:
        return
    for part in parts:
        content_type = part.get_content_type()
        if content_type == "message/rfc822":
            if depth >= FORWARD_DEPTH_MAX:
                continue
            try:
                inner = part.get_content()
            except Exception:
                continue
            if isinstance(inner, EmailMessage):
                forwarded = _text_of(inner)
                who = _line(_header(inner, "From"), 200)
                if forwarded:
                    reply.text = (f"{reply.text}\n\n---- Forwarded message from {who or 'someone'} ----\n"
                                  f"{forwarded}").strip()
                _collect_attachments(inner, reply, depth=depth + 1)
            continue
        if part.is_multipart():
            continue
        name = _line(part.get_filename() or "", limits.DOCUMENT_FILE_NAME_MAX) or "attachment"
        try:
            data = part.get_payload(decode=True) or b""
        except Exception:
            reply.refused.append({"name": name, "reason": "The attachment could not be decoded."})
            continue
        if len(reply.attachments) >= ATTACHMENTS_MAX:
            reply.refused.append({"name": name, "reason": f"More than {ATTACHMENTS_MAX} attachments in one reply."})
        elif len(data) > ATTACHMENT_MAX_BYTES:
            reply.refused.append({"name": name, "reason": "The attachment is too large."})
        elif not data:
            reply.refused.append({"name": name, "reason": "The attachment is empty."})
        else:
            reply.attachments.append(Attachment(name, content_type, data))


# What a lender's attachment is, by its name (a PDF named "Term sheet …" is a term sheet).
_KINDS = (
    ("term_sheet", re.compile(r"term[\s_.-]*sheet|\bloi\b|letter[\s_.-]*of[\s_.-]*intent|indicative|"
                              r"\bquote\b|soft[\s_.-]*quote", re.IGNORECASE)),
    ("rent_roll", re.compile(r"rent[\s_.-]*roll", re.IGNORECASE)),
    ("t12", re.compile(r"\bt[\s_.-]*12\b|trailing[\s_.-]*12|operating[\s_.-]*statement", re.IGNORECASE)),
    ("appraisal", re.compile(r"apprais", re.IGNORECASE)),
    ("financial_statement", re.compile(r"financial[\s_.-]*statement|\bpfs\b", re.IGNORECASE)),
    ("offering_memorandum", re.compile(r"offering[\s_.-]*memo|\bom\b", re.IGNORECASE)),
)


def attachment_kind(attachment: Attachment) -> str:
    stem = attachment.name.rsplit(".", 1)[0] if "." in attachment.name else attachment.name
    for kind, pattern in _KINDS:
        if pattern.search(stem):
            return kind
    if attachment.content_type.startswith("image/"):
        return "photo"
    return "other"


# --- matching ---------------------------------------------------------------------------------------
def outbound_for(reply: Reply) -> OutboundEmail | None:
    """The email this reply answers: its reply address's tag first (To, Cc, Delivered-To, X-Original-To, in
    that order), else a Message-ID it names in In-Reply-To or References."""
    tags = [tag for tag, _address in reply.tags]
    if tags:
        by_tag = {email.reply_tag: email for email in OutboundEmail.objects.filter(reply_tag__in=tags)
                  .select_related("placement__deal", "placement__lender")}
        for tag in tags:
            if tag in by_tag:
                return by_tag[tag]
    if reply.references:
        by_id = {email.message_id: email for email in OutboundEmail.objects.filter(message_id__in=reply.references)
                 .select_related("placement__deal", "placement__lender")}
        for reference in reversed(reply.references):  # the latest named first
            if reference in by_id:
                return by_id[reference]
    return None


def lender_addresses(*, placement: Placement, outbound: OutboundEmail | None = None) -> set[str]:
    """The addresses a reply on `placement` may come from: the lender's, as this account knows them."""
    addresses = {placement.contact_email}
    if outbound is not None:
        addresses.add(outbound.to_address)
    addresses.update(Contact.objects.filter(account_id=placement.deal.account_id, lender_id=placement.lender_id)
                     .exclude(email="").values_list("email", flat=True))
    return {address.strip().lower() for address in addresses if address and address.strip()}


# --- receiving ---------------------------------------------------------------------------------------
@dataclass
class Received:
    inbound: InboundEmail
    created: bool


def inbound_receive(*, raw: bytes, received_at: dt.datetime | None = None, account=None) -> Received:
    """Keep the reply in `raw` (matched and applied, or to assign), once per Message-ID. `account`: the
    reply came through that account's own mailbox, so it is that account's alone — it is matched only to
    the account's own emails, and one that names none of them is kept for the account to assign.

    Raises ValidationFailed when `raw` is not a readable email. Everything else is kept."""
    reply = parse_message(raw)
    existing = InboundEmail.objects.filter(message_id=reply.message_id).first()
    if existing is not None:
        return Received(existing, created=False)
    try:
        inbound = _keep(reply, raw, received_at or timezone.now(), account)
    except IntegrityError:
        # The same message kept meanwhile by another request (its unique Message-ID): once is enough.
        existing = InboundEmail.objects.filter(message_id=reply.message_id).first()
        if existing is None:
            raise
        return Received(existing, created=False)
    return Received(inbound, created=True)


@transaction.atomic
def _keep(reply: Reply, raw: bytes, received_at: dt.datetime, account=None) -> InboundEmail:
    outbound = outbound_for(reply)
    if account is not None and outbound is not None and outbound.account_id != account.pk:
        outbound = None  # another account's email named in this account's mailbox: never applied there
    to_address = reply.tags[0][1] if reply.tags else ""
    owner_id = outbound.account_id if outbound is not None else getattr(account, "pk", None)
    inbound = InboundEmail.objects.create(
        account_id=owner_id,
        status=InboundEmail.Status.UNMATCHED, message_id=reply.message_id, from_address=reply.from_address,
        from_name=reply.from_name, to_address=_line(to_address, limits.EMAIL_MAX), subject=reply.subject,
        body=reply.text[: limits.NOTE_BODY_MAX], received_at=received_at,
        attachments=[{"name": a.name, "size": len(a.data)} for a in reply.attachments]
        + [{"name": r["name"], "refused": r["reason"]} for r in reply.refused])
    placement = outbound.placement if outbound is not None else None
    if placement is None or placement.deal.account_id != outbound.account_id:
        return _to_assign(inbound, raw, NO_PLACEMENT)
    if reply.from_address not in lender_addresses(placement=placement, outbound=outbound):
        return _to_assign(inbound, raw, NOT_THE_LENDER)
    inbound.status = InboundEmail.Status.MATCHED
    _apply(inbound, reply, placement=placement, outbound=outbound)
    return inbound


def _to_assign(inbound: InboundEmail, raw: bytes, reason: str) -> InboundEmail:
    inbound.reason = reason
    try:
        inbound.raw.save("reply.eml", ContentFile(raw), save=False)
    except Exception as exc:  # the storage down: nothing is kept, the sender (relay, mailbox) tries again
        logger.warning("inbound: the reply's message could not be stored: %s", type(exc).__name__)
        raise UpstreamUnavailable("Service unavailable: the reply could not be stored; send it again shortly.") \
            from exc
    inbound.save(update_fields=["reason", "raw"])
    logger.info("inbound: reply %s kept to assign: %s", inbound.pk, reason)
    return inbound


def _apply(inbound: InboundEmail, reply: Reply, *, placement: Placement, outbound: OutboundEmail | None,
           user=None) -> None:
    """The reply on `placement` (inside the caller's transaction): first response, note, event, documents."""
    deal = placement.deal
    if placement.status in (Placement.Status.SENT, Placement.Status.NO_RESPONSE):
        # The lender answered: reviewing, through the workflow (first_response_at, history, timeline).
        placement_services.placement_update(placement=placement, data={"status": Placement.Status.REVIEWING})
    documents = _documents(reply, deal=deal, user=user)
    lender = placement.lender.name
    sender = f"{reply.from_name} <{reply.from_address}>" if reply.from_name else reply.from_address
    lines = [f"Email from {lender} ({sender}): {reply.subject or '(no subject)'}", "", reply.text or "(no text)"]
    kept = [d["name"] for d in documents if "document_id" in d]
    if kept:
        lines += ["", "Attached, now the deal's documents: " + ", ".join(kept)]
    body = "\n".join(lines)
    if len(body) > limits.NOTE_BODY_MAX:
        body = body[: limits.NOTE_BODY_MAX - 1].rstrip() + "…"
    note = note_services.note_create(account=deal.account, author=user, target={"deal": deal}, kind="email",
                                     body=body)
    OutreachEvent.objects.create(account_id=deal.account_id, deal=deal, placement=placement, kind="replied",
                                 email=outbound, at=inbound.received_at)
    inbound.placement = placement
    inbound.note = note
    inbound.attachments = documents
    inbound.save(update_fields=["placement", "note", "attachments", "status", "reason", "assigned_by",
                                "assigned_at", "account"])


def _documents(reply: Reply, *, deal, user) -> list[dict[str, Any]]:
    """Each attachment as a document of the deal, or the reason it was refused (never failing the reply)."""
    results: list[dict[str, Any]] = [{"name": r["name"], "refused": r["reason"]} for r in reply.refused]
    for attachment in reply.attachments:
        kind = attachment_kind(attachment)
        try:
            with transaction.atomic():  # a refused one leaves nothing behind, and the reply goes on
                version = document_services.document_add(
                    deal=deal, upload=ContentFile(attachment.data, name=attachment.name), kind=kind,
                    name=attachment.name, source="email", user=user)
        except ApplicationError as error:
            if error.http_status >= 500:  # the storage down: the whole reply fails and is sent again
                raise
            results.append({"name": attachment.name, "refused": error.message})
            continue
        results.append({"name": attachment.name, "kind": kind, "document_id": version.document_id,
                        "version": version.number})
    return results


# --- assigning ---------------------------------------------------------------------------------------
def suggested_placement(inbound: InboundEmail) -> Placement | None:
    """The placement the reply's address or references name, if any (the assign page's first choice)."""
    reply = _stored_reply(inbound)
    outbound = outbound_for(reply) if reply is not None else None
    if outbound is None or (inbound.account_id is not None and outbound.account_id != inbound.account_id):
        return None
    return outbound.placement


def _stored_reply(inbound: InboundEmail) -> Reply | None:
    if not inbound.raw:
        return None
    with inbound.raw.open("rb") as stored:
        raw = stored.read()
    try:
        return parse_message(raw)
    except ValidationFailed:
        return None


@transaction.atomic
def inbound_assign(*, inbound: InboundEmail, placement: Placement, user) -> InboundEmail:
    """Apply a reply kept to assign to `placement` as a matched reply (by `user`). The placement must be of
    the reply's account (a reply naming no account takes the placement's: the admin lets only superusers
    assign those). A reply already on its placement is a Conflict."""
    inbound = InboundEmail.objects.select_for_update().get(pk=inbound.pk)
    if inbound.status != InboundEmail.Status.UNMATCHED:
        raise Conflict("this reply is already on its placement")
    placement = Placement.objects.select_related("deal__account", "lender").get(pk=placement.pk)
    if inbound.account_id is not None and placement.deal.account_id != inbound.account_id:
        raise ValueError("the placement is another account's")  # callers offer the reply's account's only
    reply = _stored_reply(inbound)
    if reply is None:  # kept before its message was stored: the text alone
        reply = Reply(message_id=inbound.message_id, from_address=inbound.from_address, from_name=inbound.from_name,
                      subject=inbound.subject, text=inbound.body, tags=[], references=[])
    outbound = placement.emails.order_by("-created_at").first()
    inbound.account_id = placement.deal.account_id
    inbound.status = InboundEmail.Status.ASSIGNED
    inbound.reason = ""
    inbound.assigned_by = user if getattr(user, "pk", None) else None
    inbound.assigned_at = timezone.now()
    _apply(inbound, reply, placement=placement, outbound=outbound, user=inbound.assigned_by)
    return inbound
