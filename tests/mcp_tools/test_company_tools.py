"""Company and contact tools through the real /mcp endpoint (official client, live server): a sponsor
with its people, lender contacts a placement is sent to, a deal naming its sponsor and borrower,
tenancy, validation, idempotent creates, annotations and the byte budget."""

from __future__ import annotations

import pytest

from deals.models import Company, Contact
from lev.accounts.services import api_key_create
from mcp_tools import budget
from tests.deals.placements.helpers import deal_with_financials, lenders
from tests.factories import AccountFactory, LenderFactory, MembershipFactory, UserFactory
from tests.mcp_helpers import McpCaller

pytestmark = pytest.mark.django_db(transaction=True)

READS = {"list_companies", "get_company", "list_contacts"}
UPDATES = {"update_company", "update_contact"}
CREATES = {"create_company", "add_contact"}


@pytest.fixture
def other_mcp(live_server):
    account = AccountFactory(slug="rival", name="Rival Holdings")
    member = MembershipFactory(account=account, user=UserFactory(username="mallory"))
    _key, raw = api_key_create(user=member.user, account=account, name="test")
    return McpCaller(live_server.url, raw)


def test_the_tools_are_listed_with_truthful_annotations(mcp):
    tools = {t.name: t for t in mcp.list_tools()}
    assert set(tools) >= READS | UPDATES | CREATES
    for name in READS:
        assert tools[name].annotations.readOnlyHint is True, name
    for name in UPDATES:
        hints = tools[name].annotations
        assert (hints.readOnlyHint, hints.destructiveHint, hints.idempotentHint) == (False, False, True), name
    for name in CREATES:
        hints = tools[name].annotations
        assert (hints.readOnlyHint, hints.destructiveHint, hints.idempotentHint) == (False, False, False), name
        assert "idempotency_key" in tools[name].inputSchema["properties"], name
    for name in READS | UPDATES | CREATES:
        assert tools[name].inputSchema["additionalProperties"] is False and len(tools[name].description) > 40
    assert tools["create_company"].inputSchema["required"] == ["kind", "name"]
    assert {"sponsor_id", "borrower_id"} <= set(tools["create_deal"].inputSchema["properties"])
    assert "contact_id" in tools["update_placement"].inputSchema["properties"]
    assert "contact_ids" in tools["create_placements"].inputSchema["properties"]


