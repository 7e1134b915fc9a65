"""A reply crossing a real SMTP relay (deploy/inbound_relay.py on aiosmtpd, started here) into a live
Lev server (pytest-django's live_server): the mail is signed by the relay and kept by the endpoint; a
relay whose secret is out of step is told to try again later (451), and nothing is kept."""

from __future__ import annotations

import importlib.util
import smtplib
import socket
from pathlib import Path

import pytest

from deals.documents.models import Document
from deals.outreach.models import InboundEmail
from deals.placements.models import Placement
from tests.deals.outreach.reply_helpers import PDF_BYTES, SECRET, URL, emailed, private_storage_at, reply

ROOT = Path(__file__).resolve().parents[3]
spec = importlib.util.spec_from_file_location("inbound_relay", ROOT / "deploy" / "inbound_relay.py")
inbound_relay = importlib.util.module_from_spec(spec)
spec.loader.exec_module(inbound_relay)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def relay(live_server, settings, tmp_path, monkeypatch):
    settings.LEV_INBOUND_EMAIL_SECRET = SECRET
    private_storage_at(monkeypatch, tmp_path)
    started = []

    def start(secret: str = SECRET):
        controller = inbound_relay.relay_controller(url=live_server.url + URL, secret=secret, port=free_port())
        controller.start()
        started.append(controller)
        return controller

    yield start
    for controller in started:
        controller.stop()


def send(controller, message, rcpt: str) -> tuple[int, bytes]:
    with smtplib.SMTP(controller.hostname, controller.port, timeout=30) as smtp:
        try:
            smtp.sendmail("jane@granitebank.com", [rcpt], message.as_bytes())
        except smtplib.SMTPResponseException as refused:
            return refused.smtp_code, refused.smtp_error
        except smtplib.SMTPRecipientsRefused as refused:
            code, text = next(iter(refused.recipients.values()))
            return code, text
    return 250, b""


@pytest.mark.django_db(transaction=True)
def test_a_reply_through_the_smtp_relay_lands_on_its_placement(relay, account):
    email = emailed(account)
    controller = relay()
    # The reply address only in the envelope (the lender Bcc'd it): the relay's Delivered-To carries it.
    message = reply(email, to="Deals <deals@broker.test>",
                    attachments=(("Granite term sheet.pdf", PDF_BYTES, "application/pdf"),))
    assert send(controller, message, f"reply+{email.reply_tag}@replies.lev.test")[0] == 250
    inbound = InboundEmail.objects.get()
    assert inbound.status == "matched" and inbound.placement_id == email.placement_id
    assert Placement.objects.get(pk=email.placement_id).status == "reviewing"
    assert Document.objects.get().kind == "term_sheet"
    # The same message relayed again (a sending server's retry) is kept once.
    assert send(controller, message, f"reply+{email.reply_tag}@replies.lev.test")[0] == 250
    assert InboundEmail.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_relay_with_the_wrong_secret_is_told_to_retry(relay, account):
    email = emailed(account)
    code, _text = send(relay("not-the-secret"), reply(email), f"reply+{email.reply_tag}@replies.lev.test")
    assert code == 451  # the sending server keeps the mail: nothing is lost
    assert InboundEmail.objects.count() == 0


def test_lev_unreachable_is_a_temporary_failure():
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    status = inbound_relay.post(f"http://127.0.0.1:{port}{URL}", SECRET, b"From: a@b.test\r\n\r\nx", timeout=5)
    assert status == 0 and inbound_relay.smtp_reply(status).startswith("451")
    assert inbound_relay.smtp_reply(413).startswith("552") and inbound_relay.smtp_reply(400).startswith("554")


@pytest.mark.django_db(transaction=True)
def test_too_large_is_refused_before_the_body_is_sent(live_server, settings):
    """A live server, a raw socket: a message announced at 1 GB gets its 413 while the client has sent
    none of it (the answer does not wait for the body)."""
    settings.LEV_INBOUND_EMAIL_SECRET = SECRET
    host, port = live_server.thread.host, live_server.thread.port
    with socket.create_connection((host, port), timeout=10) as connection:
        connection.sendall(f"POST {URL} HTTP/1.1\r\nHost: {host}\r\nContent-Type: message/rfc822\r\n"
                           f"Content-Length: {1024 ** 3}\r\n\r\n".encode())
        answer = connection.recv(4096).decode("latin-1")
    assert answer.startswith("HTTP/1.1 413")
    assert InboundEmail.objects.count() == 0
