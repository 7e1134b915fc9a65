"""Placement and term sheet tools through the real /mcp endpoint (official client, live server):
the workflow from a search to a winning quote, per-lender partial success, the business rules as
relayable errors, tenancy on every tool, annotations and byte budgets.

Jobs run in-process here; tests/deals/placements/test_worker_e2e.py runs the same workflow with a
real Celery worker and the activity refresh on PostgreSQL and Redis.
"""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.utils import timezone

from deals.models import Placement, TermSheet
from deals.placements.serializers import CREATE_TARGET_MESSAGE
from deals.placements.services import RATE_TERMS_MESSAGE
from lenders.rates.services import market_rate_set
from lev import limits
from mcp_tools import budget
from tests.deals.fixtures import eager_jobs
from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote
from tests.deals.searches.factories import LenderProgramFactory, make_deal
from tests.mcp_helpers import McpCaller

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("eager_jobs")]
__all__ = ["eager_jobs"]

READS = {"list_placements", "get_placement", "list_term_sheets", "compare_term_sheets"}
DESTRUCTIVE = {"update_placement", "select_winning_term_sheet", "remove_term_sheet"}
ADDITIVE = {"create_placements", "add_term_sheet"}


def test_tools_are_listed_with_truthful_annotations_and_agent_descriptions(mcp):
    tools = {t.name: t for t in mcp.list_tools()}
    assert set(tools) >= READS | DESTRUCTIVE | ADDITIVE
    for name in READS | DESTRUCTIVE | ADDITIVE:
        assert len(tools[name].description) > 60, name  # capped from above by test_catalogue_budget
        assert tools[name].inputSchema["additionalProperties"] is False, name
    for name in READS:
        assert tools[name].annotations.readOnlyHint is True, name
    for name in DESTRUCTIVE:
        hints = tools[name].annotations
        assert (hints.readOnlyHint, hints.destructiveHint, hints.idempotentHint) == (False, True, True), name
        assert "onfirm with the user" in tools[name].description, name
    place_hints, quote_hints = tools["create_placements"].annotations, tools["add_term_sheet"].annotations
    assert (place_hints.destructiveHint, place_hints.idempotentHint) == (False, True)
    assert (quote_hints.destructiveHint, quote_hints.idempotentHint) == (False, False)
    assert "Confirm the lender list with the user" in tools["create_placements"].description
    assert tools["create_placements"].inputSchema["required"] == ["deal_id"]
    assert set(tools["add_term_sheet"].inputSchema["required"]) == {"placement_id", "loan_amount", "rate_type"}


def test_from_a_search_to_a_winning_quote(mcp, account):
    deal = make_deal(account)
    for _ in range(7):
        LenderProgramFactory()
    market_rate_set(index="sofr", rate="4.3")
    search = mcp.ok("search_lenders_for_deal", {"deal_id": deal.id})
    assert search["status"] == "completed"
    placed = mcp.ok("create_placements", {"deal_id": deal.id, "search_id": search["search_id"], "send": True})
    assert placed["created"] == 5 and placed["failed"] == []
    assert [p["source_rank"] for p in placed["placements"]] == [1, 2, 3, 4, 5]
    assert all(p["status"] == "sent" and p["sent_at"] for p in placed["placements"])
    assert "add_term_sheet" in placed["message"]
    first, second = placed["placements"][0]["id"], placed["placements"][1]["id"]

    fixed = mcp.ok("add_term_sheet", {"placement_id": first, "loan_amount": 10_000_000, "rate_type": "fixed",
                                      "fixed_rate": 6.1234, "term_months": 120, "amortization_months": 360,
                                      "recourse": "non_recourse"})
    assert fixed["term_sheet"]["fixed_rate"] == 6.123 and fixed["placement_status"] == "quoted"
    floating = mcp.ok("add_term_sheet", {"placement_id": second, "loan_amount": 11_000_000, "rate_type": "Floating",
                                         "rate_index": "sofr", "spread_bps": 250, "term_months": 36,
                                         "origination_fee_percent": 1})
    listed = mcp.ok("list_term_sheets", {"deal_id": deal.id})
    assert [t["id"] for t in listed["term_sheets"]] == [fixed["term_sheet"]["id"], floating["term_sheet"]["id"]]

    comparison = mcp.ok("compare_term_sheets", {"deal_id": deal.id})
    # A 10-year fixed and a 3-year floating quote are not alike: no best named, the trade-off in words.
    assert comparison["count"] == 2 and comparison["best_term_sheet_id"] is None
    best, other = comparison["quotes"]
    assert best["term_sheet_id"] == fixed["term_sheet"]["id"] and best["best_in_group"] and other["best_in_group"]
    assert comparison["trade_offs"] == [
        f"{best['lender_name']} (10 years fixed, non-recourse) against {other['lender_name']} (3 years floating, "
        "recourse not given): $1M less proceeds for 1.01 points less all-in"]
    assert (best["all_in_rate"], other["all_in_rate"], other["base_rate"]) == (6.123, 6.8, 4.3)
    assert other["base_rate_as_of"] == other["quoted_on"] == timezone.localdate().isoformat()
    assert "highest proceeds" in other["notes"] and "non-recourse" in best["notes"]
    assert mcp.ok("compare_term_sheets", {"deal_id": deal.id, "limit": 1})["has_more"] is True

    won = mcp.ok("select_winning_term_sheet", {"term_sheet_id": fixed["term_sheet"]["id"]})
    assert won["changed"] is True and won["placement_id"] == first and len(won["lost_placement_ids"]) == 4
    statuses = mcp.ok("list_placements", {"deal_id": deal.id})["placements"]
    assert [p["status"] for p in statuses] == ["won", "lost", "lost", "lost", "lost"]
    assert mcp.ok("list_placements", {"deal_id": deal.id, "status": "LOST"})["total"] == 4
    again = mcp.ok("select_winning_term_sheet", {"term_sheet_id": fixed["term_sheet"]["id"]})
    assert again["changed"] is False and "nothing changed" in again["message"]
    refused = mcp.error("select_winning_term_sheet", {"term_sheet_id": floating["term_sheet"]["id"]})
    assert refused["code"] == "BUSINESS_RULE" and "only one winner" in refused["customerMessage"]