def test_a_sponsor_with_people_a_deal_naming_it_and_a_placement_sent_to_a_lender_contact(mcp, account):
    sponsor = mcp.ok("create_company", {"kind": "sponsor", "name": "Harbor Capital", "website": "https://harbor.example",
                                        "location": "Austin, TX"})["company"]
    borrower = mcp.ok("create_company", {"kind": "borrower", "name": "Harbor Owner LLC"})["company"]
    for name in ("Dana Reyes", "Ann Lee"):
        mcp.ok("add_contact", {"company_id": sponsor["id"], "name": name, "email": f"{name[:3].lower()}@harbor.example",
                               "phone": "+1 512 555 0100"})
    got = mcp.ok("get_company", {"company_id": sponsor["id"]})["company"]
    assert got["contact_count"] == 2 and [c["name"] for c in got["contacts"]] == ["Ann Lee", "Dana Reyes"]
    assert [c["name"] for c in mcp.ok("list_companies", {"kind": "borrower"})["companies"]] == ["Harbor Owner LLC"]
    assert mcp.ok("list_companies", {"search": "harbor"})["total"] == 2

    deal = mcp.ok("create_deal", {"title": "Pine Court", "sponsor_id": sponsor["id"]})["deal"]
    assert deal["sponsor"]["name"] == "Harbor Capital" and deal["borrower"] is None
    deal = mcp.ok("update_deal", {"deal_id": deal["id"], "borrower_id": borrower["id"]})["deal"]
    assert deal["borrower"]["id"] == borrower["id"]
    assert mcp.ok("get_deal", {"deal_id": deal["id"]})["deal"]["sponsor"]["id"] == sponsor["id"]
    # null leaves a field as it is; clear empties it.
    cleared = mcp.ok("update_deal", {"deal_id": deal["id"], "borrower_id": None,
                                     "clear": ["sponsor_id", "sponsor_id"]})["deal"]
    assert cleared["sponsor"] is None and cleared["borrower"]["id"] == borrower["id"]
    both = mcp.error("update_deal", {"deal_id": deal["id"], "borrower_id": borrower["id"], "clear": ["borrower_id"]})
    assert both["code"] == "VALIDATION_ERROR" and both["message"] == (
        "Validation failed: a field is both given a value and named in clear (borrower_id)")
    dated = mcp.ok("update_deal", {"deal_id": deal["id"], "estimated_close_date": "2027-03-01",
                                   "sponsor_id": sponsor["id"]})
    assert dated["deal"]["estimated_close_date"] == "2027-03-01"
    undated = mcp.ok("update_deal", {"deal_id": deal["id"], "clear": ["estimated_close_date"],
                                 "description": ""})["deal"]
    assert undated["estimated_close_date"] is None and undated["description"] == ""
    assert undated["sponsor"]["id"] == sponsor["id"]

    financed = deal_with_financials(account)
    bank, fund = lenders(2)
    sam = mcp.ok("add_contact", {"lender_id": bank.id, "name": "Sam Ortiz", "title": "Director",
                                 "email": "sam@bank.example.com"})["contact"]
    assert (sam["lender_id"], sam["lender_name"]) == (bank.id, bank.name)
    assert [c["name"] for c in mcp.ok("list_contacts", {"lender_id": bank.id})["contacts"]] == ["Sam Ortiz"]
    placed = mcp.ok("create_placements", {"deal_id": financed.id, "lender_ids": [bank.id, fund.id],
                                          "contact_ids": [sam["id"]], "send": True})
    to_bank = next(p for p in placed["placements"] if p["lender_id"] == bank.id)
    assert (to_bank["contact_id"], to_bank["contact_name"], to_bank["contact_email"]) == (
        sam["id"], "Sam Ortiz", "sam@bank.example.com")
    to_fund = next(p for p in placed["placements"] if p["lender_id"] == fund.id)
    refused = mcp.error("update_placement", {"placement_id": to_fund["id"], "contact_id": sam["id"]})
    assert refused["code"] == "BUSINESS_RULE" and refused["errorCategory"] == "business"
    assert refused["message"] == (f"Not allowed: contact {sam['id']} is at lender {bank.id}; "
                                  f"the placement's lender is {fund.id}")
    fay = mcp.ok("add_contact", {"lender_id": fund.id, "name": "Fay Fund"})["contact"]
    moved = mcp.ok("update_placement", {"placement_id": to_fund["id"], "contact_id": fay["id"]})["placement"]
    assert (moved["contact_id"], moved["contact_name"]) == (fay["id"], "Fay Fund")

    changed = mcp.ok("update_contact", {"contact_id": sam["id"], "title": "Managing Director"})["contact"]
    assert changed["title"] == "Managing Director" and changed["email"] == "sam@bank.example.com"
    renamed = mcp.ok("update_company", {"company_id": sponsor["id"], "notes": "Prefers life companies"})["company"]
    assert renamed["notes"] == "Prefers life companies" and renamed["name"] == "Harbor Capital"


