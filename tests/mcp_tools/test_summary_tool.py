"""summarize_deal through the real /mcp endpoint: its catalogue entry, each level of detail with every
cited figure equal to what the API serves, the same bytes twice, tenancy, a credential without
placements:read, a bad detail as a contract error, and the byte budget for a deal at every limit."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest
from django.utils import timezone

from deals.companies.models import Company
from deals.models import LenderMatch, LenderSearch, Placement, Stage, TermSheet
from deals.pipeline import services as pipeline
from deals.summaries.summary import DETAILS
from lev import limits
from lev.accounts.scopes import DEALS_READ
from lev.accounts.services import api_key_create
from mcp_tools import budget
from tests.deals.fixtures import eager_jobs
from tests.deals.placements.helpers import place, quote
from tests.deals.summaries.helpers import check_sources, full_deal, quotes_in, rest_get, searched
from tests.factories import AccountFactory, DealFinancialsFactory, LenderFactory, MembershipFactory, UserFactory
from tests.mcp_helpers import McpCaller
from tests.mcp_tools.test_byte_budget import big_deal, call, ok, wide

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("eager_jobs")]
__all__ = ["call", "eager_jobs"]


def test_the_tool_is_listed_read_only_with_its_levels(mcp):
    tool = {t.name: t for t in mcp.list_tools()}["summarize_deal"]
    assert tool.annotations.readOnlyHint is True and tool.inputSchema["additionalProperties"] is False
    assert tool.inputSchema["required"] == ["deal_id"]
    detail = tool.inputSchema["properties"]["detail"]
    assert detail["enum"] == list(DETAILS) and detail["default"] == "standard"
    assert "cites" in tool.description and "left_out" in tool.description and "placements:read" in tool.description


def test_each_level_cites_what_the_api_serves_and_repeats_byte_for_byte(mcp, api, account):
    deal = full_deal(account)
    searched(deal, matches=4)
    quotes_in(deal)
    for detail in DETAILS:
        summary = mcp.ok("summarize_deal", {"deal_id": deal.pk, "detail": detail})["summary"]
        assert summary["detail"] == detail and summary["deal_id"] == deal.pk
        assert check_sources(rest_get(api), summary) > 5
        again = mcp.ok("summarize_deal", {"deal_id": deal.pk, "detail": detail})["summary"]
        assert json.dumps(again) == json.dumps(summary)
    standard = mcp.ok("summarize_deal", {"deal_id": deal.pk})["summary"]
    assert standard["detail"] == "standard" and "all-in rate unavailable" in standard["text"]
    assert "choose_winner" in [s["rule"] for s in standard["next_steps"]]


def test_another_accounts_deal_and_a_bad_detail_are_contract_errors(mcp, live_server, account):
    deal = full_deal(account)
    rival = AccountFactory(slug="rival", name="Rival Holdings")
    member = MembershipFactory(account=rival, user=UserFactory(username="mallory"))
    _key, raw = api_key_create(user=member.user, account=rival, name="test")
    theirs = McpCaller(live_server.url, raw).error("summarize_deal", {"deal_id": deal.pk})
    missing = mcp.error("summarize_deal", {"deal_id": 999_999})
    assert theirs["code"] == missing["code"] == "NOT_FOUND"
    bad = mcp.error("summarize_deal", {"deal_id": deal.pk, "detail": "everything"})
    assert bad["code"] == "VALIDATION_ERROR" and list(bad["details"]["fields"]) == ["detail"]
    assert mcp.ok("summarize_deal", {"deal_id": deal.pk, "detail": "Memo"})["summary"]["detail"] == "memo"


def test_without_placements_read_the_placements_are_left_out_and_said(live_server, user, account):
    deal = full_deal(account)
    quotes_in(deal)
    _key, raw = api_key_create(user=user, account=account, name="deals", scopes=frozenset({DEALS_READ}))
    summary = McpCaller(live_server.url, raw).ok("summarize_deal", {"deal_id": deal.pk, "detail": "memo"})["summary"]
    assert summary["left_out"] and "placements:read" in summary["text"] and "Quotes" not in summary["text"]


def largest_deal(account, *, winner: bool):
    """A deal at every limit: 201 properties, the longest texts in 2-4 byte UTF-8, a search with 110
    ranked lenders, 100 placements sent a month ago to named contacts, 100 quotes expiring soon."""
    deal = big_deal(account, properties=201)
    DealFinancialsFactory(deal=deal, estimated_value=Decimal("999999999999.99"), in_place_noi=Decimal("1"),
                          interest_rate=Decimal("6.5"), existing_debt=Decimal("999999999999.99"))
    deal.sponsor = Company.objects.create(account=account, kind="sponsor", name=wide(limits.COMPANY_NAME_MAX))
    deal.borrower = Company.objects.create(account=account, kind="borrower", name=wide(limits.COMPANY_NAME_MAX))
    deal.save()
    name = wide(limits.STAGE_NAME_MAX)
    pipeline.deal_move_stage(deal=deal, stage=pipeline.stage_create(account=account, name=name), reason="x")
    lenders = [LenderFactory(name=f"{n:03d} " + wide(196)) for n in range(110)]
    search = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version, status="completed",
                                         total_matches=5000, ranked_matches=110, progress=100)
    LenderMatch.objects.bulk_create(LenderMatch(search=search, rank=n + 1, lender=lender, score=99)
                                    for n, lender in enumerate(lenders))
    placements = [place(deal, lender) for lender in lenders[:100]]
    Placement.objects.filter(deal=deal).update(
        sent_at=timezone.now() - dt.timedelta(days=30), contact_name=wide(limits.CONTACT_NAME_MAX),
        contact_email="a" * 60 + "@" + "b" * 180 + ".example", notes=wide(limits.PLACEMENT_NOTES_MAX))
    for placement in placements[:50]:
        for _ in range(2):
            quote(placement, notes=wide(limits.TERM_SHEET_NOTES_MAX), prepayment=wide(limits.PREPAYMENT_TEXT_MAX),
                  origination_fee_percent=Decimal("1"), expires_on=timezone.localdate() + dt.timedelta(days=2))
    if winner:
        TermSheet.objects.filter(pk=TermSheet.objects.filter(deal=deal).order_by("id").last().pk).update(winning=True)
    else:  # the other 50 unanswered for a month: a follow-up each, beside the quotes expiring
        Placement.objects.filter(deal=deal, status="sent").update(first_response_at=None)
    return deal


@pytest.mark.parametrize("winner", [True, False])
def test_every_level_fits_the_byte_budget_for_a_deal_at_every_limit(call, api, account, winner):
    deal = largest_deal(account, winner=winner)
    assert Stage.objects.filter(account=account).count() > 7
    sizes = {}
    for detail in DETAILS:
        sent = call("summarize_deal", {"deal_id": deal.pk, "detail": detail})
        summary = ok(sent)["summary"]
        sizes[detail] = sent.result_bytes
        assert "more quote" in summary["text"] or detail == "brief"
        assert ("WINNER" in summary["text"]) is winner
        check_sources(rest_get(api), summary)
    assert sizes["brief"] < sizes["standard"] < sizes["memo"] <= budget.limit(), sizes
    memo = ok(call("summarize_deal", {"deal_id": deal.pk, "detail": "memo"}))["summary"]["text"]
    assert "…and 196 more properties" in memo and "…and 90 more placements" in memo
    if not winner:
        steps = ok(call("summarize_deal", {"deal_id": deal.pk, "detail": "memo"}))["summary"]["next_steps"]
        assert [s["rule"] for s in steps][:6] == ["follow_up"] * 5 + ["follow_up"] and len(steps) == 8
