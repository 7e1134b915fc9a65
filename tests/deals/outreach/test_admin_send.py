"""The deal page's "Email lenders" in the admin (deals.outreach.admin_send): the page names each lender and
the address it would email (or why not), the documents each package would share and the email as it
reads; Send queues through the services REST and MCP use, and the mail really goes (the embedded
default's outbox backend here; tests/deals/outreach/test_e2e.py crosses a real SMTP server). A second
Send emails no one twice; bad form input is a message, never a 500; another account's deal is "not
found"; who may only view cannot send."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils.html import escape

from deals.models import Placement
from deals.outreach.models import OutboundEmail, PackageLink
from deals.outreach.services import PREVIEW_LINK
from tests.admin_helpers import admin_client, staff_user
from tests.deals.outreach.helpers import document, outreach_deal, placed
from tests.factories import AccountFactory, MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def outbox_only(settings):
    settings.EMAIL_BACKEND = "lev.mail.OutboxOnlyBackend"  # the embedded default's


@pytest.fixture(autouse=True)
def _remove_files():
    yield
    from deals.documents.models import DocumentVersion

    for version in DocumentVersion.objects.all():
        version.file.delete(save=False)


@pytest.fixture
def staffer(account):
    user = staff_user("sam", "view_deal", "change_deal", "view_outboundemail")
    MembershipFactory(account=account, user=user, role="member")
    return user


@pytest.fixture
def deal(account):
    return outreach_deal(account)


def url(deal) -> str:
    return reverse("admin:deals_deal_email_lenders", args=[deal.pk])


def test_the_page_names_the_lenders_the_documents_and_the_email_and_send_emails_them_once(
        staffer, deal, django_capture_on_commit_callbacks):
    granite, harbor, summit = placed(deal, emails={"Summit Credit Union": ""})
    om = document(deal)
    rent_roll = document(deal, name="Rent roll", kind="rent_roll", file_name="rent roll.pdf")
    client = admin_client(staffer)

    deal_page = client.get(reverse("admin:deals_deal_change", args=[deal.pk])).content.decode()
    assert url(deal) in deal_page  # the Placements panel links to it
    page = client.get(url(deal))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Pat of Granite Bank &lt;granite@example.com&gt;" in html
    assert f'name="placement_ids" value="{granite.pk}" id="placement-{granite.pk}" checked' in html
    assert f'value="{summit.pk}"' not in html  # no address: not offered, and said why
    assert "No email address: add an email to the contact at Summit Credit Union." in html
    assert f'value="{om.pk}" id="document-{om.pk}" checked' in html  # the OM is shared unless unticked
    assert f'value="{rent_roll.pk}" id="document-{rent_roll.pk}">' in html  # others are offered, not ticked
    assert "We are arranging a $12,500,000 permanent loan" in html and escape(PREVIEW_LINK) in html
    assert not OutboundEmail.objects.exists()  # looking sends nothing

    with django_capture_on_commit_callbacks(execute=True):
        sent = client.post(url(deal), {"placement_ids": [str(granite.pk), str(harbor.pk)],
                                       "document_ids": [str(om.pk)], "expires_in_days": "14"}, follow=True)
    assert sent.status_code == 200
    assert sent.redirect_chain[-1][0].endswith(reverse("admin:deals_deal_change", args=[deal.pk]) + "#placements")
    assert "Emailing 2 lenders: Granite Bank, Harbor Life." in sent.content.decode()
    emails = OutboundEmail.objects.order_by("to_address")
    assert [(e.to_address, e.status) for e in emails] == [("granite@example.com", "sent"),
                                                          ("harbor@example.com", "sent")]
    for email in emails:
        assert list(email.package.documents.all()) == [om]
        assert (email.package.expires_at - email.created_at).days == 14
    assert {p.status for p in Placement.objects.filter(pk__in=[granite.pk, harbor.pk])} == {"sent"}
    assert Placement.objects.get(pk=summit.pk).status == "draft"
    # "This deal's outbox": the deal's emails alone.
    outbox = client.get(reverse("admin:deals_outboundemail_changelist") + f"?placement__deal__id__exact={deal.pk}")
    assert outbox.status_code == 200 and "granite@example.com" in outbox.content.decode()
    other = outreach_deal(deal.account, title="Another deal")
    elsewhere = client.get(reverse("admin:deals_outboundemail_changelist") + f"?placement__deal__id__exact={other.pk}")
    assert elsewhere.status_code == 200 and "granite@example.com" not in elsewhere.content.decode()

    # Sent placements are still offered (one may have been marked sent by hand), not ticked; sending
    # again emails no one twice and says so.
    again = client.get(url(deal)).content.decode()
    assert f'value="{granite.pk}" id="placement-{granite.pk}" checked' not in again
    assert "Already sent: Granite Bank was emailed this deal&#x27;s teaser." in again
    with django_capture_on_commit_callbacks(execute=True):
        twice = client.post(url(deal), {"placement_ids": [str(granite.pk)]}, follow=True)
    assert "Already sent: Granite Bank was emailed this deal&#x27;s teaser." in twice.content.decode()
    assert OutboundEmail.objects.count() == 2


def test_bad_form_input_is_a_message_and_sends_nothing(staffer, deal, account, django_capture_on_commit_callbacks):
    granite, *_ = placed(deal)
    other = placed(outreach_deal(account, title="Another deal"), names=("Other Bank",))[0]
    theirs = document(outreach_deal(AccountFactory(slug="rival")), name="Their OM")
    client = admin_client(staffer)
    cases = [
        ({}, "Tick one or more lenders to email."),
        ({"placement_ids": ["x", "-1", "99999999999"]}, "Tick one or more lenders to email."),
        ({"placement_ids": [str(other.pk)]}, "not found"),
        ({"placement_ids": [str(granite.pk)], "document_ids": [str(theirs.pk)]}, "not found"),
        ({"placement_ids": [str(granite.pk)], "expires_in_days": "9999"}, "expires in days"),
        ({"placement_ids": [str(granite.pk)], "expires_in_days": "soon"}, "expires in days"),
    ]
    for form, said in cases:
        with django_capture_on_commit_callbacks(execute=True):
            answer = client.post(url(deal), form, follow=True)
        assert answer.status_code == 200, form
        assert said.lower() in answer.content.decode().lower(), (form, said)
    assert not OutboundEmail.objects.exists() and not PackageLink.objects.exists()
    assert Placement.objects.get(pk=granite.pk).status == "draft"


def test_another_accounts_deal_is_not_found_and_nothing_is_sent(staffer, django_capture_on_commit_callbacks):
    rival = outreach_deal(AccountFactory(slug="rival"), title="Rival tower")
    theirs = placed(rival, names=("Other Bank",))[0]
    client = admin_client(staffer)
    assert client.get(url(rival)).status_code in (302, 404)  # the admin's "not found"
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(url(rival), {"placement_ids": [str(theirs.pk)]}).status_code in (302, 404)
    assert not OutboundEmail.objects.exists()
    assert "Rival tower" not in client.get(url(rival), follow=True).content.decode()


@pytest.mark.parametrize(("permissions", "role"),
                         [(("view_deal",), "member"), (("view_deal", "change_deal"), "viewer")],
                         ids=["view-permission-only", "viewer-role"])
def test_who_may_only_view_sees_no_send_and_cannot_post_one(account, deal, permissions, role,
                                                            django_capture_on_commit_callbacks):
    granite, *_ = placed(deal)
    viewer = staff_user("viewer", *permissions)
    MembershipFactory(account=account, user=viewer, role=role)
    client = admin_client(viewer)
    page = client.get(url(deal)).content.decode()
    assert "granite@example.com" in page
    assert 'id="send-emails"' not in page and 'name="placement_ids"' not in page
    assert "cannot send email" in page
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(url(deal), {"placement_ids": [str(granite.pk)]}, follow=True)
    assert answer.status_code in (200, 403)
    assert not OutboundEmail.objects.exists()


def test_an_archived_deal_is_not_sent(staffer, deal, django_capture_on_commit_callbacks):
    granite, *_ = placed(deal)
    deal.archived = True
    deal.save(update_fields=["archived"])
    client = admin_client(staffer)
    assert "The deal is archived" in client.get(url(deal)).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(url(deal), {"placement_ids": [str(granite.pk)]}, follow=True)
    # No form offers it; a forged post is refused (an archived deal cannot be changed in the admin).
    assert answer.status_code == 403 or "archived" in answer.content.decode().lower()
    assert not OutboundEmail.objects.exists()
