"""The home page's chasing figures: emailed placements with no answer, split into "opened, no answer" and
"not opened", counted per account and listed on their own page; another account's never counted."""

from __future__ import annotations

import pytest
from django.urls import reverse

from deals.outreach.chase import chase_counts, silent_placements
from deals.outreach.inbound import inbound_receive
from deals.outreach.models import OutboundEmail, OutreachEvent
from lev.accounts.models import Membership
from tests.admin_helpers import admin_client, staff_user
from tests.deals.outreach.reply_helpers import emailed, reply
from tests.factories import AccountFactory, LenderFactory, MembershipFactory

pytestmark = pytest.mark.django_db


def opened(email):
    OutreachEvent.objects.create(account=email.account, deal=email.placement.deal, placement=email.placement,
                                 kind="opened", email=email)


def test_counts_and_lists(account, settings):
    other = AccountFactory(name="Other", slug="other")
    first = emailed(account, lender=LenderFactory(name="Granite Bank"))
    deal = first.placement.deal
    second = emailed(account, contact_email="sam@harbor.test", lender=LenderFactory(name="Harbor Credit"), deal=deal)
    third = emailed(account, contact_email="kim@pine.test", lender=LenderFactory(name="Pine Trust"), deal=deal)
    opened(first)
    opened(second)
    theirs = emailed(other, contact_email="bob@granitebank.com")
    opened(theirs)
    assert chase_counts(accounts=[account]) == [{"account": account, "opened": 2, "not_opened": 1}]
    # Second answers: no longer silent.
    inbound_receive(raw=reply(second, sender="sam@harbor.test").as_bytes())
    assert chase_counts(accounts=[account]) == [{"account": account, "opened": 1, "not_opened": 1}]
    assert [p.pk for p in silent_placements(accounts=[account], which="opened")] == [first.placement_id]
    assert [p.pk for p in silent_placements(accounts=[account], which="not_opened")] == [third.placement_id]

    user = staff_user("alice", "view_inboundemail", "view_placement", "view_deal")
    MembershipFactory(account=account, user=user)
    client = admin_client(user)
    home = client.get(reverse("admin:index"))
    assert home.status_code == 200
    assert b"1 opened, no answer" in home.content and b"1 not opened" in home.content
    page = client.get(reverse("admin:deals_outreach_chase", args=["opened"]) + f"?account={account.pk}")
    assert page.status_code == 200
    names = [row["placement"].lender.name for row in page.context["rows"]]
    assert names == ["Granite Bank"]
    # The other account's silent lender is never on this person's list.
    other_page = client.get(reverse("admin:deals_outreach_chase", args=["opened"]) + f"?account={other.pk}")
    assert other_page.context["rows"] == []
    assert client.get(reverse("admin:deals_outreach_chase", args=["nonsense"])).status_code == 404


def test_the_follow_up_button_sends_through_the_outbox_and_keeps_tenancy(account):
    other = AccountFactory(name="Other", slug="other")
    first = emailed(account)
    deal = first.placement.deal
    theirs = emailed(other, contact_email="bob@granitebank.com")
    user = staff_user("alice", "view_inboundemail", "view_placement", "view_deal")
    MembershipFactory(account=account, user=user)
    client = admin_client(user)
    page = client.get(reverse("admin:deals_outreach_chase", args=["not_opened"]))
    assert [d["deal"].pk for d in page.context["deals"]] == [deal.pk] and b"Send a follow-up" in page.content
    url = reverse("admin:deals_outreach_follow_up")
    assert client.get(url).status_code == 405
    # Another account's deal: not found, nothing sent.
    assert client.post(url, {"deal": theirs.placement.deal_id, "which": "opened"}).status_code == 404
    assert client.post(url, {"deal": "9" * 40}).status_code == 404
    answer = client.post(url, {"deal": deal.pk, "which": "not_opened"})
    assert answer.status_code == 302
    follow_up = OutboundEmail.objects.get(kind="follow_up")
    assert follow_up.placement_id == first.placement_id and follow_up.to_address == "jane@granitebank.com"
    assert not OutboundEmail.objects.filter(account=other, kind="follow_up").exists()
    # A viewer of the account may not send.
    viewer = staff_user("vic", "view_inboundemail")
    MembershipFactory(account=account, user=viewer, role=Membership.Role.VIEWER)
    assert admin_client(viewer).post(url, {"deal": deal.pk}).status_code == 403
    assert OutboundEmail.objects.filter(kind="follow_up").count() == 1
