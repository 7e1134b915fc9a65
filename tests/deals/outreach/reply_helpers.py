"""Builders for the replies' tests: a placement emailed to its lender (the outbox row the send makes),
real MIME replies made with the standard library's email package, and signed posts."""

from __future__ import annotations

import secrets
import time
from email.message import EmailMessage
from email.utils import make_msgid

from deals.companies.models import Contact
from deals.outreach.inbound_api import sign
from deals.outreach.models import OutboundEmail, OutreachEvent
from deals.placements import services as placement_services
from tests.factories import DealFactory, LenderFactory

SECRET = "inbound-test-secret-0123456789"
URL = "/api/v1/inbound-email/"
PDF_BYTES = (b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
             b"2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")


def private_storage_at(monkeypatch, folder) -> None:
    """The deal documents' storage (documents and kept replies) writing under `folder` for this test."""
    from django.core.files.storage import storages

    storage = storages["deal_documents"]
    monkeypatch.setattr(storage, "base_location", str(folder), raising=False)
    monkeypatch.setattr(storage, "location", str(folder), raising=False)


def emailed(account, *, contact_email: str = "jane@granitebank.com", lender=None, deal=None, status="sent"):
    """A placement of a deal of `account` sent to `lender`, its teaser in the outbox (sent) and the
    'emailed' event: what the send leaves behind. Returns the OutboundEmail."""
    deal = deal or DealFactory(account=account)
    lender = lender or LenderFactory(name="Granite Bank")
    Contact.objects.create(account=account, lender=lender, name="Jane Lender", email=contact_email)
    placement = placement_services.placements_create(deal=deal, lender_ids=[lender.pk], send=True).created[0]
    placement_services.placement_update(placement=placement, data={"contact_email": contact_email,
                                                                    "contact_name": "Jane Lender"})
    if status != "sent":
        placement_services.placement_update(placement=placement, data={"status": status})
    email = OutboundEmail.objects.create(
        account=account, placement=placement, kind="teaser", to_name="Jane Lender", to_address=contact_email,
        subject=f"{deal.title}: financing request", body="Teaser", message_id=make_msgid(domain="lev.test"),
        reply_tag=secrets.token_hex(12), status="sent")
    OutreachEvent.objects.create(account=account, deal=deal, placement=placement, kind="emailed", email=email)
    return email


def reply(email: OutboundEmail | None = None, *, sender: str = "Jane Lender <jane@granitebank.com>",
          text: str | None = "We are reviewing the deal and will revert by Friday.", html: str | None = None,
          attachments: tuple[tuple[str, bytes, str], ...] = (), to: str | None = None,
          message_id: str | None = None, references: bool = False) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to if to is not None else (f"Lev <reply+{email.reply_tag}@replies.lev.test>" if email else
                                               "deals@broker.test")
    message["Subject"] = f"Re: {email.subject}" if email else "Re: a deal"
    message["Message-ID"] = message_id or make_msgid(domain="granitebank.com")
    if references and email is not None:
        message["In-Reply-To"] = email.message_id
        message["References"] = email.message_id
    if text is not None:
        message.set_content(text)
        if html is not None:
            message.add_alternative(html, subtype="html")
    elif html is not None:
        message.set_content(html, subtype="html")
    for name, data, content_type in attachments:
        maintype, subtype = content_type.split("/")
        message.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return message


def signed_headers(body: bytes, *, secret: str = SECRET, timestamp: int | None = None) -> dict[str, str]:
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    return {"HTTP_X_LEV_TIMESTAMP": stamp, "HTTP_X_LEV_SIGNATURE": sign(secret, stamp, body)}


def post(client, body: bytes, **headers):
    return client.post(URL, data=body, content_type="message/rfc822", **headers)


def post_signed(client, message, **kwargs):
    body = message if isinstance(message, bytes) else message.as_bytes()
    return post(client, body, **signed_headers(body, **kwargs))
