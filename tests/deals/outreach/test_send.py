"""Sending placements by email (issue 41), across a real SMTP server (aiosmtpd, tests/deals/outreach/smtp.py):
what crossed it (To, Reply-To with the placement's tag, Message-ID, subject, the package link), the server
down then back, a recipient refused, nothing sent twice, a dead worker's email not resent, header
injection, templates and follow-ups."""

from __future__ import annotations

import datetime as dt
import logging
import re

import pytest
from django.test import Client
from django.utils import timezone

from deals.models import Placement
from deals.notes.timeline import deal_timeline
from deals.outreach import mail, services
from deals.outreach.models import OutboundEmail, OutreachEvent, OutreachSend, PackageLink
from deals.outreach.tasks import deliver_due_outreach
from lev.errors import NotFound, ValidationFailed
from tests.deals.outreach.helpers import document, outreach_deal, placed

pytestmark = pytest.mark.django_db

LINK = re.compile(r"http://127\.0\.0\.1:8000(/p/[A-Za-z0-9_-]+/)")


@pytest.fixture(autouse=True)
def quiet_smtp_log():
    logging.getLogger("mail.log").setLevel(logging.WARNING)  # aiosmtpd's line per SMTP command


@pytest.fixture(autouse=True)
def documents_dir(settings, tmp_path):
    settings.LEV_DOCUMENTS_DIR = str(tmp_path)


def send(deal, placements, user, capture, **kwargs):
    with capture(execute=True):
        return services.outreach_send(deal=deal, placements=placements, user=user, **kwargs)


def test_the_teaser_crosses_a_real_smtp_server_and_its_link_opens_the_package(
        account, user, smtp, django_capture_on_commit_callbacks):
    deal = outreach_deal(account)
    placements = placed(deal)
    om = document(deal)
    result = send(deal, placements, user, django_capture_on_commit_callbacks, documents=[om.pk])
    assert result.skipped == [] and len(result.queued) == 3

    assert len(smtp.messages) == 3
    granite = OutboundEmail.objects.get(placement=placements[0])
    assert granite.status == "sent" and granite.attempts == 1 and granite.sent_at is not None
    [received] = smtp.to("granite@example.com")
    assert received["To"] == "Pat of Granite Bank <granite@example.com>"
    assert received["Reply-To"] == f"reply+{granite.reply_tag}@reply.lev.localhost"
    assert re.fullmatch(r"[0-9a-f]{32}", granite.reply_tag)
    assert received["Message-ID"] == granite.message_id
    assert received["Subject"] == "Harbor Point Apartments: $12,500,000 permanent loan request"
    assert "Granite Bank" in received.text and "NOI $1,150,000" in received.text and "LTV 62.5%" in received.text
    # Each lender its own link; only the token's digest is stored.
    links = {m.rcpt_tos[0]: LINK.search(m.text).group(1) for m in smtp.messages}
    assert len(set(links.values())) == 3
    token = links["granite@example.com"].split("/")[2]
    assert granite.package.token_hash == services.token_hash(token)
    assert not PackageLink.objects.filter(token_hash=token).exists()

    # The draft placements went to sent through the workflow (history: who sent them).
    assert set(Placement.objects.filter(deal=deal).values_list("status", flat=True)) == {"sent"}
    assert Placement.history.filter(id=placements[0].pk, status="sent").first().history_user == user

    # The lender follows its link: the package page, then the OM.
    browser = Client()
    page = browser.get(links["granite@example.com"])
    assert page.status_code == 200
    html = page.content.decode()
    assert "Harbor Point Apartments" in html and "Granite Bank" in html and "$1,150,000" in html
    assert "Harbor Life" not in html  # that lender's package is its own
    assert page["Cache-Control"] == "no-store" and page["Referrer-Policy"] == "no-referrer"
    assert "noindex" in page["X-Robots-Tag"]
    download = f"/p/{token}/documents/{om.pk}/"
    assert download in html
    got = browser.get(download)
    assert got.status_code == 200
    assert b"".join(got.streaming_content) == b"%PDF-1.7\n% the OM\n"
    disposition = got["Content-Disposition"]
    assert disposition.startswith("attachment;") and "Offering memorandum.pdf" in disposition
    assert got["X-Content-Type-Options"] == "nosniff" and got["Content-Security-Policy"].startswith("sandbox")
    assert got["Cache-Control"] == "no-store"
    browser.get(links["granite@example.com"])  # a reload: counted, said once on the timeline

    link = PackageLink.objects.get(pk=granite.package_id)
    assert link.opens == 2 and link.first_opened_at is not None
    kinds = list(OutreachEvent.objects.filter(placement=placements[0]).values_list("kind", flat=True))
    assert kinds == ["emailed", "opened", "downloaded"]
    texts = [(e.kind, e.actor, e.text) for e in deal_timeline(deal=deal)]
    assert ("lender_emailed", "alice", "Emailed Granite Bank the teaser (granite@example.com)") in texts
    assert ("package_opened", "Granite Bank", "Granite Bank opened the package") in texts
    assert ("document_downloaded", "Granite Bank",
            "Granite Bank downloaded the OM (Offering memorandum.pdf)") in texts
    assert ("placement_sent", "alice", "Sent to Granite Bank") in texts


