"""GET /api/v1/deals/{id}/summary/: each state of a deal, every cited figure equal to what the API
serves for its record and field, the same bytes twice, tenancy, scopes, bad input and a bounded
number of queries whatever the deal's size."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from deals import services as deal_services
from deals.models import DealFinancials, LenderSearch, Placement
from deals.pipeline import selectors as pipeline_selectors
from deals.pipeline import services as pipeline_services
from deals.summaries.summary import DETAILS
from lev.accounts.scopes import DEALS_READ
from lev.accounts.services import api_key_create
from tests.conftest import client_with_key
from tests.deals.placements.helpers import lenders, place, quote
from tests.deals.summaries.helpers import (
    API,
    check_sources,
    full_deal,
    many_properties,
    placements_out,
    quotes_in,
    rest_get,
    searched,
    winner_chosen,
)
from tests.factories import DealFactory

pytestmark = pytest.mark.django_db


def summary(api, deal, detail=None):
    response = api.get(f"{API}/deals/{deal.pk}/summary/", {"detail": detail} if detail else None)
    assert response.status_code == 200, response.content
    return response.json()


def checked(api, deal, detail=None):
    body = summary(api, deal, detail)
    check_sources(rest_get(api), body)
    return body


def rules(body):
    return [step["rule"] for step in body["next_steps"]]


def test_a_new_deal_says_what_it_lacks_and_to_add_it(api, account):
    deal = DealFactory(account=account, loan_amount=None)
    body = checked(api, deal)
    assert body["detail"] == "standard" and body["deal_id"] == deal.pk
    assert body["as_of"] == timezone.localdate().isoformat()
    text = body["text"]
    assert "loan amount not set" in text and "Property: none yet." in text
    assert "Financials: none yet" in text and "Lender search: none yet." in text and "Placements: none yet." in text
    assert "Stage: Intake" in text
    assert rules(body) == ["complete_deal", "add_financials"]
    assert "a loan amount, at least one property" in body["next_steps"][0]["text"]
    assert body["left_out"] == []


def test_a_full_deal_cites_every_figure_from_its_record(api, account):
    deal = full_deal(account)
    body = checked(api, deal, "memo")
    text = body["text"]
    assert "$10,000,000" in text and "LTV 62.5%" in text and "debt yield 10%" in text
    assert "on the amortizing payment" in text and "what lenders underwrite for a permanent loan" in text
    assert "; interest-only 1.54x [" in text  # the other coverage figure beside the underwritten one
    assert "sponsor Oak Sponsor LLC" in text and "borrower Oak Borrower LP" in text
    fields = {(s["record"], s["field"]) for s in body["sources"]}
    assert {("deal", "loan_amount"), ("deal_financials", "ltv"), ("deal_financials", "dscr"),
            ("deal_financials", "debt_yield"), ("deal_financials", "in_place_noi"),
            ("deal_financials", "estimated_value"), ("deal", "created_at")} <= fields
    financials = rest_get(api)(f"/deals/{deal.pk}/financials/")
    cited = {s["field"]: s["value"] for s in body["sources"] if s["record"] == "deal_financials"}
    assert cited["dscr"] == financials["dscr"] and cited["dscr_basis"] == "amortizing"
    assert rules(body) == ["start_search"]


def test_mid_search_and_failed_search(api, account):
    deal = full_deal(account)
    searched(deal, status="running")
    body = checked(api, deal)
    assert "Lender search" in body["text"] and "running" in body["text"] and "40% done" in body["text"]
    assert rules(body) == ["search_running"]
    searched(deal, status="failed", error_code="INTERNAL_ERROR", error_message="Ranking crashed.")
    body = checked(api, deal)
    assert "failed" in body["text"] and "Ranking crashed." in body["text"]
    assert rules(body) == ["search_failed"]


def test_search_done_nothing_placed_says_place_the_top_lenders(api, account):
    deal = full_deal(account)
    search = searched(deal, matches=5)
    body = checked(api, deal)
    assert "5 lenders matched" in body["text"] and "top:" in body["text"]
    assert rules(body) == ["place_top_lenders"]
    assert f"search {search.pk}" in body["next_steps"][0]["text"]


def test_placements_out_unanswered_say_follow_up_naming_the_contact(api, account):
    deal = full_deal(account)
    searched(deal)
    placements_out(deal, 3, days_ago=10)
    body = checked(api, deal)
    assert "Placements: 3 [" in body["text"] and "3 sent [" in body["text"]
    follow_ups = [s["text"] for s in body["next_steps"] if s["rule"] == "follow_up"]
    assert len(follow_ups) == 3 and "Dana Lee, dana@lender.example" in follow_ups[0]
    assert "no answer in 10 days" in follow_ups[0]
    # Sent three days ago: not yet a follow-up.
    other = full_deal(account)
    placements_out(other, 2, days_ago=3)
    assert "follow_up" not in rules(checked(api, other))


def test_quotes_in_fixed_and_floating_without_a_base_rate(api, account):
    deal = full_deal(account)
    quotes_in(deal)
    body = checked(api, deal, "memo")
    text = body["text"]
    assert "Quotes: 2 quotes compared" in text and "6.25% all-in" in text
    assert f"all-in rate unavailable (no Prime rate on or before {timezone.localdate().isoformat()})" in text
    comparison = rest_get(api)(f"/deals/{deal.pk}/term-sheets/comparison/")
    assert comparison["unavailable"] and all(f"Not computable: {line}" in text for line in comparison["unavailable"])
    assert {"choose_winner", "quote_expiring", "base_rate"} <= set(rules(body))
    cited = [s for s in body["sources"] if s["record"] == "term_sheet_comparison"]
    assert cited and all(s["value"] == comparison["quotes"][int(s["field"].split(".")[1])][s["field"].split(".")[2]]
                         for s in cited)


def test_winner_chosen_says_work_it_to_closing(api, account):
    deal = full_deal(account)
    winner_chosen(deal)
    body = checked(api, deal)
    assert "WINNER" in body["text"] and "Stage: Closing" in body["text"]
    assert rules(body) == ["closing"]
    assert "set an estimated close date" in body["next_steps"][0]["text"]


def test_archived_dead_and_closed_deals_have_no_next_steps(api, account):
    archived = deal_services.deal_archive(deal=full_deal(account))
    body = checked(api, archived)
    assert "Archived [" in body["text"] and rules(body) == ["archived"]
    for key, rule in (("dead", "dead"), ("closed", "closed")):
        deal = full_deal(account)
        stage = pipeline_selectors.stage_find(account=account, text=key)
        pipeline_services.deal_move_stage(deal=deal, stage=stage, reason="test")
        body = checked(api, deal)
        assert rules(body) == [rule] and f"Stage: {stage.name}" in body["text"]


def test_each_level_says_more_and_brief_is_a_few_lines(api, account):
    deal = full_deal(account)
    searched(deal, matches=12)
    quotes_in(deal)
    sizes = {}
    for detail in DETAILS:
        body = checked(api, deal, detail)
        sizes[detail] = (len(body["text"]), len(body["sources"]))
        assert body["detail"] == detail
    assert sizes["brief"] < sizes["standard"] < sizes["memo"]
    assert len(summary(api, deal, "brief")["text"].splitlines()) <= 10
    assert "- " in summary(api, deal, "memo")["text"]  # the placements, one by one


def test_the_same_records_give_the_same_bytes(api, account):
    deal = full_deal(account)
    searched(deal)
    quotes_in(deal)
    for detail in DETAILS:
        first = api.get(f"{API}/deals/{deal.pk}/summary/", {"detail": detail}).content
        assert api.get(f"{API}/deals/{deal.pk}/summary/", {"detail": detail}).content == first


def test_another_accounts_deal_is_not_found_like_a_missing_one(api, other_api, account):
    deal = full_deal(account)
    theirs = other_api.get(f"{API}/deals/{deal.pk}/summary/")
    missing = api.get(f"{API}/deals/999999/summary/")
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json()["code"] == missing.json()["code"] == "NOT_FOUND"
    assert theirs.json()["message"] == f"Deal not found: {deal.pk}"


def test_without_placements_read_the_placements_are_left_out_and_said(user, account):
    deal = full_deal(account)
    quotes_in(deal)
    _key, raw = api_key_create(user=user, account=account, name="deals only", scopes=frozenset({DEALS_READ}))
    api = client_with_key(raw)
    body = checked(api, deal, "memo")
    assert "lacks the placements:read scope" in body["text"]
    assert "placements and quotes: the credential lacks the placements:read scope" in body["left_out"]
    assert not any(s["record"] in ("placement", "placement_list", "term_sheet_comparison") for s in body["sources"])
    assert "Quotes" not in body["text"] and "follow_up" not in rules(body)
    assert "lacks the lenders:read scope" in body["text"] and len(body["left_out"]) == 2


def test_without_lenders_read_the_search_is_left_out_and_said(user, account):
    deal = full_deal(account)
    searched(deal, matches=3)
    placements_out(deal, 1)
    _key, raw = api_key_create(user=user, account=account, name="no lenders",
                               scopes=frozenset({DEALS_READ, "placements:read"}))
    body = checked(client_with_key(raw), deal, "memo")
    assert body["left_out"] == ["lender search: the credential lacks the lenders:read scope"]
    assert "Lender search: left out" in body["text"] and "Placements: 1 [" in body["text"]
    assert not any(s["record"] == "lender_search" for s in body["sources"])


def test_without_deals_read_it_is_forbidden(user, account):
    deal = full_deal(account)
    _key, raw = api_key_create(user=user, account=account, name="lenders", scopes=frozenset({"lenders:read"}))
    response = client_with_key(raw).get(f"{API}/deals/{deal.pk}/summary/")
    assert response.status_code == 403


@pytest.mark.parametrize("query", [{"detail": "everything"}, {"detail": ""}, {"colour": "blue"}])
def test_a_bad_detail_is_a_validation_error(api, account, query):
    deal = full_deal(account)
    response = api.get(f"{API}/deals/{deal.pk}/summary/", query)
    assert response.status_code == 400 and response.json()["code"] == "VALIDATION_ERROR"


def test_detail_is_read_as_the_api_reads_enums(api, account):
    assert summary(api, full_deal(account), "MEMO")["detail"] == "memo"


def _queries(api, deal, detail):
    with CaptureQueriesContext(connection) as captured:
        summary(api, deal, detail)
    return len(captured.captured_queries)


def test_the_query_count_does_not_grow_with_the_deal(api, account):
    small = full_deal(account)
    searched(small, matches=1)
    quotes_in(small)
    placements_out(small, 1, days_ago=20)
    large = full_deal(account)
    many_properties(large, 30)
    searched(large, matches=30)
    placed = placements_out(large, 25, days_ago=20)
    for placement in placed[:12]:
        quote(placement, fixed_rate=Decimal("6.1"), expires_on=timezone.localdate() + dt.timedelta(days=3))
    quote(placed[12], rate_type="floating", fixed_rate=None, rate_index="sofr", spread_bps=300)
    summary(api, small)  # the credential is read once, then cached: count the summary's queries alone
    for detail in DETAILS:
        assert _queries(api, large, detail) == _queries(api, small, detail) <= 15, detail


def test_a_deal_with_financials_but_no_rate_asks_for_the_rate(api, account):
    deal = full_deal(account)
    DealFinancials.objects.filter(deal=deal).update(interest_rate=None)
    body = checked(api, deal)
    assert "DSCR unavailable (no interest rate)" in body["text"]
    assert rules(body) == ["add_rate", "start_search"]


def test_every_placement_closed_without_a_quote_says_place_more(api, account):
    deal = full_deal(account)
    searched(deal)
    for lender in lenders(2):
        place(deal, lender, status="declined")
    body = checked(api, deal)
    assert "2 declined [" in body["text"] and rules(body) == ["place_more"]
    assert Placement.objects.filter(deal=deal).count() == 2 and LenderSearch.objects.filter(deal=deal).exists()


def test_figures_at_the_edges_of_their_columns_are_cited_as_served(api, account):
    tiny = full_deal(account)
    tiny.loan_amount = Decimal("1")
    tiny.save()
    DealFinancials.objects.filter(deal=tiny).update(
        in_place_noi=Decimal("999999999999.99"), estimated_value=Decimal("0.01"), purchase_price=None,
        interest_rate=Decimal("0"), amortization_years=1)
    body = checked(api, tiny, "memo")
    assert "LTV 10000%" in body["text"] and "debt yield" in body["text"]
    huge = full_deal(account)
    huge.loan_amount = Decimal("999999999999.99")
    huge.save()
    DealFinancials.objects.filter(deal=huge).update(in_place_noi=Decimal("0.01"),
                                                    estimated_value=Decimal("999999999999.99"))
    body = checked(api, huge, "memo")
    assert "$999,999,999,999.99 [1]" in body["text"] and "LTV 100% [" in body["text"]


def test_a_changed_deal_says_search_again_and_drafts_say_send_them(api, account):
    deal = full_deal(account)
    search = searched(deal)
    deal_services.deal_update(deal=deal, data={"title": "Renamed"})
    body = checked(api, deal)
    assert "(the deal changed since [" in body["text"] and rules(body) == ["search_again"]
    assert f"since lender search {search.pk}" in body["next_steps"][0]["text"]
    place(deal, lenders(1)[0], status="draft")
    body = checked(api, deal)
    assert rules(body) == ["send_drafts"] and "1 draft [" in body["text"]
