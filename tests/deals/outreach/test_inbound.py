"""The inbound endpoint fed real MIME messages (the standard library's email package) through the Django
test client: a reply lands on its placement (first response through the workflow, an email note, a
replied event, its attachments as documents), and every refusal says why and keeps nothing twice."""

from __future__ import annotations

import time
from email.message import EmailMessage

import pytest

from deals.documents.models import Document
from deals.notes.models import Note
from deals.outreach.inbound import trim_quoted
from deals.outreach.models import InboundEmail, OutreachEvent
from deals.placements.models import Placement
from tests.deals.outreach.reply_helpers import (
    PDF_BYTES,
    SECRET,
    emailed,
    post,
    post_signed,
    private_storage_at,
    reply,
    signed_headers,
)
from tests.factories import AccountFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def inbound_settings(settings, tmp_path, monkeypatch):
    settings.LEV_INBOUND_EMAIL_SECRET = SECRET
    private_storage_at(monkeypatch, tmp_path)
    return settings


def test_a_plain_reply_lands_on_its_placement(client, account):
    email = emailed(account)
    message = reply(email, text="Thanks, we are reviewing it.\n\n"
                                "On Mon, Dec 7, 2026 at 9:00 AM Lev <x@y> wrote:\n> Teaser")
    answer = post_signed(client, message)
    assert answer.status_code == 201, answer.content
    assert answer.json()["status"] == "matched" and answer.json()["duplicate"] is False
    placement = Placement.objects.get(pk=email.placement_id)
    assert placement.status == "reviewing" and placement.first_response_at is not None
    # Through the workflow: the placement's history records the move.
    assert list(placement.history.order_by("-history_date").values_list("status", flat=True))[:1] == ["reviewing"]
    note = Note.objects.get(deal=placement.deal, kind="email")
    assert "Thanks, we are reviewing it." in note.body and "Granite Bank" in note.body
    assert "Teaser" not in note.body and "wrote:" not in note.body  # the quoted teaser trimmed
    event = OutreachEvent.objects.get(placement=placement, kind="replied")
    assert event.email_id == email.pk and event.account_id == account.pk
    inbound = InboundEmail.objects.get()
    assert (inbound.status, inbound.account_id, inbound.placement_id, inbound.note_id) == (
        "matched", account.pk, placement.pk, note.pk)
    assert inbound.from_address == "jane@granitebank.com" and not inbound.raw


def test_an_html_only_reply_is_read_as_text(client, account):
    email = emailed(account)
    html = ("<html><head><style>p{color:red}</style><script>alert('x')</script></head><body>"
            "<p>Happy to quote at <b>6.1%</b> &amp; 65% LTV.</p><div>Jane</div></body></html>")
    answer = post_signed(client, reply(email, text=None, html=html))
    assert answer.status_code == 201
    body = Note.objects.get(kind="email").body
    assert "Happy to quote at 6.1% & 65% LTV." in body and "Jane" in body
    assert "<" not in body.split("\n", 1)[1] and "alert" not in body and "color" not in body


def test_a_term_sheet_pdf_becomes_the_deals_document_and_a_bad_file_is_listed(client, account):
    email = emailed(account)
    message = reply(email, attachments=(("Term Sheet - Granite Bank.pdf", PDF_BYTES, "application/pdf"),
                                        ("invoice.pdf", b"MZ\x90\x00 not a pdf at all", "application/pdf")))
    answer = post_signed(client, message)
    assert answer.status_code == 201
    document = Document.objects.get(deal=email.placement.deal)
    assert document.kind == "term_sheet" and document.current.source == "email"
    assert document.current.file.read() == PDF_BYTES
    inbound = InboundEmail.objects.get()
    kept = [a for a in inbound.attachments if "document_id" in a]
    refused = [a for a in inbound.attachments if "refused" in a]
    assert kept == [{"name": "Term Sheet - Granite Bank.pdf", "kind": "term_sheet", "document_id": document.pk,
                     "version": 1}]
    assert [a["name"] for a in refused] == ["invoice.pdf"] and refused[0]["refused"]
    assert inbound.status == "matched"  # a refused attachment never fails the reply
    assert "Term Sheet - Granite Bank.pdf" in Note.objects.get(kind="email").body


def test_a_forwarded_message_brings_its_text_and_attachments(client, account):
    email = emailed(account)
    inner = EmailMessage()
    inner["From"] = "Credit Desk <credit@granitebank.com>"
    inner["Subject"] = "Indicative terms"
    inner.set_content("Credit approved the indicative terms.")
    inner.add_attachment(PDF_BYTES, maintype="application", subtype="pdf", filename="LOI.pdf")
    outer = reply(email, text="See below from our credit desk.")
    outer.add_attachment(inner)  # message/rfc822: a forward as an attachment
    assert post_signed(client, outer).status_code == 201
    body = Note.objects.get(kind="email").body
    assert "See below from our credit desk." in body and "Credit approved the indicative terms." in body
    assert Document.objects.get().kind == "term_sheet"