def test_smtp_down_retries_with_backoff_then_delivers_once_it_is_back(
        account, user, smtp, settings, django_capture_on_commit_callbacks):
    settings.LEV_OUTREACH_RETRY_BASE_SECONDS = 60
    deal = outreach_deal(account)
    placements = placed(deal)
    smtp.stop()  # the port is closed: connection refused
    before = timezone.now()
    result = send(deal, placements, user, django_capture_on_commit_callbacks)
    emails = list(OutboundEmail.objects.filter(send=result.send))
    assert {e.status for e in emails} == {"retrying"}
    assert all(e.attempts == 1 and e.next_attempt_at >= before + dt.timedelta(seconds=59) for e in emails)
    assert {e.last_error for e in emails} == {"The mail server could not be reached."}
    assert OutreachSend.objects.get(pk=result.send.pk).status == "running"

    assert deliver_due_outreach() == {"uncertain": 0, "attempted": 0}  # not due yet: nothing tried
    smtp.start()
    OutboundEmail.objects.filter(send=result.send).update(next_attempt_at=timezone.now() - dt.timedelta(seconds=1))
    assert deliver_due_outreach() == {"uncertain": 0, "attempted": 3}
    assert set(OutboundEmail.objects.filter(send=result.send).values_list("status", "attempts")) == {("sent", 2)}
    assert sorted(m.rcpt_tos[0] for m in smtp.messages) == ["granite@example.com", "harbor@example.com",
                                                            "summit@example.com"]
    assert OutreachSend.objects.get(pk=result.send.pk).status == "done"
    assert deliver_due_outreach()["attempted"] == 0 and len(smtp.messages) == 3  # run again: nothing resent


def test_the_retries_run_out_after_the_maximum_attempts(account, user, smtp, settings,
                                                        django_capture_on_commit_callbacks):
    settings.LEV_OUTREACH_MAX_ATTEMPTS = 2
    deal = outreach_deal(account)
    smtp.stop()
    result = send(deal, placed(deal, names=("Granite Bank",)), user, django_capture_on_commit_callbacks)
    OutboundEmail.objects.update(next_attempt_at=timezone.now() - dt.timedelta(seconds=1))
    deliver_due_outreach()
    email = OutboundEmail.objects.get(send=result.send)
    assert email.status == "refused" and email.attempts == 2 and email.next_attempt_at is None
    assert email.last_error.startswith("Not delivered after 2 attempts: The mail server could not be reached.")
    assert OutreachEvent.objects.filter(kind="refused", email=email).exists()
    assert OutreachSend.objects.get(pk=result.send.pk).status == "done"


def test_a_refused_recipient_is_refused_for_good_and_the_others_are_sent(
        account, user, smtp, django_capture_on_commit_callbacks):
    smtp.handler.refuse = {"granite@example.com"}
    deal = outreach_deal(account)
    placements = placed(deal)
    result = send(deal, placements, user, django_capture_on_commit_callbacks)
    by_lender = {e.placement_id: e for e in OutboundEmail.objects.filter(send=result.send)}
    granite = by_lender[placements[0].pk]
    assert granite.status == "refused"
    assert granite.last_error == "The mail server refused the address granite@example.com."
    assert [by_lender[p.pk].status for p in placements[1:]] == ["sent", "sent"]
    assert sorted(m.rcpt_tos[0] for m in smtp.messages) == ["harbor@example.com", "summit@example.com"]
    assert deliver_due_outreach()["attempted"] == 0  # refused for good: not tried again
    texts = [e.text for e in deal_timeline(deal=deal)]
    assert "Email to Granite Bank not delivered: The mail server refused the address granite@example.com." in texts


