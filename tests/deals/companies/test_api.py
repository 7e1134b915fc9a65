"""REST API of companies and contacts: create, read, change, filters and pages, validation from
lev.limits, idempotent creates, tenancy (another account's company, contact or lender contact is a
404 like a missing one and never listed), a deal's sponsor and borrower, a placement's lender contact,
and scopes."""

from __future__ import annotations

import pytest

from deals.models import Company, Contact, Deal, Placement
from lev import limits
from lev.accounts.services import api_key_create
from tests.conftest import client_with_key
from tests.deals.placements.helpers import deal_with_financials, lenders
from tests.deals.test_api import assert_error
from tests.factories import DealFactory, LenderFactory

pytestmark = pytest.mark.django_db


def company(client, **fields) -> dict:
    response = client.post("/api/v1/companies/", {"kind": "sponsor", "name": "Harbor Capital", **fields},
                           format="json")
    assert response.status_code == 201, response.content
    return response.json()


def contact(client, path: str, **fields) -> dict:
    response = client.post(path, {"name": "Dana Reyes", **fields}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


# --- companies ----------------------------------------------------------------------------------------
def test_a_company_is_created_read_changed_and_listed_by_kind_and_name(api, account):
    made = company(api, website="https://harbor.example.com", location="Austin, TX", notes="Repeat client")
    assert made["kind"] == "sponsor" and made["contact_count"] == 0 and made["location"] == "Austin, TX"
    assert Company.objects.get(pk=made["id"]).account == account
    company(api, kind="borrower", name="Harbor Owner LLC")
    company(api, kind="broker", name="Delta Brokers")

    got = api.get(f"/api/v1/companies/{made['id']}/").json()
    assert got["website"] == "https://harbor.example.com" and got["notes"] == "Repeat client"
    changed = api.patch(f"/api/v1/companies/{made['id']}/", {"notes": "", "location": "Dallas, TX"},
                        format="json").json()
    assert (changed["notes"], changed["location"], changed["name"]) == ("", "Dallas, TX", "Harbor Capital")

    every = api.get("/api/v1/companies/").json()
    assert [c["name"] for c in every["results"]] == ["Delta Brokers", "Harbor Capital", "Harbor Owner LLC"]
    assert every["count"] == 3
    assert [c["name"] for c in api.get("/api/v1/companies/?kind=borrower").json()["results"]] == ["Harbor Owner LLC"]
    assert [c["name"] for c in api.get("/api/v1/companies/?search=harbor").json()["results"]] == [
        "Harbor Capital", "Harbor Owner LLC"]
    page = api.get("/api/v1/companies/?page_size=2&page=2").json()
    assert [c["name"] for c in page["results"]] == ["Harbor Owner LLC"] and page["next"] is None


@pytest.mark.parametrize(("body", "message"), [
    ({"kind": "sponsor"}, "Validation failed: name is required"),
    ({"kind": "lender", "name": "X"}, "Validation failed: kind must be one of: sponsor, borrower, broker, other"),
    ({"kind": "sponsor", "name": "X", "website": "harbor.example.com"},
     "Validation failed: website must be a web address starting with http:// or https://"),
    ({"kind": "sponsor", "name": "X", "website": "javascript:alert(1)"}, "Validation failed: website must be"),
    ({"kind": "sponsor", "name": "x" * (limits.COMPANY_NAME_MAX + 1)},
     f"Validation failed: name must be at most {limits.COMPANY_NAME_MAX} characters"),
    ({"kind": "sponsor", "name": "X", "notes": "n" * (limits.COMPANY_NOTES_MAX + 1)}, "Validation failed: notes"),
    ({"kind": "sponsor", "name": "X", "owner": "me"}, "Validation failed: owner"),
])
def test_a_company_that_breaks_a_rule_is_refused_with_the_field_named(api, body, message):
    assert_error(api.post("/api/v1/companies/", body, format="json"), 400, "VALIDATION_ERROR", message)
    assert not Company.objects.exists()


def test_a_repeated_idempotency_key_creates_one_company(api):
    first = api.post("/api/v1/companies/", {"kind": "sponsor", "name": "Once"}, format="json",
                     HTTP_IDEMPOTENCY_KEY="company-1")
    again = api.post("/api/v1/companies/", {"kind": "sponsor", "name": "Once"}, format="json",
                     HTTP_IDEMPOTENCY_KEY="company-1")
    assert first.status_code == again.status_code == 201 and first.json()["id"] == again.json()["id"]
    assert Company.objects.count() == 1
    other = api.post("/api/v1/companies/", {"kind": "sponsor", "name": "Different"}, format="json",
                     HTTP_IDEMPOTENCY_KEY="company-1")
    assert_error(other, 409, "CONFLICT", "")
    assert Company.objects.count() == 1


# --- contacts -----------------------------------------------------------------------------------------
def test_people_at_a_company_and_the_accounts_own_contacts_at_a_lender(api):
    sponsor = company(api)
    lender = LenderFactory(name="First Lone Star Bank")
    dana = contact(api, f"/api/v1/companies/{sponsor['id']}/contacts/", title="Principal",
                   email="dana@harbor.example.com", phone="+1 (512) 555-0100 x12")
    contact(api, f"/api/v1/companies/{sponsor['id']}/contacts/", name="Ann Lee")
    banker = contact(api, f"/api/v1/lenders/{lender.id}/contacts/", name="Sam Ortiz", email="sam@bank.example.com")
    assert (dana["company_id"], dana["company_name"], dana["lender_id"]) == (sponsor["id"], "Harbor Capital", None)
    assert (banker["lender_id"], banker["lender_name"], banker["company_id"]) == (lender.id, lender.name, None)

    at_company = api.get(f"/api/v1/companies/{sponsor['id']}/contacts/").json()
    assert [c["name"] for c in at_company["results"]] == ["Ann Lee", "Dana Reyes"]
    assert api.get(f"/api/v1/companies/{sponsor['id']}/").json()["contact_count"] == 2
    assert [c["name"] for c in api.get(f"/api/v1/lenders/{lender.id}/contacts/").json()["results"]] == ["Sam Ortiz"]
    changed = api.patch(f"/api/v1/contacts/{dana['id']}/", {"title": "Managing Partner", "phone": None},
                        format="json").json()
    assert (changed["title"], changed["phone"], changed["email"]) == ("Managing Partner", "", "dana@harbor.example.com")
    assert api.get(f"/api/v1/contacts/{banker['id']}/").json()["name"] == "Sam Ortiz"
    missing_lender = api.get(f"/api/v1/lenders/{lender.id + 999}/contacts/")
    assert_error(missing_lender, 404, "NOT_FOUND", "Lender not found")


@pytest.mark.parametrize(("body", "message"), [
    ({"email": "dana@"}, "Validation failed: email must be an email address"),
    ({"phone": "call me"}, "Validation failed: phone must be a phone number"),
    ({"phone": "12"}, "Validation failed: phone must be a phone number"),
    ({"name": " "}, "Validation failed: name may not be blank"),
    ({"title": "t" * (limits.CONTACT_TITLE_MAX + 1)},
     f"Validation failed: title must be at most {limits.CONTACT_TITLE_MAX} characters"),
])
def test_a_contact_that_breaks_a_rule_is_refused(api, body, message):
    sponsor = company(api)
    response = api.post(f"/api/v1/companies/{sponsor['id']}/contacts/", {"name": "Dana", **body}, format="json")
    assert_error(response, 400, "VALIDATION_ERROR", message)
    assert not Contact.objects.exists()


# --- tenancy ------------------------------------------------------------------------------------------
def test_another_accounts_companies_and_contacts_are_missing_and_never_listed(api, other_api):
    theirs = company(other_api, name="Rival Sponsor")
    lender = LenderFactory()
    their_person = contact(other_api, f"/api/v1/companies/{theirs['id']}/contacts/")
    their_banker = contact(other_api, f"/api/v1/lenders/{lender.id}/contacts/", name="Their Banker")
    company(api, name="Mine")

    for response in (
        api.get(f"/api/v1/companies/{theirs['id']}/"),
        api.patch(f"/api/v1/companies/{theirs['id']}/", {"name": "Taken"}, format="json"),
        api.get(f"/api/v1/companies/{theirs['id']}/contacts/"),
        api.post(f"/api/v1/companies/{theirs['id']}/contacts/", {"name": "Spy"}, format="json"),
    ):
        body = assert_error(response, 404, "NOT_FOUND", f"Company not found: {theirs['id']}")
        # Exactly the answer of a company that does not exist.
        missing = assert_error(api.get(f"/api/v1/companies/{theirs['id'] + 999}/"), 404, "NOT_FOUND",
                               f"Company not found: {theirs['id'] + 999}")
        assert body["details"] == {**missing["details"], "id": str(theirs["id"])} == {
            "resource": "company", "id": str(theirs["id"])}
    for contact_id in (their_person["id"], their_banker["id"]):
        assert_error(api.get(f"/api/v1/contacts/{contact_id}/"), 404, "NOT_FOUND", f"Contact not found: {contact_id}")
        assert_error(api.patch(f"/api/v1/contacts/{contact_id}/", {"name": "X"}, format="json"), 404, "NOT_FOUND",
                     f"Contact not found: {contact_id}")
    # A bad page is refused by name before the company is looked up, whoever's it is.
    assert_error(api.get(f"/api/v1/companies/{theirs['id']}/contacts/?page=0"), 400, "VALIDATION_ERROR",
                 "Validation failed: page")
    assert_error(api.get(f"/api/v1/lenders/{lender.id + 999}/contacts/?page_size=0"), 400, "VALIDATION_ERROR",
                 "Validation failed: page_size")
    assert [c["name"] for c in api.get("/api/v1/companies/").json()["results"]] == ["Mine"]
    # The lender is everyone's; the contacts there are each account's own.
    assert api.get(f"/api/v1/lenders/{lender.id}/contacts/").json()["results"] == []
    assert Company.objects.get(pk=theirs["id"]).name == "Rival Sponsor"
    assert Contact.objects.filter(name="Spy").count() == 0


# --- a deal's sponsor and borrower --------------------------------------------------------------------
def test_a_deal_names_its_sponsor_and_borrower_and_never_another_accounts_company(api, other_api):
    sponsor, borrower = company(api), company(api, kind="borrower", name="Harbor Owner LLC")
    theirs = company(other_api, name="Rival Sponsor")
    made = api.post("/api/v1/deals/", {"title": "Pine Court", "sponsor_id": sponsor["id"],
                                       "borrower_id": borrower["id"]}, format="json")
    assert made.status_code == 201, made.content
    deal = made.json()
    assert deal["sponsor"] == {"id": sponsor["id"], "name": "Harbor Capital", "kind": "sponsor"}
    assert deal["borrower"]["name"] == "Harbor Owner LLC"
    assert api.get(f"/api/v1/deals/{deal['id']}/").json()["sponsor"]["id"] == sponsor["id"]

    refused = api.post("/api/v1/deals/", {"title": "Stolen", "sponsor_id": theirs["id"]}, format="json")
    assert_error(refused, 404, "NOT_FOUND", f"Company not found: {theirs['id']}")
    assert not Deal.objects.filter(title="Stolen").exists()
    patched = api.patch(f"/api/v1/deals/{deal['id']}/", {"borrower_id": theirs["id"]}, format="json")
    assert_error(patched, 404, "NOT_FOUND", f"Company not found: {theirs['id']}")
    assert Deal.objects.get(pk=deal["id"]).borrower_id == borrower["id"]

    version = Deal.objects.get(pk=deal["id"]).version
    cleared = api.patch(f"/api/v1/deals/{deal['id']}/", {"sponsor_id": None}, format="json").json()
    assert cleared["sponsor"] is None and cleared["borrower"]["id"] == borrower["id"]
    # Like its owner, who sponsors or borrows is not what a lender search ranks: the version stays.
    assert Deal.objects.get(pk=deal["id"]).version == version and Deal.objects.get(pk=deal["id"]).sponsor is None
    same = api.patch(f"/api/v1/deals/{deal['id']}/", {"borrower_id": borrower["id"]}, format="json")
    assert same.status_code == 200 and Deal.objects.get(pk=deal["id"]).version == version
    assert_error(api.patch(f"/api/v1/deals/{deal['id']}/", {"sponsor_id": 0}, format="json"), 400,
                 "VALIDATION_ERROR", "Validation failed: sponsor_id")


# --- a placement's lender contact ---------------------------------------------------------------------
def test_a_placement_is_sent_to_the_accounts_contact_at_its_lender(api, account, other_api):
    deal = deal_with_financials(account)
    bank, fund = lenders(2)
    sam = contact(api, f"/api/v1/lenders/{bank.id}/contacts/", name="Sam Ortiz", email="sam@bank.example.com")
    fund_person = contact(api, f"/api/v1/lenders/{fund.id}/contacts/", name="Fay Fund")
    theirs = contact(other_api, f"/api/v1/lenders/{bank.id}/contacts/", name="Their Banker")
    sponsor = company(api)
    at_company = contact(api, f"/api/v1/companies/{sponsor['id']}/contacts/")

    made = api.post(f"/api/v1/deals/{deal.id}/placements/", {"lender_ids": [bank.id, fund.id],
                                                             "contact_ids": [sam["id"]]}, format="json").json()
    to_bank = next(p for p in made["placements"] if p["lender_id"] == bank.id)
    to_fund = next(p for p in made["placements"] if p["lender_id"] == fund.id)
    assert (to_bank["contact_id"], to_bank["contact_name"], to_bank["contact_email"]) == (
        sam["id"], "Sam Ortiz", "sam@bank.example.com")
    assert (to_fund["contact_id"], to_fund["contact_name"]) == (None, "")

    path = f"/api/v1/placements/{to_fund['id']}/"
    assert_error(api.patch(path, {"contact_id": theirs["id"]}, format="json"), 404, "NOT_FOUND",
                 f"Contact not found: {theirs['id']}")
    wrong = assert_error(api.patch(path, {"contact_id": sam["id"]}, format="json"), 409, "BUSINESS_RULE",
                         f"Not allowed: contact {sam['id']} is at lender {bank.id}; the placement's lender is "
                         f"{fund.id}")
    assert wrong["details"] == {"contact_id": sam["id"], "lender_id": fund.id, "customer_message": (
        "That person is not one of your contacts at this lender. Choose a contact at this lender, or add one.")}
    assert_error(api.patch(path, {"contact_id": at_company["id"]}, format="json"), 409, "BUSINESS_RULE",
                 f"Not allowed: contact {at_company['id']} is at company {sponsor['id']}, not at a lender")
    assert Placement.objects.get(pk=to_fund["id"]).contact_id is None
    # The contact fills in who it went to, unless that is given too; clearing it keeps what was written.
    chosen = api.patch(path, {"contact_id": fund_person["id"], "contact_email": "desk@fund.example.com"},
                       format="json").json()
    assert (chosen["contact_id"], chosen["contact_name"], chosen["contact_email"]) == (
        fund_person["id"], "Fay Fund", "desk@fund.example.com")
    cleared = api.patch(path, {"contact_id": None}, format="json").json()
    assert (cleared["contact_id"], cleared["contact_name"]) == (None, "Fay Fund")

    other_deal = deal_with_financials(account)
    second = Contact.objects.create(account=account, lender=bank, name="Second").pk
    for ids, status, message in (
        ([theirs["id"]], 404, f"Contact not found: {theirs['id']}"),
        ([fund_person["id"]], 409, f"Not allowed: contact {fund_person['id']} is at lender {fund.id}, which this "
                                   "call does not place"),
        ([at_company["id"]], 409, f"Not allowed: contact {at_company['id']} is at company {sponsor['id']}, not at "
                                  "a lender"),
        ([sam["id"], second], 400, f"Validation failed: contact_ids contacts {sam['id']} and {second} are both at "
                                   f"lender {bank.id}; name one per lender"),
    ):
        response = api.post(f"/api/v1/deals/{other_deal.id}/placements/",
                            {"lender_ids": [bank.id], "contact_ids": ids}, format="json")
        assert (response.status_code, response.json()["message"]) == (status, message)
    assert not Placement.objects.filter(deal=other_deal).exists()


# --- scopes -------------------------------------------------------------------------------------------
def test_companies_are_read_with_deals_read_and_written_with_deals_write(user, account):
    _key, raw = api_key_create(user=user, account=account, name="reader", scopes=frozenset({"deals:read"}))
    reader = client_with_key(raw)
    _key, raw = api_key_create(user=user, account=account, name="placer", scopes=frozenset({"placements:read"}))
    placer = client_with_key(raw)
    made = Company.objects.create(account=account, kind="sponsor", name="Harbor")
    assert reader.get("/api/v1/companies/").status_code == 200
    assert reader.get(f"/api/v1/companies/{made.pk}/").status_code == 200
    assert_error(reader.post("/api/v1/companies/", {"kind": "sponsor", "name": "X"}, format="json"), 403,
                 "FORBIDDEN", "Forbidden: this needs the scope deals:write")
    assert_error(reader.post(f"/api/v1/companies/{made.pk}/contacts/", {"name": "X"}, format="json"), 403,
                 "FORBIDDEN", "Forbidden: this needs the scope deals:write")
    assert_error(placer.get("/api/v1/companies/"), 403, "FORBIDDEN", "Forbidden: this needs the scope deals:read")
    assert DealFactory(account=account)  # the deal list is the same scope's
    assert Company.objects.count() == 1 and not Contact.objects.exists()