def test_repeating_a_create_places_nobody_twice_and_says_who_was_already_placed(mcp, account):
    deal = deal_with_financials(account)
    ls = lenders(3)
    first = mcp.ok("create_placements", {"deal_id": deal.id, "lender_ids": [ls[0].id, ls[1].id]})
    assert first["created"] == 2 and "(draft)" in first["message"] and 'status="sent"' in first["message"]
    second = mcp.ok("create_placements", {"deal_id": deal.id, "lender_ids": [ls[0].id, ls[2].id, 999_999]})
    assert second["created"] == 1
    assert [(f["lender_id"], f["code"]) for f in second["failed"]] == [(ls[0].id, "CONFLICT"), (999_999, "NOT_FOUND")]
    assert second["failed"][0]["placement_id"] == first["placements"][0]["id"]
    assert "Already placed" in second["message"] and "No such lender: 999999" in second["message"]
    assert Placement.objects.filter(deal=deal).count() == 3


def test_rules_come_back_as_errors_an_agent_can_act_on(mcp, account):
    deal = deal_with_financials(account)
    draft = mcp.ok("create_placements", {"deal_id": deal.id, "lender_ids": [lenders(1)[0].id]})["placements"][0]

    payload = mcp.error("create_placements", {"deal_id": deal.id})
    assert payload["code"] == "VALIDATION_ERROR" and payload["message"] == f"Validation failed: {CREATE_TARGET_MESSAGE}"
    payload = mcp.error("add_term_sheet", {"placement_id": draft["id"], "loan_amount": 1, "rate_type": "fixed",
                                           "rate_index": "sofr"})
    assert payload["message"] == RATE_TERMS_MESSAGE and set(payload["details"]["fields"]) == {"fixed_rate",
                                                                                             "rate_index"}
    payload = mcp.error("add_term_sheet", {"placement_id": draft["id"], "loan_amount": 1, "rate_type": "fixed",
                                           "fixed_rate": 6})
    assert payload["code"] == "BUSINESS_RULE" and "Mark it sent first" in payload["customerMessage"]
    assert payload["hint"] and payload["isRetryable"] is False

    payload = mcp.error("update_placement", {"placement_id": draft["id"], "status": "reviewing"})
    assert payload["code"] == "BUSINESS_RULE"
    assert payload["details"]["allowed_next_statuses"] == ["sent", "archived"]
    assert "it can move to sent or archived" in payload["customerMessage"]
    payload = mcp.error("update_placement", {"placement_id": draft["id"], "status": "won"})
    assert payload["code"] == "VALIDATION_ERROR" and "status" in payload["details"]["fields"]
    payload = mcp.error("update_placement", {"placement_id": draft["id"]})
    assert payload["message"] == "Validation failed: pass at least one field to change"
    payload = mcp.error("update_placement", {"placement_id": draft["id"], "contact_email": "nobody"})
    assert payload["message"] == "Validation failed: contact_email must be an email address such as name@lender.com"

    sent = mcp.ok("update_placement", {"placement_id": draft["id"], "status": "sent", "contact_name": "Dana",
                                       "contact_email": "dana@lender.example.com"})["placement"]
    assert sent["status"] == "sent" and sent["allowed_next_statuses"] == [
        "reviewing", "declined", "no_response", "archived"]
    assert sent["automatic_next_statuses"] == ["quoted"]
    term_sheet = mcp.ok("add_term_sheet", {"placement_id": draft["id"], "loan_amount": 1, "rate_type": "fixed",
                                           "fixed_rate": 6})["term_sheet"]
    detail = mcp.ok("get_placement", {"placement_id": draft["id"]})["placement"]
    assert detail["status"] == "quoted" and [t["id"] for t in detail["term_sheets"]] == [term_sheet["id"]]
    assert mcp.ok("remove_term_sheet", {"term_sheet_id": term_sheet["id"]}) == {
        "removed": {"term_sheet_id": term_sheet["id"]}}
    assert mcp.error("remove_term_sheet", {"term_sheet_id": term_sheet["id"]})["code"] == "NOT_FOUND"
    assert TermSheet.objects.get(pk=term_sheet["id"]).deleted_at is not None

    mcp.ok("archive_deal", {"deal_id": deal.id})
    payload = mcp.error("create_placements", {"deal_id": deal.id, "lender_ids": [lenders(1)[0].id]})
    assert payload["code"] == "BUSINESS_RULE" and "create a new deal" in payload["customerMessage"]