def test_sending_twice_emails_nobody_twice(account, user, smtp, django_capture_on_commit_callbacks):
    deal = outreach_deal(account)
    placements = placed(deal)
    send(deal, placements, user, django_capture_on_commit_callbacks)
    again = send(deal, placements, user, django_capture_on_commit_callbacks)
    assert again.queued == [] and again.send.total == 0 and again.send.status == "done"
    assert [s["code"] for s in again.skipped] == ["CONFLICT"] * 3
    assert again.skipped[0]["message"] == "Already sent: Granite Bank was emailed this deal's teaser."
    assert len(smtp.messages) == 3
    assert OutboundEmail.objects.filter(kind="teaser").count() == 3


def test_a_refused_teaser_may_be_sent_again_to_a_corrected_address(account, user, smtp,
                                                                  django_capture_on_commit_callbacks):
    smtp.handler.refuse = {"granite@example.com"}
    deal = outreach_deal(account)
    [placement] = placed(deal, names=("Granite Bank",))
    send(deal, [placement], user, django_capture_on_commit_callbacks)
    Placement.objects.filter(pk=placement.pk).update(contact_email="loans@granite.example.com")
    placement.refresh_from_db()
    again = send(deal, [placement], user, django_capture_on_commit_callbacks)
    assert len(again.queued) == 1 and [m.rcpt_tos for m in smtp.messages] == [["loans@granite.example.com"]]


def test_an_email_left_sending_by_a_dead_worker_is_not_resent(account, user, smtp, settings,
                                                              django_capture_on_commit_callbacks):
    settings.LEV_OUTREACH_STALE_SECONDS = 300
    deal = outreach_deal(account)
    smtp.stop()
    result = send(deal, placed(deal, names=("Granite Bank",)), user, django_capture_on_commit_callbacks)
    smtp.start()
    # As a worker killed between claiming the email and recording the server's answer leaves it.
    OutboundEmail.objects.filter(send=result.send).update(
        status="sending", next_attempt_at=timezone.now() - dt.timedelta(seconds=301))
    assert deliver_due_outreach() == {"uncertain": 1, "attempted": 0}
    email = OutboundEmail.objects.get(send=result.send)
    assert email.status == "refused" and email.last_error == mail.UNCERTAIN
    assert smtp.messages == []
    # One `sending` for less than the bound is left alone (its worker may still be at it).
    OutboundEmail.objects.filter(pk=email.pk).update(status="sending", next_attempt_at=timezone.now())
    assert deliver_due_outreach() == {"uncertain": 0, "attempted": 0}


def test_placements_without_an_address_are_reported_and_the_others_sent(account, user, smtp,
                                                                        django_capture_on_commit_callbacks):
    deal = outreach_deal(account)
    placements = placed(deal, emails={"Harbor Life": "", "Summit Credit Union": "not an address"})
    result = send(deal, placements, user, django_capture_on_commit_callbacks)
    assert [e.placement_id for e in result.queued] == [placements[0].pk]
    assert [(s["lender_name"], s["code"]) for s in result.skipped] == [
        ("Harbor Life", "VALIDATION_ERROR"), ("Summit Credit Union", "VALIDATION_ERROR")]
    assert result.skipped[0]["message"] == "No email address: add an email to the contact at Harbor Life."
    assert [m.rcpt_tos for m in smtp.messages] == [["granite@example.com"]]
    # Those not emailed stay drafts.
    assert list(Placement.objects.filter(deal=deal).order_by("id").values_list("status", flat=True)) == [
        "sent", "draft", "draft"]


# --- header injection ---------------------------------------------------------------------------------
def test_a_subject_with_a_line_break_or_an_unknown_placeholder_is_refused_at_save(account):
    with pytest.raises(ValidationFailed) as refused:
        services.template_save(account=account, kind="teaser", subject="Hello\r\nBcc: all@evil.example", body="Hi")
    assert refused.value.details["fields"]["subject"] == ["must be one line (no line breaks)"]
    with pytest.raises(ValidationFailed) as unknown:
        services.template_save(account=account, kind="teaser", subject="$deal_title",
                               body="{{ deal.account.api_keys }} and ${secret}")
    message = unknown.value.details["fields"]["body"][0]
    assert message.startswith("uses unknown placeholders: $deal.account.api_keys, $secret; use only: $deal_title")


