"""Replies kept "to assign" in the admin: a member assigns its account's reply to a placement of the same
account, which applies it as a matched reply (attachments included, from the kept message); another
account's reply, or one naming no account, is not reachable by a member; a viewer cannot assign."""

from __future__ import annotations

import pytest
from django.urls import reverse

from deals.documents.models import Document
from deals.notes.models import Note
from deals.outreach.inbound import inbound_receive
from deals.outreach.models import OutreachEvent
from deals.placements.models import Placement
from lev.accounts.models import Membership
from tests.admin_helpers import admin_client, staff_user, superuser
from tests.deals.outreach.reply_helpers import PDF_BYTES, emailed, private_storage_at, reply
from tests.factories import AccountFactory, MembershipFactory

pytestmark = pytest.mark.django_db
PERMISSIONS = ("view_inboundemail", "view_placement", "change_placement", "view_deal")


@pytest.fixture(autouse=True)
def documents_storage(tmp_path, monkeypatch):
    private_storage_at(monkeypatch, tmp_path)


def member(account, username="alice", role=Membership.Role.MEMBER):
    user = staff_user(username, *PERMISSIONS)
    MembershipFactory(account=account, user=user, role=role)
    return user


def colleague_reply(email):
    message = reply(email, sender="Tom Colleague <tom@granitebank.com>",
                    attachments=(("Term sheet.pdf", PDF_BYTES, "application/pdf"),))
    return inbound_receive(raw=message.as_bytes()).inbound


def test_a_member_assigns_a_reply_and_it_is_applied(account):
    email = emailed(account)
    inbound = colleague_reply(email)
    assert inbound.status == "unmatched" and Document.objects.count() == 0
    client = admin_client(member(account))
    listing = client.get(reverse("admin:deals_inboundemail_changelist"))
    assert listing.status_code == 200 and b"tom@granitebank.com" in listing.content
    page = client.get(reverse("admin:deals_inboundemail_change", args=[inbound.pk]))
    assert b"Assign to a placement" in page.content
    url = reverse("admin:deals_inboundemail_assign", args=[inbound.pk])
    form = client.get(url)
    assert form.status_code == 200 and form.context["form"].initial["placement"] == email.placement_id
    assert b"The sender is not the lender" in form.content
    done = client.post(url, {"placement": email.placement_id})
    assert done.status_code == 302
    inbound.refresh_from_db()
    assert inbound.status == "assigned" and inbound.placement_id == email.placement_id
    assert inbound.assigned_by is not None and inbound.reason == ""
    placement = Placement.objects.get(pk=email.placement_id)
    assert placement.status == "reviewing" and placement.first_response_at is not None
    assert Note.objects.get(kind="email").deal_id == placement.deal_id
    assert OutreachEvent.objects.filter(placement=placement, kind="replied").count() == 1
    assert Document.objects.get().kind == "term_sheet"
    # Assigning again changes nothing.
    assert client.post(url, {"placement": email.placement_id}).status_code == 302
    assert Note.objects.count() == 1 and Document.objects.count() == 1


def test_a_placement_of_another_account_cannot_be_chosen(account):
    other = AccountFactory(name="Other", slug="other")
    inbound = colleague_reply(emailed(account))
    theirs = emailed(other, contact_email="bob@granitebank.com")
    client = admin_client(member(account))
    answer = client.post(reverse("admin:deals_inboundemail_assign", args=[inbound.pk]),
                         {"placement": theirs.placement_id})
    assert answer.status_code == 200 and answer.context["form"].errors  # not a choice
    inbound.refresh_from_db()
    assert inbound.status == "unmatched"
    assert Placement.objects.get(pk=theirs.placement_id).status == "sent"


def test_tenancy_of_replies(account):
    other = AccountFactory(name="Other", slug="other")
    inbound = colleague_reply(emailed(account))
    nobody = inbound_receive(raw=reply(None, to="reply+unknown@r.lev.test").as_bytes()).inbound
    assert nobody.account_id is None
    outsider = admin_client(member(other, "mallory"))
    listing = outsider.get(reverse("admin:deals_inboundemail_changelist"))
    assert b"tom@granitebank.com" not in listing.content
    assert outsider.get(reverse("admin:deals_inboundemail_assign", args=[inbound.pk])).status_code == 404
    mine = admin_client(member(account))
    assert mine.get(reverse("admin:deals_inboundemail_assign", args=[nobody.pk])).status_code == 404
    viewer = admin_client(member(account, "vic", role=Membership.Role.VIEWER))
    assert viewer.post(reverse("admin:deals_inboundemail_assign", args=[inbound.pk]),
                       {"placement": inbound.pk}).status_code == 403
    # The operators see and assign a reply that names no account.
    ops = admin_client(superuser())
    email = emailed(other, contact_email="bob@granitebank.com")
    assert ops.post(reverse("admin:deals_inboundemail_assign", args=[nobody.pk]),
                    {"placement": email.placement_id}).status_code == 302
    nobody.refresh_from_db()
    assert (nobody.status, nobody.account_id) == ("assigned", other.pk)


def test_the_list_puts_replies_to_assign_first_and_says_what_became_of_attachments(account):
    email = emailed(account)
    matched = inbound_receive(raw=reply(email, attachments=(
        ("Term sheet.pdf", PDF_BYTES, "application/pdf"), ("fake.pdf", b"MZ not a pdf", "application/pdf"),
    )).as_bytes()).inbound
    waiting = colleague_reply(email)
    client = admin_client(member(account))
    listing = client.get(reverse("admin:deals_inboundemail_changelist"))
    assert [row.pk for row in listing.context["cl"].result_list] == [waiting.pk, matched.pk]
    page = client.get(reverse("admin:deals_inboundemail_change", args=[matched.pk]))
    text = page.content.decode()
    assert "Term sheet.pdf — kept as the deal&#x27;s term sheet" in text and "fake.pdf — refused:" in text
    assert "Assign to a placement" not in text  # already on its placement