def test_a_reply_found_by_its_references_when_the_address_has_no_tag(client, account):
    email = emailed(account)
    answer = post_signed(client, reply(email, to="Deals <deals@broker.test>", references=True))
    assert answer.status_code == 201 and answer.json()["status"] == "matched"
    assert InboundEmail.objects.get().placement_id == email.placement_id


@pytest.mark.parametrize("body, problem", [
    (b"\r\n  \r\n", "it is empty"),
    (b"this is not an email at all\n", "it has no sender"),
    (b"Subject: hi\r\nFrom: nobody\r\n\r\nno address\r\n", "it has no sender"),
])
def test_a_body_that_is_no_email_is_a_clear_400(client, account, body, problem):
    answer = post_signed(client, body)
    assert answer.status_code == 400
    error = answer.json()
    assert error["code"] == "VALIDATION_ERROR" and problem in error["message"]
    assert InboundEmail.objects.count() == 0


def test_broken_mime_still_kept_defensively(client, account):
    """A multipart without its boundary, a bad charset: read as well as it can be, never a 500."""
    email = emailed(account)
    raw = (f"From: jane@granitebank.com\r\nTo: reply+{email.reply_tag}@r.lev.test\r\nMessage-ID: <b1@g>\r\n"
           "Content-Type: multipart/mixed; boundary=\"nope\"\r\n\r\n--other\r\nContent-Type: text/plain; "
           "charset=klingon\r\n\r\nqapla\r\n").encode()
    answer = post_signed(client, raw)
    assert answer.status_code == 201
    assert InboundEmail.objects.get().status == "matched"


def test_unsigned_badly_signed_too_old_and_future_are_401(client, account):
    email = emailed(account)
    body = reply(email).as_bytes()
    assert post(client, body).status_code == 401
    assert post(client, body, HTTP_X_LEV_TIMESTAMP=str(int(time.time()))).status_code == 401
    wrong = signed_headers(body, secret="another-secret")
    answer = post(client, body, **wrong)
    assert answer.status_code == 401 and "does not match" in answer.json()["message"]
    tampered = signed_headers(body)
    assert post(client, body + b"\r\nmore", **tampered).status_code == 401
    old = post(client, body, **signed_headers(body, timestamp=int(time.time()) - 301))
    assert old.status_code == 401 and "too old" in old.json()["message"]
    future = post(client, body, **signed_headers(body, timestamp=int(time.time()) + 600))
    assert future.status_code == 401 and "future" in future.json()["message"]
    garbage = post(client, body, HTTP_X_LEV_TIMESTAMP="yesterday", HTTP_X_LEV_SIGNATURE="sha256=00")
    assert garbage.status_code == 401
    assert InboundEmail.objects.count() == 0 and Note.objects.count() == 0
    assert Placement.objects.get(pk=email.placement_id).status == "sent"


def test_a_replay_is_kept_once(client, account):
    email = emailed(account)
    message = reply(email, attachments=(("Term sheet.pdf", PDF_BYTES, "application/pdf"),))
    body = message.as_bytes()
    headers = signed_headers(body)
    first = post(client, body, **headers)
    again = post(client, body, **headers)  # the same signed request again
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["duplicate"] is True and "Already received" in again.json()["message"]
    message.replace_header("Subject", "Re: changed, same Message-ID")
    assert post_signed(client, message).status_code == 200
    assert InboundEmail.objects.count() == 1 and Note.objects.count() == 1
    assert OutreachEvent.objects.filter(kind="replied").count() == 1 and Document.objects.count() == 1


def test_too_large_is_413_before_reading(client, account, settings):
    settings.LEV_INBOUND_EMAIL_MAX_BYTES = 2000
    email = emailed(account)
    body = reply(email, text="x" * 5000).as_bytes()
    answer = post_signed(client, body)
    assert answer.status_code == 413 and answer.json()["code"] == "VALIDATION_ERROR"
    assert InboundEmail.objects.count() == 0


def test_no_secret_configured_is_503_and_wrong_content_type_415(client, account, settings):
    email = emailed(account)
    body = reply(email).as_bytes()
    wrong_type = client.post("/api/v1/inbound-email/", data=body, content_type="text/plain", **signed_headers(body))
    assert wrong_type.status_code == 415
    settings.LEV_INBOUND_EMAIL_SECRET = ""
    answer = post_signed(client, body)
    assert answer.status_code == 503 and "not configured" in answer.json()["message"]
    assert client.get("/api/v1/inbound-email/").status_code == 405
    assert InboundEmail.objects.count() == 0


