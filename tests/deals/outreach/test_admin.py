"""The outbox in the admin: the account's emails (what `make run` sent, with no mail server), read-only, with
status, attempts, error and body; the action that withdraws their package links; another account's staff
sees none of them (tests/admin/test_tenancy.py walks every admin for that, this one included)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from deals.outreach import services
from deals.outreach.models import OutboundEmail, OutreachTemplate, PackageLink
from tests.admin_helpers import admin_client, staff_user
from tests.deals.outreach.helpers import outreach_deal, placed
from tests.factories import AccountFactory, MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def outbox_only(settings):
    settings.EMAIL_BACKEND = "lev.mail.OutboxOnlyBackend"  # the embedded default's


def test_the_outbox_shows_what_make_run_sent_and_withdraws_links(account, user, django_capture_on_commit_callbacks):
    deal = outreach_deal(account)
    with django_capture_on_commit_callbacks(execute=True):
        services.outreach_send(deal=deal, placements=placed(deal), user=user)
    assert set(OutboundEmail.objects.values_list("status", flat=True)) == {"sent"}
    staffer = staff_user("sam", "view_outboundemail", "change_placement")
    MembershipFactory(account=account, user=staffer, role="member")
    rival = AccountFactory(name="Rival", slug="rival")
    theirs = outreach_deal(rival, title="Rival tower")
    with django_capture_on_commit_callbacks(execute=True):
        services.outreach_send(deal=theirs, placements=placed(theirs, names=("Other Bank",)), user=None)
    client = admin_client(staffer)

    listed = client.get(reverse("admin:deals_outboundemail_changelist"))
    assert listed.status_code == 200
    html = listed.content.decode()
    assert "Harbor Point Apartments: $12,500,000 permanent loan request" in html
    assert "granite@example.com" in html and "Granite Bank" in html and "Rival tower" not in html
    granite = OutboundEmail.objects.get(to_address="granite@example.com")
    page = client.get(reverse("admin:deals_outboundemail_change", args=[granite.pk]))
    assert page.status_code == 200
    assert "We are arranging a $12,500,000 permanent loan" in page.content.decode()
    assert 'name="_save"' not in page.content.decode()  # read-only

    answer = client.post(reverse("admin:deals_outboundemail_changelist"),
                         {"action": "withdraw_packages", "_selected_action": [granite.pk]}, follow=True)
    assert "1 package link withdrawn." in answer.content.decode()
    assert PackageLink.objects.get(pk=granite.package_id).revoked_at is not None
    assert PackageLink.objects.filter(revoked_at__isnull=False).count() == 1


def test_the_accounts_templates_are_written_in_the_admin_with_the_apis_rules(account, user,
                                                                             django_capture_on_commit_callbacks):
    staffer = staff_user("tess", "view_outreachtemplate", "add_outreachtemplate", "change_outreachtemplate",
                         "delete_outreachtemplate")
    MembershipFactory(account=account, user=staffer, role="member")
    rival = AccountFactory(name="Rival", slug="rival")
    client = admin_client(staffer)
    add = reverse("admin:deals_outreachtemplate_add")

    blank = client.get(add).content.decode()
    assert "We are arranging a $loan_amount $loan_type loan" in blank  # Lev's own text to start from
    assert "<code>$package_link</code>" in blank  # the placeholders it may use, listed

    form = {"account": account.pk, "kind": "teaser", "subject": "$deal_title for $lender_name",
            "body": "Hello $contact_name, $deal_title: $package_link"}
    for bad, said in [({"subject": "Line one\r\nBcc: all@example.com"}, "The subject must be one line"),
                      ({"body": "Hello $who"}, "uses unknown placeholders: $who"),
                      ({"account": rival.pk}, "Select a valid choice")]:
        answer = client.post(add, {**form, **bad})
        assert answer.status_code == 200 and said in answer.content.decode(), bad
    assert not OutreachTemplate.objects.exists()

    assert client.post(add, form).status_code == 302
    saved = OutreachTemplate.objects.get()
    assert (saved.account_id, saved.kind, saved.subject) == (account.pk, "teaser", "$deal_title for $lender_name")
    # One per account and kind: a second teaser template is refused, in words.
    assert "already exists" in client.post(add, form).content.decode()

    deal = outreach_deal(account)
    with django_capture_on_commit_callbacks(execute=True):
        services.outreach_send(deal=deal, placements=placed(deal, names=("Granite Bank",)), user=user)
    assert OutboundEmail.objects.get().subject == "Harbor Point Apartments for Granite Bank"
    # Deleted, Lev's own text is used again.
    client.post(reverse("admin:deals_outreachtemplate_delete", args=[saved.pk]), {"post": "yes"})
    assert services.template_for(account=account, kind="teaser")[2] is False