def test_a_decline_is_recorded_with_its_reason_trimmed_and_bounded(mcp, account):
    deal = deal_with_financials(account)
    sent = mcp.ok("create_placements", {"deal_id": deal.id, "lender_ids": [lenders(1)[0].id],
                                        "send": True})["placements"][0]
    declined = mcp.ok("update_placement", {"placement_id": sent["id"], "status": "declined",
                                           "decline_reason": "  No office in Miami  "})["placement"]
    assert declined["status"] == "declined" and declined["decline_reason"] == "No office in Miami"
    assert Placement.objects.get(pk=sent["id"]).decline_reason == "No office in Miami"
    assert mcp.ok("get_placement", {"placement_id": sent["id"]})["placement"]["decline_reason"] == "No office in Miami"
    payload = mcp.error("update_placement", {"placement_id": sent["id"],
                                             "decline_reason": "x" * (limits.DECLINE_REASON_MAX + 1)})
    assert payload["code"] == "VALIDATION_ERROR" and "decline_reason" in payload["message"]
    assert Placement.objects.get(pk=sent["id"]).decline_reason == "No office in Miami"
    assert mcp.ok("update_placement", {"placement_id": sent["id"], "decline_reason": ""})["placement"][
        "decline_reason"] == ""


def test_every_tool_answers_not_found_for_another_accounts_objects(mcp, live_server, other_account, other_api):
    deal = deal_with_financials(other_account)
    placement = place(deal, lenders(1)[0])
    term_sheet = quote(placement)
    # `mcp` acts for `account`; these objects are the other account's.
    for name, arguments, message in (
        ("create_placements", {"deal_id": deal.id, "lender_ids": [placement.lender_id]}, f"Deal not found: {deal.id}"),
        ("list_placements", {"deal_id": deal.id}, f"Deal not found: {deal.id}"),
        ("list_term_sheets", {"deal_id": deal.id}, f"Deal not found: {deal.id}"),
        ("compare_term_sheets", {"deal_id": deal.id}, f"Deal not found: {deal.id}"),
        ("get_placement", {"placement_id": placement.id}, f"Placement not found: {placement.id}"),
        ("update_placement", {"placement_id": placement.id, "status": "declined"},
         f"Placement not found: {placement.id}"),
        ("add_term_sheet", {"placement_id": placement.id, "loan_amount": 1, "rate_type": "fixed", "fixed_rate": 5},
         f"Placement not found: {placement.id}"),
        ("select_winning_term_sheet", {"term_sheet_id": term_sheet.id}, f"Term sheet not found: {term_sheet.id}"),
        ("remove_term_sheet", {"term_sheet_id": term_sheet.id}, f"Term sheet not found: {term_sheet.id}"),
    ):
        payload = mcp.error(name, arguments)
        assert (payload["code"], payload["message"]) == ("NOT_FOUND", message), name
    placement.refresh_from_db()
    term_sheet.refresh_from_db()
    assert (placement.status, term_sheet.winning, term_sheet.deleted_at) == ("quoted", False, None)
    assert Placement.objects.count() == 1 and TermSheet.objects.count() == 1
    # The owner sees them.
    owner = McpCaller(live_server.url, other_api._credentials["HTTP_AUTHORIZATION"].split()[1])
    assert owner.ok("get_placement", {"placement_id": placement.id})["placement"]["id"] == placement.id