def test_a_sender_who_is_not_the_lenders_is_kept_to_assign(client, account):
    email = emailed(account)
    answer = post_signed(client, reply(email, sender="Mallory <mallory@evil.test>"))
    assert answer.status_code == 201 and answer.json()["status"] == "unmatched"
    inbound = InboundEmail.objects.get()
    assert (inbound.account_id, inbound.placement_id, inbound.reason) == (
        account.pk, None, "The sender is not the lender's contact.")
    assert inbound.raw  # kept whole, to apply when assigned
    placement = Placement.objects.get(pk=email.placement_id)
    assert placement.status == "sent" and placement.first_response_at is None
    assert Note.objects.count() == 0 and not OutreachEvent.objects.filter(kind="replied").exists()


def test_an_unknown_tag_is_kept_for_the_operators(client, account):
    emailed(account)
    answer = post_signed(client, reply(None, to="reply+doesnotexist@replies.lev.test"))
    assert answer.status_code == 201 and answer.json()["status"] == "unmatched"
    inbound = InboundEmail.objects.get()
    assert inbound.account_id is None and inbound.reason.startswith("The reply names no placement")


def test_a_reply_tagged_for_one_account_never_lands_on_another(client, account):
    other = AccountFactory(name="Other Capital", slug="other")
    mine = emailed(account, contact_email="jane@granitebank.com")
    theirs = emailed(other, contact_email="bob@granitebank.com", lender=mine.placement.lender)
    # Bob (the other account's contact at the same lender) answers the first account's email, naming
    # the other account's message too: the tag decides, and Bob is not this account's contact.
    message = reply(mine, sender="bob@granitebank.com")
    message["References"] = theirs.message_id
    assert post_signed(client, message).json()["status"] == "unmatched"
    inbound = InboundEmail.objects.get()
    assert inbound.account_id == account.pk
    assert Placement.objects.get(pk=theirs.placement_id).status == "sent"
    assert not Note.objects.filter(account=other).exists()
    assert not InboundEmail.objects.filter(account=other).exists()


def test_the_storage_down_is_a_503_and_nothing_is_kept(client, account, tmp_path, monkeypatch):
    """A reply to assign keeps its message; the storage refusing (its folder is a file, for real) is an
    outage the relay retries, never a 500, and nothing is half kept."""
    blocked = tmp_path / "a-file"
    blocked.write_bytes(b"")
    private_storage_at(monkeypatch, blocked / "inside")
    emailed(account)
    answer = post_signed(client, reply(None, to="reply+unknown@r.lev.test"))
    assert answer.status_code == 503 and answer.json()["code"] == "UPSTREAM_UNAVAILABLE"
    assert InboundEmail.objects.count() == 0


@pytest.mark.parametrize("text, kept, dropped", [
    ("Yes, 6.25% fixed.\n\nOn Mon, Dec 7, 2026 at 9:00 AM Lev Deals <reply+x@r.test>\nwrote:\n> Teaser\n> more",
     "Yes, 6.25% fixed.", "Teaser"),
    ("Declined, sorry.\n\n-----Original Message-----\nFrom: Lev\nSent: Monday\nTeaser", "Declined, sorry.", "Teaser"),
    ("Looks good.\n\nFrom: Lev Deals <reply+x@r.test>\nSent: Monday, December 7, 2026 9:00 AM\nTo: Jane\n\nTeaser",
     "Looks good.", "Teaser"),
    ("Our view:\nFrom: a credit standpoint it works.\nRegards", "From: a credit standpoint it works.", None),
    ("FYI below.\n\n---------- Forwarded message ---------\nFrom: Credit <c@g.test>\nDate: Mon\n\nApproved at 65%.",
     "Approved at 65%.", None),
    ("> only a quote\n> of the teaser", "> only a quote", None),
])
def test_the_quoted_previous_message_is_trimmed_in_the_simple_cases(text, kept, dropped):
    trimmed = trim_quoted(text)
    assert kept in trimmed
    if dropped:
        assert dropped not in trimmed


def test_the_production_server_bounds_the_body_at_the_inbound_limit(settings):
    """The endpoint's messages may pass the API's 2.5 MB request bound, up to its own: the production server
    (lev.wsgi, lev.asgi) reads a body within `body_limit(path)`, which the endpoint's registration sets."""
    from lev.wsgi import body_limit

    settings.LEV_INBOUND_EMAIL_MAX_BYTES = 7 * 1024 * 1024
    assert body_limit("/api/v1/inbound-email/") == 7 * 1024 * 1024
    assert body_limit("/api/v1/deals/") == settings.DATA_UPLOAD_MAX_MEMORY_SIZE
