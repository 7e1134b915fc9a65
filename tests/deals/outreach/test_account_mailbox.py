"""An account's own replies mailbox (AccountMailbox), polled by beat beside the site's, against the real IMAP
server of test_inbound_imap.py: its replies land on the account's placements; one naming another account's
email is kept for this account to assign and never touches the other's placement; one mailbox refusing
its sign-in is said on it and does not stop the next; the password is encrypted at rest; the admin's form
signs in before it saves and says what is wrong in words; a host that is not on the internet is refused
(the site never connects inside its own network for an account); another account's staff never sees it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.urls import reverse

from deals.outreach.imap import poll_inbound_mailbox
from deals.outreach.models import AccountMailbox, InboundEmail
from deals.placements.models import Placement
from tests.admin_helpers import admin_client, staff_user
from tests.deals.outreach.reply_helpers import emailed, private_storage_at, reply
from tests.deals.outreach.test_inbound_imap import PASSWORD, USER, ImapServer
from tests.deals.outreach.test_inbound_imap import Mailbox as Folder
from tests.factories import AccountFactory, LenderFactory, MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _storage(settings, tmp_path, monkeypatch):
    private_storage_at(monkeypatch, tmp_path)
    settings.LEV_INBOUND_IMAP_HOST = ""  # no site mailbox: the accounts' own only
    settings.LEV_INBOUND_IMAP_TIMEOUT_SECONDS = 10
    settings.LEV_ACCOUNT_MAILBOX_PRIVATE_HOSTS = True  # the test IMAP server is on 127.0.0.1


def mailbox_of(account, port: int, *, password: str = PASSWORD) -> AccountMailbox:
    return AccountMailbox.objects.create(account=account, host="127.0.0.1", port=port, use_ssl=False,
                                         username=USER, password=password)


def test_an_accounts_mailbox_keeps_its_replies_for_it_alone(account):
    mine = emailed(account)
    rival = AccountFactory(name="Rival", slug="rival")
    theirs = emailed(rival, contact_email="jo@harbor.test", lender=LenderFactory(name="Harbor Credit"))
    folder = Folder([reply(mine).as_bytes(),
                     reply(theirs, sender="Jo <jo@harbor.test>").as_bytes(),  # B's tag, in A's mailbox
                     reply(None, to="deals@broker.test").as_bytes()])
    with ImapServer(folder) as server:
        box = mailbox_of(account, server.port)
        assert poll_inbound_mailbox() == {"kept": 3, "duplicates": 0, "unreadable": 0}
    assert all(flags == {"\\Seen"} for _raw, flags in folder.messages.values())
    on_mine = InboundEmail.objects.get(placement_id=mine.placement_id)
    assert on_mine.account_id == account.pk and on_mine.status == "matched"
    # The other account's email named in this account's mailbox: this account's to assign, never applied.
    kept = InboundEmail.objects.exclude(pk=on_mine.pk)
    assert {(r.account_id, r.status, r.placement_id) for r in kept} == {(account.pk, "unmatched", None)}
    assert Placement.objects.get(pk=theirs.placement_id).first_response_at is None
    assert not InboundEmail.objects.filter(account=rival).exists()
    box.refresh_from_db()
    assert box.last_result == "Signed in and kept 3 new replies." and box.last_polled_at is not None


def test_a_refused_sign_in_is_said_on_its_mailbox_and_the_next_is_still_polled(account):
    other = AccountFactory(name="Other", slug="other")
    email = emailed(other, contact_email="jo@harbor.test", lender=LenderFactory(name="Harbor Credit"))
    with ImapServer(Folder([reply(email, sender="Jo <jo@harbor.test>").as_bytes()])) as server:
        refused = mailbox_of(account, server.port, password="wrong")
        polled = mailbox_of(other, server.port)
        assert poll_inbound_mailbox()["kept"] == 1
    refused.refresh_from_db()
    polled.refresh_from_db()
    assert refused.last_result == "The server refused the sign-in: check the username and password."
    assert polled.last_result == "Signed in and kept 1 new reply."
    # The server gone: said so, nothing raised.
    assert poll_inbound_mailbox() == {"kept": 0, "duplicates": 0, "unreadable": 0}
    polled.refresh_from_db()
    assert polled.last_result == "The server could not be reached: check the host, the port and TLS."


def test_the_password_is_encrypted_at_rest(account):
    box = mailbox_of(account, 993)
    with connection.cursor() as cursor:
        cursor.execute("SELECT password FROM deals_accountmailbox WHERE id = %s", [box.pk])
        stored = cursor.fetchone()[0]
    assert PASSWORD not in stored and stored.startswith("gAAAA")  # a Fernet token
    assert AccountMailbox.objects.get(pk=box.pk).password == PASSWORD


def test_the_admin_form_signs_in_before_it_saves_and_keeps_the_password_unshown(account):
    staffer = staff_user("mo", "view_accountmailbox", "add_accountmailbox", "change_accountmailbox")
    MembershipFactory(account=account, user=staffer, role="member")
    rival = AccountFactory(name="Rival", slug="rival")
    client = admin_client(staffer)
    add = reverse("admin:deals_accountmailbox_add")
    with ImapServer(Folder([])) as server:
        form = {"account": account.pk, "host": "127.0.0.1", "port": server.port, "username": USER,
                "password": "wrong", "folder": "INBOX", "enabled": "on"}
        refused = client.post(add, form)
        assert refused.status_code == 200
        assert "The server refused the sign-in: check the username and password." in refused.content.decode()
        assert "Select a valid choice" in client.post(add, {**form, "account": rival.pk}).content.decode()
        assert not AccountMailbox.objects.exists()
        assert client.post(add, {**form, "password": PASSWORD}).status_code == 302
        box = AccountMailbox.objects.get()
        page = client.get(reverse("admin:deals_accountmailbox_change", args=[box.pk])).content.decode()
        assert PASSWORD not in page  # never shown again
        # Saved again with the password left blank: the saved one is kept (and still signs in).
        changed = client.post(reverse("admin:deals_accountmailbox_change", args=[box.pk]),
                              {**form, "password": "", "folder": "Replies"})
        assert changed.status_code == 302, changed.content.decode()[-2000:]
    box.refresh_from_db()
    assert (box.folder, box.password) == ("Replies", PASSWORD)
    # The server gone: the form says so rather than saving a mailbox that cannot be read.
    gone = client.post(reverse("admin:deals_accountmailbox_change", args=[box.pk]), {**form, "password": ""})
    assert "The server could not be reached: check the host, the port and TLS." in gone.content.decode()


def test_a_mailbox_inside_the_sites_own_network_is_refused(account, settings):
    """Without LEV_ACCOUNT_MAILBOX_PRIVATE_HOSTS, a host resolving to a loopback, private or metadata address
    is refused on the form and skipped by the poll, said on the mailbox; nothing is connected to."""
    settings.LEV_ACCOUNT_MAILBOX_PRIVATE_HOSTS = False
    staffer = staff_user("mo", "view_accountmailbox", "add_accountmailbox", "change_accountmailbox")
    MembershipFactory(account=account, user=staffer, role="member")
    client = admin_client(staffer)
    folder = Folder([reply(emailed(account)).as_bytes()])
    with ImapServer(folder) as server:
        for host in ("127.0.0.1", "localhost", "10.0.0.5", "169.254.169.254", "192.0.0.192"):
            refused = client.post(reverse("admin:deals_accountmailbox_add"), {
                "account": account.pk, "host": host, "port": server.port, "username": USER, "password": PASSWORD,
                "folder": "INBOX", "enabled": "on"})
            assert refused.status_code == 200, host
            assert "is not a public one" in refused.content.decode(), host
        assert not AccountMailbox.objects.exists()
        box = mailbox_of(account, server.port)  # saved some other way (the shell, an older release)
        assert poll_inbound_mailbox()["kept"] == 0
    box.refresh_from_db()
    assert box.last_result.startswith("The server's address is not a public one")
    assert folder.commands == []  # never connected to
