"""The team's own lenders and programs through the real /mcp endpoint (official client, live server, issue
38): create_lender and add_lender_program with deals:write, read back marked own, refused in the program
rule's words, repeated safely with one idempotency key; another account neither reads, places nor adds to
them (NOT_FOUND, as for a missing one); a read-only key does not even see the tools."""

from __future__ import annotations

import pytest

from lenders.models import Lender, LenderProgram
from lev.accounts.services import api_key_create
from tests.deals.placements.helpers import deal_with_financials
from tests.factories import AccountFactory, LenderFactory, LenderProgramFactory, MembershipFactory, UserFactory
from tests.mcp_helpers import McpCaller

pytestmark = pytest.mark.django_db(transaction=True)

PROGRAM = {"title": "Hill Country Bridge", "loan_types": ["permanent"], "asset_types": ["Multifamily"],
           "min_loan_amount": 2_000_000, "max_loan_amount": 30_000_000, "sponsor_states": ["Texas"],
           "max_ltv": 75, "min_dscr": 1.2, "rate_type": "fixed", "fixed_rate_min": 6.1, "fixed_rate_max": 6.6}


def test_a_team_adds_its_lender_and_programs_and_another_account_never_reaches_them(mcp, live_server, user,
                                                                                      account):
    tools = {t.name: t for t in mcp.list_tools()}
    for name in ("create_lender", "add_lender_program"):
        hints = tools[name].annotations
        assert (hints.readOnlyHint, hints.destructiveHint, hints.idempotentHint) == (False, False, False), name
        assert "idempotency_key" in tools[name].inputSchema["properties"]
    assert tools["add_lender_program"].inputSchema["required"] == ["lender_id", "title", "loan_types", "asset_types"]

    directory = LenderProgramFactory(lender=LenderFactory(name="Big Directory Bank")).lender
    made = mcp.ok("create_lender", {"name": "Hill Country Bank", "state": "Texas", "lender_types": ["bank"],
                                    "idempotency_key": "hill-country-1"})["lender"]
    again = mcp.ok("create_lender", {"name": "Hill Country Bank", "state": "Texas", "lender_types": ["bank"],
                                     "idempotency_key": "hill-country-1"})["lender"]
    assert made["own"] is True and made["state"] == "TX" and again["id"] == made["id"]
    assert Lender.objects.filter(account=account).count() == 1
    program = mcp.ok("add_lender_program", {"lender_id": made["id"], **PROGRAM})["program"]
    assert (program["own"], program["sponsor_states"], program["positions"]) == (True, ["TX"], ["senior"])
    ours_there = mcp.ok("add_lender_program", {"lender_id": directory.pk, **PROGRAM, "title": "Ours there"})
    got = mcp.ok("get_lender", {"lender_id": made["id"]})["lender"]
    assert got["own"] is True and [p["title"] for p in got["programs"]] == ["Hill Country Bridge"]
    found = {x["id"]: x["own"] for x in mcp.ok("search_lender_directory", {"state": "TX"})["lenders"]}
    assert found == {made["id"]: True, directory.pk: False}

    # The program rule's words, and the directory's names.
    failure = mcp.error("add_lender_program", {"lender_id": made["id"], **PROGRAM, "max_ltv": 0.75})
    assert failure["code"] == "VALIDATION_ERROR" and "did you mean 75?" in failure["message"]
    failure = mcp.error("add_lender_program", {"lender_id": made["id"], **PROGRAM, "min_dscr": 0})
    assert failure["code"] == "VALIDATION_ERROR" and "min_dscr" in failure["message"]
    failure = mcp.error("create_lender", {"name": "big directory bank"})
    assert failure["code"] == "CONFLICT" and f"(id {directory.pk})" in failure["message"]

    # Another account: not found, as a lender that does not exist; nothing of ours changes.
    rival = AccountFactory(slug="rival", name="Rival Holdings")
    member = MembershipFactory(account=rival, user=UserFactory(username="mallory")).user
    other = McpCaller(live_server.url, api_key_create(user=member, account=rival, name="test")[1])
    for name, arguments in (("get_lender", {"lender_id": made["id"]}),
                            ("list_lender_programs", {"lender_id": made["id"]}),
                            ("add_lender_program", {"lender_id": made["id"], **PROGRAM})):
        failure = other.error(name, arguments)
        assert failure["code"] == "NOT_FOUND" and str(made["id"]) in failure["message"], name
    assert [(x["id"], x["own"]) for x in other.ok("search_lender_directory", {"state": "TX"})["lenders"]] == [
        (directory.pk, False)]
    assert [p["title"] for p in other.ok("get_lender", {"lender_id": directory.pk})["lender"]["programs"]] == [
        directory.programs.get(account=None).title]
    their_deal = deal_with_financials(rival)
    placed = other.ok("create_placements", {"deal_id": their_deal.pk, "lender_ids": [made["id"]]})
    assert placed["placements"] == [] and placed["failed"][0]["code"] == "NOT_FOUND"
    assert LenderProgram.objects.filter(account=account).count() == 2 and ours_there["program"]["own"] is True

    # A key that may only read sees neither tool.
    reader = api_key_create(user=user, account=account, name="read", scopes=frozenset({"lenders:read"}))[1]
    names = {t.name for t in McpCaller(live_server.url, reader).list_tools()}
    assert "get_lender" in names and not names & {"create_lender", "add_lender_program"}
