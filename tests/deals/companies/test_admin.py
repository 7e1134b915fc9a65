"""The admin of companies and contacts: account-scoped pages, the formats and the one-account rule of the
API, a deal naming its sponsor and borrower, and the account's own contacts on the (global) lender page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from deals.models import Company, Contact, Deal
from tests.admin_helpers import admin_client, change_form_data, staff_user, superuser
from tests.factories import AccountFactory, DealFactory, LenderFactory, MembershipFactory

pytestmark = pytest.mark.django_db

EVERY = ("view_company", "add_company", "change_company", "view_contact", "add_contact", "change_contact",
         "view_lender", "change_lender", "view_deal", "change_deal")


@pytest.fixture
def two_accounts():
    return AccountFactory(slug="acme", name="Acme"), AccountFactory(slug="rival", name="Rival")


def staff_of(account, username="staffer"):
    user = staff_user(username, *EVERY)
    MembershipFactory(account=account, user=user)
    return user


def test_a_company_is_added_with_its_people_who_belong_to_its_account(two_accounts):
    acme, _rival = two_accounts
    client = admin_client(superuser())
    response = client.post(reverse("admin:deals_company_add"), {
        "account": acme.pk, "kind": "sponsor", "name": "Harbor Capital", "website": "https://harbor.example",
        "location": "Austin, TX", "notes": "",
        "contacts-TOTAL_FORMS": "1", "contacts-INITIAL_FORMS": "0", "contacts-MIN_NUM_FORMS": "0",
        "contacts-MAX_NUM_FORMS": "1000", "contacts-0-name": "Dana Reyes", "contacts-0-title": "Principal",
        "contacts-0-email": "dana@harbor.example", "contacts-0-phone": "+1 512 555 0100",
    })
    assert response.status_code == 302, response.context and response.context["adminform"].form.errors
    company = Company.objects.get(name="Harbor Capital")
    person = Contact.objects.get(company=company)
    assert (company.account, person.account, person.email) == (acme, acme, "dana@harbor.example")
    page = client.get(reverse("admin:deals_company_changelist"))
    assert "Harbor Capital" in page.content.decode()


@pytest.mark.parametrize(("field", "value", "message"), [
    ("website", "javascript:alert(1)", "Enter a web address starting with http:// or https://."),
    ("email", "dana@", "Enter an email address such as name@example.com."),
    ("phone", "call me", "Enter a phone number such as +1 212 555 0100"),
])
def test_the_admin_refuses_what_the_api_refuses(two_accounts, field, value, message):
    acme, _rival = two_accounts
    client = admin_client(superuser())
    company = Company.objects.create(account=acme, kind="sponsor", name="Harbor")
    if field == "website":
        response = client.post(reverse("admin:deals_company_add"), {
            "account": acme.pk, "kind": "sponsor", "name": "X", field: value, **_no_contacts()})
    else:
        response = client.post(reverse("admin:deals_contact_add"), {
            "account": acme.pk, "company": company.pk, "name": "X", field: value})
    assert response.status_code == 200 and message in response.content.decode()
    assert Company.objects.count() == 1 and not Contact.objects.exists()


def _no_contacts() -> dict:
    return {"contacts-TOTAL_FORMS": "0", "contacts-INITIAL_FORMS": "0", "contacts-MIN_NUM_FORMS": "0",
            "contacts-MAX_NUM_FORMS": "1000"}


def test_a_contact_is_at_a_company_of_its_own_account_or_at_a_lender(two_accounts):
    acme, rival = two_accounts
    client = admin_client(superuser())
    theirs = Company.objects.create(account=rival, kind="sponsor", name="Rival Co")
    lender = LenderFactory()
    crossed = client.post(reverse("admin:deals_contact_add"), {"account": acme.pk, "company": theirs.pk, "name": "X"})
    assert "Choose a company of the contact&#x27;s own account." in crossed.content.decode()
    both = client.post(reverse("admin:deals_contact_add"), {"account": acme.pk, "company": theirs.pk,
                                                            "lender": lender.pk, "name": "X"})
    assert "A contact is at a company or at a lender: choose one of them." in both.content.decode()
    assert not Contact.objects.exists()


def test_a_deal_names_a_sponsor_of_its_own_account_only(two_accounts):
    acme, rival = two_accounts
    client = admin_client(superuser())
    deal = DealFactory(account=acme, title="Pine Court")
    ours = Company.objects.create(account=acme, kind="sponsor", name="Harbor")
    theirs = Company.objects.create(account=rival, kind="borrower", name="Rival Owner")
    url = reverse("admin:deals_deal_change", args=[deal.pk])
    data = change_form_data(client.get(url))
    version = deal.version
    refused = client.post(url, {**data, "sponsor": ours.pk, "borrower": theirs.pk})
    assert refused.status_code == 200 and "Choose a company of the deal&#x27;s own account." in refused.content.decode()
    assert Deal.objects.get(pk=deal.pk).borrower_id is None
    saved = client.post(url, {**data, "sponsor": ours.pk})
    assert saved.status_code == 302
    deal.refresh_from_db()
    assert (deal.sponsor_id, deal.version) == (ours.pk, version)  # through the services: not a ranked field


def test_the_lender_page_shows_a_staff_user_their_own_accounts_contacts_only(two_accounts):
    acme, rival = two_accounts
    lender = LenderFactory(name="First Lone Star Bank")
    Contact.objects.create(account=acme, lender=lender, name="Sam Ortiz")
    Contact.objects.create(account=rival, lender=lender, name="Rival Banker")
    url = reverse("admin:lenders_lender_change", args=[lender.pk])
    mine = admin_client(staff_of(acme)).get(url).content.decode()
    assert "Sam Ortiz" in mine and "Rival Banker" not in mine
    assert "your accounts&#x27; contacts at this lender" in mine.lower() or "contacts at this lender" in mine.lower()
    everyone = admin_client(superuser()).get(url).content.decode()
    assert "Sam Ortiz" in everyone and "Rival Banker" in everyone
    listed = admin_client(staff_of(rival, "rivalstaff")).get(reverse("admin:deals_contact_changelist"))
    assert "Rival Banker" in listed.content.decode() and "Sam Ortiz" not in listed.content.decode()
