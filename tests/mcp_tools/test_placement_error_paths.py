"""Every failure path of the placement and term sheet tools, produced for real (no error raised by
hand), answers in the whole error contract: the code, its category and retry flag, the message
prefix, a hint, a relayable customerMessage for business rules — and no internals. The same calls
reach the REST API, whose body carries the same code and message."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.test import RequestFactory
from django.utils import timezone

from deals import services
from deals.placements.serializers import CREATE_TARGET_MESSAGE
from deals.placements.services import RATE_TERMS_MESSAGE
from deals.searches.models import LenderSearch
from mcp_tools.server import get_server
from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote
from tests.factories import DealFactory
from tests.fuzz.contract import contract_violations, leaks

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(account, other_account):
    deal = deal_with_financials(account)
    draft = place(deal, lenders(1)[0], status="draft")
    quoted = place(deal, lenders(1)[0])
    winner, loser = quote(quoted), quote(place(deal, lenders(1)[0]))
    expired = quote(place(deal, lenders(1)[0]), expires_on=timezone.localdate() - dt.timedelta(days=3))
    services_deal = deal_with_financials(account)
    archived = DealFactory(account=account)
    services.deal_archive(deal=archived)
    running = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version, status="running")
    elsewhere = LenderSearch.objects.create(account=account, deal=services_deal, deal_version=1, status="completed")
    rival = place(deal_with_financials(other_account), lenders(1)[0])
    return {"deal": deal, "draft": draft, "quoted": quoted, "winner": winner, "loser": loser, "expired": expired,
            "archived": archived, "running": running, "elsewhere": elsewhere, "rival": rival}


# (name, tool, arguments from the world, code, message prefix)
PATHS = [
    ("deal missing", "create_placements", lambda w: {"deal_id": 10**9, "lender_ids": [1]}, "NOT_FOUND",
     "Deal not found: 1000000000"),
    ("nothing to place", "create_placements", lambda w: {"deal_id": w["deal"].id}, "VALIDATION_ERROR",
     f"Validation failed: {CREATE_TARGET_MESSAGE}"),
    ("top_n with lender ids", "create_placements", lambda w: {"deal_id": w["deal"].id, "lender_ids": [1], "top_n": 2},
     "VALIDATION_ERROR", f"Validation failed: {CREATE_TARGET_MESSAGE}"),
    ("archived deal", "create_placements", lambda w: {"deal_id": w["archived"].id, "lender_ids": [1]},
     "BUSINESS_RULE", "Not allowed: deal"),
    ("search not completed", "create_placements", lambda w: {"deal_id": w["deal"].id, "search_id": w["running"].id},
     "BUSINESS_RULE", "Not allowed: lender search"),
    ("search of another deal", "create_placements",
     lambda w: {"deal_id": w["deal"].id, "search_id": w["elsewhere"].id}, "BUSINESS_RULE",
     "Not allowed: lender search"),
    ("search missing", "create_placements", lambda w: {"deal_id": w["deal"].id, "search_id": 10**9}, "NOT_FOUND",
     "Lender search not found: 1000000000"),
    ("placement missing", "get_placement", lambda w: {"placement_id": 10**9}, "NOT_FOUND",
     "Placement not found: 1000000000"),
    ("another account's placement", "update_placement", lambda w: {"placement_id": w["rival"].id, "notes": "x"},
     "NOT_FOUND", "Placement not found: "),
    ("illegal move", "update_placement", lambda w: {"placement_id": w["draft"].id, "status": "declined"},
     "BUSINESS_RULE", "Not allowed: placement"),
    ("workflow status", "update_placement", lambda w: {"placement_id": w["draft"].id, "status": "won"},
     "VALIDATION_ERROR", "Validation failed: status must be one of"),
    ("nothing to change", "update_placement", lambda w: {"placement_id": w["draft"].id}, "VALIDATION_ERROR",
     "Validation failed: pass at least one field to change"),
    ("program of another lender", "update_placement", lambda w: {"placement_id": w["draft"].id, "program_id": 10**9},
     "NOT_FOUND", "Lender program not found: 1000000000"),
    ("bad email", "update_placement", lambda w: {"placement_id": w["draft"].id, "contact_email": "x@"},
     "VALIDATION_ERROR", "Validation failed: contact_email must be an email address"),
    ("quote on a draft", "add_term_sheet",
     lambda w: {"placement_id": w["draft"].id, "loan_amount": 1, "rate_type": "fixed", "fixed_rate": 5},
     "BUSINESS_RULE", "Not allowed: placement"),
    ("rate terms", "add_term_sheet",
     lambda w: {"placement_id": w["quoted"].id, "loan_amount": 1, "rate_type": "floating", "rate_index": "sofr"},
     "VALIDATION_ERROR", RATE_TERMS_MESSAGE),
    ("bad rate index", "add_term_sheet",
     lambda w: {"placement_id": w["quoted"].id, "loan_amount": 1, "rate_type": "floating", "rate_index": "libor",
                "spread_bps": 1}, "VALIDATION_ERROR", "Validation failed: rate_index must be one of"),
    ("term sheet missing", "select_winning_term_sheet", lambda w: {"term_sheet_id": 10**9}, "NOT_FOUND",
     "Term sheet not found: 1000000000"),
    ("expired quote", "select_winning_term_sheet", lambda w: {"term_sheet_id": w["expired"].id}, "BUSINESS_RULE",
     "Not allowed: term sheet"),
    ("remove missing", "remove_term_sheet", lambda w: {"term_sheet_id": 10**9}, "NOT_FOUND", "Term sheet not found"),
    ("list of a missing deal", "list_placements", lambda w: {"deal_id": 10**9}, "NOT_FOUND", "Deal not found"),
    ("bad cursor", "list_term_sheets", lambda w: {"deal_id": w["deal"].id, "cursor": "nope"}, "VALIDATION_ERROR",
     "Validation failed: cursor"),
    ("compare a missing deal", "compare_term_sheets", lambda w: {"deal_id": 10**9}, "NOT_FOUND", "Deal not found"),
]


def call(api_key: str, name: str, arguments: dict) -> tuple[bool, dict, str]:
    request = RequestFactory().post("/mcp", HTTP_AUTHORIZATION=f"Bearer {api_key}")
    result = get_server().call_tool_sync(name, arguments, request)
    text = result.content[0].text
    assert json.loads(text) == result.structuredContent
    return bool(result.isError), json.loads(text), text


@pytest.mark.parametrize(("label", "tool", "arguments", "code", "prefix"), PATHS, ids=[p[0] for p in PATHS])
def test_each_failure_path_answers_in_the_contract(world, api_key, label, tool, arguments, code, prefix):
    args = arguments(world)
    is_error, payload, text = call(api_key, tool, args)
    assert is_error, payload
    assert contract_violations(payload) == [], payload
    assert (payload["code"], payload["message"][: len(prefix)]) == (code, prefix), payload
    assert payload["hint"]
    assert leaks(text, json.dumps(args)) == []
    if code == "BUSINESS_RULE":
        assert payload["customerMessage"] and "Not allowed" not in payload["customerMessage"]
        assert "customer_message" not in payload.get("details", {})


def test_winning_rules_in_order(world, api_key):
    """A second winner, removing the winner: each refusal in the contract, and the state unchanged."""
    assert not call(api_key, "select_winning_term_sheet", {"term_sheet_id": world["winner"].id})[0]
    for tool, arguments in (("select_winning_term_sheet", {"term_sheet_id": world["loser"].id}),
                            ("remove_term_sheet", {"term_sheet_id": world["winner"].id})):
        is_error, payload, _ = call(api_key, tool, arguments)
        assert is_error and contract_violations(payload) == [] and payload["code"] == "BUSINESS_RULE", payload
    world["winner"].refresh_from_db()
    assert world["winner"].winning and world["winner"].deleted_at is None