def test_responses_stay_within_the_byte_budget(mcp, account, settings):
    settings.LEV_MCP_MAX_RESPONSE_BYTES = 12_000
    deal = deal_with_financials(account)
    ls = lenders(50)
    notes = "n" * 2000
    placed = mcp.call_raw("create_placements", {"deal_id": deal.id, "lender_ids": [x.id for x in ls], "notes": notes})
    text = placed.content[0].text
    assert not placed.isError and len(text.encode()) <= settings.LEV_MCP_MAX_RESPONSE_BYTES
    payload = json.loads(text)
    assert payload["created"] == 50 and len(payload["placements"]) == 50 and payload["compacted"] is True
    page = mcp.call_raw("list_placements", {"deal_id": deal.id, "limit": 100})
    assert len(page.content[0].text.encode()) <= settings.LEV_MCP_MAX_RESPONSE_BYTES
    assert len(json.loads(page.content[0].text)["placements"]) == 50


def test_a_comparison_of_the_most_quotes_stays_within_the_byte_budget(mcp, account):
    deal = deal_with_financials(account)
    for n, lender in enumerate(lenders(100)):
        lender.name = f"{n:03d} " + "Long Lender Name " * 10  # clipped to 120 characters by the tool
        lender.save(update_fields=["name"])
        # Every note a quote can carry: short of the request, DSCR and LTV outside the lender's limits, …
        quote(place(deal, lender), loan_amount=9_000_000 + n, fixed_rate=6 + n / 100, recourse="full",
              origination_fee_percent=1, exit_fee_percent=1, interest_only_months=12, min_dscr=9.99, max_ltv=1)
    result = mcp.call_raw("compare_term_sheets", {"deal_id": deal.id, "limit": 100})
    payload = json.loads(result.content[0].text)
    # Counted as the client receives it: text content and structuredContent together.
    assert not result.isError and budget.payload_size(payload) <= settings.LEV_MCP_MAX_RESPONSE_BYTES
    # Trimmed of detail first; what still does not fit is the worst of the page, left out and said so.
    assert payload["count"] == 100 and payload["compacted"] is True
    assert payload["truncated"] is True and payload["has_more"] is True
    assert [q["rank"] for q in payload["quotes"]] == list(range(1, len(payload["quotes"]) + 1))
    assert 50 < len(payload["quotes"]) < 100
    assert all(q["term_sheet_id"] and q["all_in_rate"] is not None for q in payload["quotes"])


def test_lists_page_with_cursors(mcp, account):
    deal = deal_with_financials(account)
    for lender in lenders(5):
        place(deal, lender)
    ids, cursor = [], None
    while True:
        page = mcp.ok("list_placements", {"deal_id": deal.id, "limit": 2, **({"cursor": cursor} if cursor else {})})
        ids += [p["id"] for p in page["placements"]]
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert ids == list(Placement.objects.filter(deal=deal).order_by("id").values_list("id", flat=True))
    assert mcp.ok("list_term_sheets", {"deal_id": deal.id}) == {"term_sheets": [], "total": 0, "has_more": False,
                                                               "next_cursor": None}
    assert settings.LEV_MCP_MAX_RESPONSE_BYTES > 0


def test_term_sheet_notes_written_are_read_back_whole_by_every_term_sheet_tool(mcp, account, settings):
    # Issue 22: notes could be written with add_term_sheet but no tool returned them.
    deal = deal_with_financials(account)
    placement = place(deal, lenders(1)[0])
    notes = "Rate lock at signing; 2 extensions of 6 months at 25 bps each.\nSponsor guaranty required. é" * 20
    added = mcp.ok("add_term_sheet", {"placement_id": placement.pk, "loan_amount": 10_000_000, "rate_type": "fixed",
                                      "fixed_rate": 6.25, "notes": notes})["term_sheet"]
    assert added["notes"] == notes
    assert mcp.ok("get_placement", {"placement_id": placement.pk})["placement"]["term_sheets"][0]["notes"] == notes
    assert mcp.ok("list_term_sheets", {"deal_id": deal.pk})["term_sheets"][0]["notes"] == notes
    # Within the byte budget: a page of long notes ends early with a cursor, never clipping the notes.
    for _ in range(11):
        quote(placement, notes="ü" * 2000)
    settings.LEV_MCP_MAX_RESPONSE_BYTES = 30_000
    page = mcp.ok("list_term_sheets", {"deal_id": deal.pk, "limit": 12})
    assert page["truncated"] is True and page["has_more"] is True and len(page["term_sheets"]) < 12
    assert [t["notes"] for t in page["term_sheets"][1:]] == ["ü" * 2000] * (len(page["term_sheets"]) - 1)
    seen = page["term_sheets"]
    while page["has_more"]:
        page = mcp.ok("list_term_sheets", {"deal_id": deal.pk, "cursor": page["next_cursor"]})
        seen += page["term_sheets"]
    assert [t["id"] for t in seen] == sorted(TermSheet.objects.filter(deal=deal).values_list("id", flat=True))
    assert all(t["notes"] == "ü" * 2000 for t in seen[1:])