def test_line_breaks_in_a_contacts_name_never_reach_a_header(account, user, smtp,
                                                             django_capture_on_commit_callbacks):
    deal = outreach_deal(account)
    [placement] = placed(deal, names=("Granite Bank",))
    # Written past the forms (an import, the shell): the name holds a header of its own.
    Placement.objects.filter(pk=placement.pk).update(contact_name="Pat\r\nBcc: spy@evil.example")
    placement.refresh_from_db()
    send(deal, [placement], user, django_capture_on_commit_callbacks)
    [received] = smtp.messages
    assert received.rcpt_tos == ["granite@example.com"]
    assert received["Bcc"] is None
    [to] = received.message["To"].addresses
    assert (to.display_name, to.addr_spec) == ("Pat Bcc: spy@evil.example", "granite@example.com")


def test_a_header_that_cannot_be_written_refuses_that_email_alone(account, user, smtp,
                                                                  django_capture_on_commit_callbacks):
    deal = outreach_deal(account)
    placements = placed(deal, names=("Granite Bank", "Harbor Life"))
    smtp.stop()
    result = send(deal, placements, user, django_capture_on_commit_callbacks)
    smtp.start()
    # A row changed past the services: an address holding a second header.
    OutboundEmail.objects.filter(placement=placements[0]).update(
        to_address="granite@example.com\nBcc: spy@evil.example")
    OutboundEmail.objects.update(next_attempt_at=timezone.now() - dt.timedelta(seconds=1))
    deliver_due_outreach()
    statuses = dict(OutboundEmail.objects.filter(send=result.send).values_list("placement_id", "status"))
    assert statuses == {placements[0].pk: "refused", placements[1].pk: "sent"}
    assert OutboundEmail.objects.get(placement=placements[0]).last_error == mail.NOT_COMPOSED
    assert [m.rcpt_tos for m in smtp.messages] == [["harbor@example.com"]]


# --- templates and follow-ups -----------------------------------------------------------------------
def test_the_accounts_template_is_used_with_its_placeholders_filled(account, user, smtp,
                                                                    django_capture_on_commit_callbacks):
    services.template_save(account=account, kind="teaser", subject="{{ deal_title }} for ${lender_name}",
                           body="Dear $contact_name, $$5 coffee on us. $units units. {{package_link}}")
    deal = outreach_deal(account)
    send(deal, placed(deal, names=("Granite Bank",)), user, django_capture_on_commit_callbacks)
    [received] = smtp.messages
    assert received["Subject"] == "Harbor Point Apartments for Granite Bank"
    assert received.text.startswith("Dear Pat of Granite Bank, $5 coffee on us. 180 units. http://127.0.0.1:8000/p/")


def test_follow_up_goes_to_the_emailed_placements_that_have_not_answered(account, user, smtp,
                                                                         django_capture_on_commit_callbacks):
    deal = outreach_deal(account)
    placements = placed(deal)
    send(deal, placements, user, django_capture_on_commit_callbacks)
    from deals.placements.services import placement_update

    placement_update(placement=placements[1], data={"status": "reviewing"})  # Harbor Life answered
    with django_capture_on_commit_callbacks(execute=True):
        result = services.outreach_follow_up(deal=deal, user=user)
    assert sorted(e.placement_id for e in result.queued) == [placements[0].pk, placements[2].pk]
    follow_ups = [m for m in smtp.messages if m["Subject"].startswith("Following up")]
    assert sorted(m.rcpt_tos[0] for m in follow_ups) == ["granite@example.com", "summit@example.com"]
    assert OutboundEmail.objects.filter(kind="follow_up", status="sent").count() == 2
    texts = [e.text for e in deal_timeline(deal=deal)]
    assert "Emailed Granite Bank a follow-up (granite@example.com)" in texts


def test_a_placement_of_another_deal_or_a_document_of_another_deal_is_not_found(account, user, other_account):
    deal, other = outreach_deal(account), outreach_deal(account, title="Other")
    mine = placed(deal, names=("Granite Bank",))
    theirs = placed(other, names=("Harbor Life",))
    with pytest.raises(NotFound):
        services.outreach_send(deal=deal, placements=theirs, user=user)
    with pytest.raises(NotFound):
        services.outreach_send(deal=deal, placements=mine, user=user, documents=[document(other).pk])
    assert not OutboundEmail.objects.exists()