def test_another_accounts_company_and_contacts_do_not_exist_here(mcp, other_mcp):
    theirs = other_mcp.ok("create_company", {"kind": "sponsor", "name": "Rival Sponsor"})["company"]
    lender = LenderFactory()
    person = other_mcp.ok("add_contact", {"company_id": theirs["id"], "name": "Their Person"})["contact"]
    banker = other_mcp.ok("add_contact", {"lender_id": lender.id, "name": "Their Banker"})["contact"]
    for name, arguments in (
        ("get_company", {"company_id": theirs["id"]}),
        ("update_company", {"company_id": theirs["id"], "name": "Taken"}),
        ("list_contacts", {"company_id": theirs["id"]}),
        ("add_contact", {"company_id": theirs["id"], "name": "Spy"}),
        ("create_deal", {"title": "Stolen", "sponsor_id": theirs["id"]}),
    ):
        payload = mcp.error(name, arguments)
        assert (payload["code"], payload["message"]) == ("NOT_FOUND", f"Company not found: {theirs['id']}"), name
    for contact_id in (person["id"], banker["id"]):
        payload = mcp.error("update_contact", {"contact_id": contact_id, "name": "X"})
        assert (payload["code"], payload["message"]) == ("NOT_FOUND", f"Contact not found: {contact_id}")
    assert mcp.ok("list_companies")["companies"] == []
    assert mcp.ok("list_contacts", {"lender_id": lender.id})["contacts"] == []
    assert Company.objects.get(pk=theirs["id"]).name == "Rival Sponsor"
    assert not Contact.objects.filter(name="Spy").exists()


def test_bad_input_is_refused_naming_the_argument(mcp):
    company = mcp.ok("create_company", {"kind": "sponsor", "name": "Harbor"})["company"]
    for name, arguments, field in (
        ("create_company", {"kind": "lender", "name": "X"}, "kind"),
        ("create_company", {"kind": "sponsor", "name": "X", "website": "harbor.example"}, "website"),
        ("add_contact", {"company_id": company["id"], "name": "X", "email": "nobody"}, "email"),
        ("add_contact", {"company_id": company["id"], "name": "X", "phone": "call me"}, "phone"),
        ("add_contact", {"company_id": company["id"], "name": " "}, "name"),
    ):
        payload = mcp.error(name, arguments)
        assert payload["code"] == "VALIDATION_ERROR" and field in payload["message"], (name, payload)
    both = mcp.error("add_contact", {"company_id": company["id"], "lender_id": 1, "name": "X"})
    assert both["message"] == "Validation failed: pass company_id or lender_id (one of them)"
    assert mcp.error("list_contacts", {})["code"] == "VALIDATION_ERROR"
    assert mcp.error("update_company", {"company_id": company["id"]})["message"] == (
        "Validation failed: pass at least one field to change")
    assert Company.objects.count() == 1 and not Contact.objects.exists()


def test_a_repeated_idempotency_key_creates_once(mcp):
    first = mcp.ok("create_company", {"kind": "broker", "name": "Delta", "idempotency_key": "co-1"})["company"]
    again = mcp.ok("create_company", {"kind": "broker", "name": "Delta", "idempotency_key": "co-1"})["company"]
    assert first["id"] == again["id"] and Company.objects.count() == 1
    args = {"company_id": first["id"], "name": "Pat", "idempotency_key": "person-1"}
    assert mcp.ok("add_contact", args)["contact"]["id"] == mcp.ok("add_contact", args)["contact"]["id"]
    assert Contact.objects.count() == 1
    # Without a key each call is a new company (the annotation says so: not idempotent).
    mcp.ok("create_company", {"kind": "broker", "name": "Delta"})
    assert Company.objects.count() == 2


def test_long_pages_stay_within_the_byte_budget(mcp, account, settings):
    settings.LEV_MCP_MAX_RESPONSE_BYTES = 12_000
    company = Company.objects.create(account=account, kind="sponsor", name="Big", notes="n" * 5000)
    Contact.objects.bulk_create([Contact(account=account, company=company, name=f"Person {i:03} " + "é" * 150,
                                         notes="x" * 2000, email=f"p{i}@big.example.com") for i in range(60)])
    got = mcp.ok("get_company", {"company_id": company.id})
    assert budget.fits(got) and got["truncated"] is True and got["continue_with"]["tool"] == "list_contacts"
    shown = len(got["company"]["contacts"])
    rest = mcp.ok(**{"name": "list_contacts", "arguments": got["continue_with"]["arguments"]})
    assert budget.fits(rest) and rest["contacts"][0]["name"].startswith(f"Person {shown:03}")
    page = mcp.ok("list_contacts", {"company_id": company.id, "limit": 100})
    assert budget.fits(page) and page["total"] == 60 and page["next_cursor"]
