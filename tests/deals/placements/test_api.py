"""REST API of placements and term sheets: creating many at once, the status workflow, quotes, the
winner, tenancy on every endpoint, filters, pagination and idempotent creates."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from deals import services
from deals.models import Placement, TermSheet
from deals.placements.serializers import CREATE_TARGET_MESSAGE
from deals.placements.services import RATE_TERMS_MESSAGE
from deals.searches.models import LenderSearch
from lenders.rates.services import market_rate_set
from lev import limits
from lev.accounts.models import Membership
from lev.accounts.services import api_key_create
from tests.conftest import client_with_key
from tests.deals.placements.helpers import FIXED, deal_with_financials, lenders, place, quote
from tests.deals.searches.factories import make_deal
from tests.deals.test_api import assert_error
from tests.factories import DealFactory, LenderProgramFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def searched(api, eager_jobs, django_capture_on_commit_callbacks):
    """Start a lender search of a deal through the API; the ranking job runs at once."""
    def run(client, deal_id: int) -> dict:
        with django_capture_on_commit_callbacks(execute=True):
            client.post(f"/api/v1/deals/{deal_id}/lender-searches/", {}, format="json")
        return client.get(f"/api/v1/lender-searches/{LenderSearch.objects.latest('id').id}/").json()

    return run


def create(api, deal_id: int, body: dict, **headers):
    return api.post(f"/api/v1/deals/{deal_id}/placements/", body, format="json", **headers)


# --- creating placements --------------------------------------------------------------------------------
def test_one_call_places_many_lenders_and_reports_each_one_it_could_not(api, account):
    deal = deal_with_financials(account)
    a, b, c = lenders(3)
    first = create(api, deal.id, {"lender_ids": [a.id, b.id]})
    assert first.status_code == 201
    body = first.json()
    assert body["created"] == 2 and body["failed"] == []
    assert [(p["lender_id"], p["status"], p["sent_at"]) for p in body["placements"]] == [
        (a.id, "draft", None), (b.id, "draft", None)]
    assert body["placements"][0]["allowed_next_statuses"] == ["sent", "archived"]

    missing = c.id + 1000
    again = create(api, deal.id, {"lender_ids": [b.id, c.id, missing, c.id], "send": True})
    assert again.status_code == 201
    body = again.json()
    assert [p["lender_id"] for p in body["placements"]] == [c.id]  # the repeated id placed once
    assert body["placements"][0]["status"] == "sent" and body["placements"][0]["sent_at"]
    b_placement = Placement.objects.get(deal=deal, lender=b)
    assert body["failed"] == [
        {"lender_id": b.id, "code": "CONFLICT", "placement_id": b_placement.id,
         "message": f"Conflict: lender {b.id} already has an open placement on this deal (placement "
                    f"{b_placement.id})"},
        {"lender_id": missing, "code": "NOT_FOUND", "message": f"Lender not found: {missing}"},
    ]
    nothing = create(api, deal.id, {"lender_ids": [a.id]})
    assert nothing.status_code == 200 and nothing.json()["created"] == 0
    assert Placement.objects.filter(deal=deal).count() == 3


def test_a_closed_placement_does_not_stop_placing_the_lender_again(api, account):
    deal = deal_with_financials(account)
    (lender,) = lenders(1)
    first = place(deal, lender, status="declined")
    body = create(api, deal.id, {"lender_ids": [lender.id]}).json()
    assert body["created"] == 1 and body["placements"][0]["id"] != first.id


def test_the_top_n_of_a_search_are_placed_with_their_rank_and_best_program(api, account, searched):
    deal = make_deal(account)
    programs = [LenderProgramFactory() for _ in range(4)]
    search = searched(api, deal.id)
    assert search["status"] == "completed"
    body = create(api, deal.id, {"search_id": search["search_id"], "top_n": 3, "send": True}).json()
    matches = list(LenderSearch.objects.get(pk=search["search_id"]).matches.order_by("rank")[:3])
    assert [(p["lender_id"], p["source_rank"], p["source_search_id"]) for p in body["placements"]] == [
        (m.lender_id, m.rank, search["search_id"]) for m in matches]
    by_lender = {p.lender_id: p.id for p in programs}
    assert [p["program_id"] for p in body["placements"]] == [by_lender[m.lender_id] for m in matches]

    default = create(api, deal.id, {"search_id": search["search_id"]}).json()  # top 5 by default
    assert default["created"] == 1 and {f["code"] for f in default["failed"]} == {"CONFLICT"}
    # Chosen lenders with the search: placed with their rank there.
    outsider = lenders(1)[0]
    both = create(api, deal.id, {"search_id": search["search_id"], "lender_ids": [outsider.id]}).json()
    assert both["placements"][0]["source_rank"] is None


def test_a_search_must_be_this_deals_completed_one_and_this_accounts(api, other_api, account, other_account,
                                                                     searched):
    deal, other_deal = make_deal(account), make_deal(account)
    LenderProgramFactory()
    search = searched(api, other_deal.id)
    body = assert_error(create(api, deal.id, {"search_id": search["search_id"]}), 409, "BUSINESS_RULE",
                        f"Not allowed: lender search {search['search_id']} ranked another deal")
    assert "different deal" in body["details"]["customer_message"]

    LenderSearch.objects.filter(pk=search["search_id"]).update(deal=deal, status="running")
    body = assert_error(create(api, deal.id, {"search_id": search["search_id"]}), 409, "BUSINESS_RULE",
                        "Not allowed: lender search")
    assert body["details"]["search_status"] == "running"
    assert "still running" in body["details"]["customer_message"]

    rival_deal = make_deal(other_account)
    rival_search = searched(other_api, rival_deal.id)
    assert_error(create(api, deal.id, {"search_id": rival_search["search_id"]}), 404, "NOT_FOUND",
                 f"Lender search not found: {rival_search['search_id']}")
    assert not Placement.objects.exists()


def test_an_archived_deal_takes_no_new_placements(api, account):
    deal = deal_with_financials(account)
    services.deal_archive(deal=deal)
    body = assert_error(create(api, deal.id, {"lender_ids": [lenders(1)[0].id]}), 409, "BUSINESS_RULE",
                        f"Not allowed: deal {deal.id} is archived")
    assert "create a new deal" in body["details"]["customer_message"]
    assert not Placement.objects.exists()


@pytest.mark.parametrize("body", [{}, {"top_n": 3}, {"lender_ids": [1], "top_n": 2}, {"notes": "x", "send": True}])
def test_create_needs_lenders_or_a_search(api, account, body):
    deal = deal_with_financials(account)
    error = assert_error(create(api, deal.id, body), 400, "VALIDATION_ERROR", "Validation failed: ")
    assert error["message"] == f"Validation failed: {CREATE_TARGET_MESSAGE}"


@pytest.mark.parametrize(("body", "field"), [
    ({"lender_ids": []}, "lender_ids"),
    ({"lender_ids": list(range(1, 52))}, "lender_ids"),
    ({"lender_ids": [0]}, "lender_ids.0"),
    ({"search_id": 1, "top_n": 51}, "top_n"),
    ({"lender_ids": [1], "color": "red"}, "color"),
])
def test_create_bounds(api, account, body, field):
    deal = deal_with_financials(account)
    error = assert_error(create(api, deal.id, body), 400, "VALIDATION_ERROR", f"Validation failed: {field} ")
    assert field in error["details"]["fields"]


def test_a_repeated_create_with_its_idempotency_key_replays_the_first_answer(api, account):
    deal = deal_with_financials(account)
    a, b = lenders(2)
    first = create(api, deal.id, {"lender_ids": [a.id, b.id]}, HTTP_IDEMPOTENCY_KEY="place-1")
    again = create(api, deal.id, {"lender_ids": [a.id, b.id]}, HTTP_IDEMPOTENCY_KEY="place-1")
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert Placement.objects.filter(deal=deal).count() == 2


# --- listing ------------------------------------------------------------------------------------------------
def test_list_filters_and_pages(api, account):
    deal = deal_with_financials(account)
    ls = lenders(3)
    place(deal, ls[0], status="draft")
    place(deal, ls[1], status="declined")
    place(deal, ls[2], status="sent")
    base = f"/api/v1/deals/{deal.id}/placements/"
    assert [p["lender_id"] for p in api.get(base).json()["results"]] == [x.id for x in ls]
    assert [p["lender_id"] for p in api.get(base, {"status": "DECLINED"}).json()["results"]] == [ls[1].id]
    assert [p["lender_id"] for p in api.get(base, {"lender_id": ls[2].id}).json()["results"]] == [ls[2].id]
    page = api.get(base, {"page_size": 2}).json()
    assert page["count"] == 3 and len(page["results"]) == 2 and page["next"]
    assert api.get(base, {"status": "lost"}).json() == {"count": 0, "next": None, "previous": None, "results": []}
    assert_error(api.get(base, {"status": "pending"}), 400, "VALIDATION_ERROR", "Validation failed: status must be")


def test_term_sheet_lists_leave_out_removed_quotes(api, account):
    deal = deal_with_financials(account)
    one, two = place(deal, lenders(1)[0]), place(deal, lenders(1)[0])
    kept, removed, other = quote(one), quote(one, quote_type="indicative"), quote(two)
    assert api.delete(f"/api/v1/term-sheets/{removed.id}/").status_code == 204
    assert TermSheet.objects.get(pk=removed.id).deleted_at is not None  # kept on record
    listed = api.get(f"/api/v1/deals/{deal.id}/term-sheets/").json()
    assert [t["id"] for t in listed["results"]] == [kept.id, other.id]
    only = api.get(f"/api/v1/deals/{deal.id}/term-sheets/", {"placement_id": two.id}).json()["results"]
    assert [t["id"] for t in only] == [other.id]
    of_placement = api.get(f"/api/v1/placements/{one.id}/term-sheets/").json()["results"]
    assert [t["id"] for t in of_placement] == [kept.id]
    detail = api.get(f"/api/v1/placements/{one.id}/").json()
    assert detail["term_sheet_count"] == 1 and [t["id"] for t in detail["term_sheets"]] == [kept.id]
    assert_error(api.get(f"/api/v1/term-sheets/{removed.id}/"), 404, "NOT_FOUND", f"Term sheet not found: {removed.id}")
    assert_error(api.delete(f"/api/v1/term-sheets/{removed.id}/"), 404, "NOT_FOUND", "Term sheet not found")


# --- status workflow ------------------------------------------------------------------------------------------
def patch(api, placement_id: int, body: dict):
    return api.patch(f"/api/v1/placements/{placement_id}/", body, format="json")


def test_status_moves_forward_and_stamps_the_times_the_activity_signals_read(api, account):
    deal = deal_with_financials(account)
    placement = place(deal, lenders(1)[0], status="draft")
    sent = patch(api, placement.id, {"status": "sent", "contact_name": "Dana Diaz",
                                      "contact_email": "dana@lender.example.com"}).json()
    assert sent["status"] == "sent" and sent["sent_at"] and sent["first_response_at"] is None
    assert sent["contact_email"] == "dana@lender.example.com"
    reviewing = patch(api, placement.id, {"status": "reviewing"}).json()
    assert reviewing["first_response_at"] and reviewing["allowed_next_statuses"] == [
        "declined", "no_response", "archived"]
    assert reviewing["automatic_next_statuses"] == ["quoted"]
    again = patch(api, placement.id, {"status": "reviewing"}).json()  # the same status: nothing changes
    assert again["first_response_at"] == reviewing["first_response_at"]
    declined = patch(api, placement.id, {"status": "declined"}).json()
    assert declined["decided_at"] and declined["allowed_next_statuses"] == ["archived"]


@pytest.mark.parametrize(("start", "requested", "allowed", "says"), [
    ("draft", "reviewing", ["sent", "archived"], "From draft it can move to sent or archived."),
    ("declined", "sent", ["archived"], "From declined it can move to archived."),
    ("archived", "sent", [], "Its status is final (archived)"),
])
def test_an_illegal_move_names_the_allowed_next_statuses(api, account, start, requested, allowed, says):
    deal = deal_with_financials(account)
    placement = place(deal, lenders(1)[0], status="draft" if start == "draft" else "sent")
    if start != "draft":
        patch(api, placement.id, {"status": start})
    body = assert_error(patch(api, placement.id, {"status": requested}), 409, "BUSINESS_RULE",
                        f"Not allowed: placement {placement.id} cannot go from {start} to {requested}")
    assert body["details"]["allowed_next_statuses"] == allowed
    assert says in body["details"]["customer_message"]
    assert Placement.objects.get(pk=placement.id).status == start


@pytest.mark.parametrize("status", ["quoted", "won", "draft", "pending"])
def test_statuses_set_by_the_workflow_itself_are_not_accepted_by_patch(api, account, status):
    placement = place(deal_with_financials(account), lenders(1)[0])
    body = assert_error(patch(api, placement.id, {"status": status}), 400, "VALIDATION_ERROR",
                        "Validation failed: status must be one of: sent, reviewing, declined")
    assert "status" in body["details"]["fields"]


def test_an_archived_placement_keeps_its_notes(api, account):
    placement = place(deal_with_financials(account), lenders(1)[0], status="archived")
    assert_error(patch(api, placement.id, {"notes": "late"}), 409, "BUSINESS_RULE",
                 f"Not allowed: placement {placement.id} is archived")
    assert patch(api, placement.id, {"status": "archived"}).status_code == 200  # a repeat is fine


def test_a_decline_is_recorded_with_its_reason_trimmed_and_bounded(api, account):
    placement = place(deal_with_financials(account), lenders(1)[0])
    declined = patch(api, placement.id, {"status": "declined", "decline_reason": "  Outside our box: no office  "})
    assert declined.status_code == 200
    assert declined.json()["decline_reason"] == "Outside our box: no office"
    assert Placement.objects.get(pk=placement.id).decline_reason == "Outside our box: no office"
    assert api.get(f"/api/v1/placements/{placement.id}/").json()["decline_reason"] == "Outside our box: no office"
    body = assert_error(patch(api, placement.id, {"decline_reason": "x" * (limits.DECLINE_REASON_MAX + 1)}), 400,
                        "VALIDATION_ERROR",
                        f"Validation failed: decline_reason must be at most {limits.DECLINE_REASON_MAX} characters")
    assert "decline_reason" in body["details"]["fields"]
    assert_error(patch(api, placement.id, {"decline_reason": "bad\x00reason"}), 400, "VALIDATION_ERROR",
                 "Validation failed: decline_reason")
    assert Placement.objects.get(pk=placement.id).decline_reason == "Outside our box: no office"  # refused whole
    assert patch(api, placement.id, {"decline_reason": "x" * limits.DECLINE_REASON_MAX}).status_code == 200
    assert patch(api, placement.id, {"decline_reason": "   "}).json()["decline_reason"] == ""  # blank clears it


def test_program_must_be_one_of_the_lenders(api, account):
    placement = place(deal_with_financials(account), lenders(1)[0])
    theirs = LenderProgramFactory()
    assert_error(patch(api, placement.id, {"program_id": theirs.id}), 404, "NOT_FOUND",
                 f"Lender program not found: {theirs.id}")
    mine = LenderProgramFactory(lender=placement.lender)
    assert patch(api, placement.id, {"program_id": mine.id}).json()["program_title"] == mine.title
    assert patch(api, placement.id, {"program_id": None}).json()["program_id"] is None


@pytest.mark.parametrize("email", ["not-an-email", "a@b", "a b@c.com"])
def test_contact_email_is_checked_with_the_tools_pattern(api, account, email):
    placement = place(deal_with_financials(account), lenders(1)[0])
    assert_error(patch(api, placement.id, {"contact_email": email}), 400, "VALIDATION_ERROR",
                 "Validation failed: contact_email must be an email address")


# --- term sheets -------------------------------------------------------------------------------------------
def add(api, placement_id: int, body: dict, **headers):
    return api.post(f"/api/v1/placements/{placement_id}/term-sheets/", body, format="json", **headers)


def test_a_quote_on_a_sent_placement_makes_it_quoted(api, account):
    placement = place(deal_with_financials(account), lenders(1)[0])
    response = add(api, placement.id, {**FIXED, "fixed_rate": 6.12549, "origination_fee_percent": 1,
                                       "recourse": "NON_RECOURSE", "expires_on": "2030-01-31"})
    assert response.status_code == 201
    body = response.json()
    assert (body["fixed_rate"], body["recourse"], body["quote_type"], body["winning"]) == (
        6.125, "non_recourse", "term_sheet", False)
    assert body["lender_id"] == placement.lender_id and body["deal_id"] == placement.deal_id
    fresh = Placement.objects.get(pk=placement.id)
    assert fresh.status == "quoted" and fresh.first_response_at is not None


@pytest.mark.parametrize("status", ["draft", "declined", "no_response", "archived"])
def test_a_quote_needs_a_sent_reviewing_or_quoted_placement(api, account, status):
    placement = place(deal_with_financials(account), lenders(1)[0], status=status)
    body = assert_error(add(api, placement.id, FIXED), 409, "BUSINESS_RULE",
                        f"Not allowed: placement {placement.id} is {status}; a term sheet needs")
    assert body["details"]["allowed_statuses"] == ["sent", "reviewing", "quoted"]
    assert not TermSheet.objects.exists()


@pytest.mark.parametrize(("terms", "field"), [
    ({"rate_type": "fixed"}, "fixed_rate"),
    ({"rate_type": "fixed", "fixed_rate": 6, "spread_bps": 250}, "spread_bps"),
    ({"rate_type": "floating", "rate_index": "sofr"}, "spread_bps"),
    ({"rate_type": "floating", "spread_bps": 250, "fixed_rate": 6, "rate_index": "sofr"}, "fixed_rate"),
])
def test_rate_terms_must_match_the_rate_type(api, account, terms, field):
    placement = place(deal_with_financials(account), lenders(1)[0])
    body = assert_error(add(api, placement.id, {"loan_amount": 5_000_000, **terms}), 400, "VALIDATION_ERROR",
                        RATE_TERMS_MESSAGE)
    assert field in body["details"]["fields"]


def test_a_floating_quote_and_bounds(api, account):
    placement = place(deal_with_financials(account), lenders(1)[0])
    ok = add(api, placement.id, {"loan_amount": 9_000_000, "rate_type": "floating", "rate_index": "SOFR",
                                 "spread_bps": 275, "max_ltv": 75.555, "min_dscr": 1.2})
    assert ok.status_code == 201 and (ok.json()["rate_index"], ok.json()["max_ltv"]) == ("sofr", 75.56)
    for field, value in (("spread_bps", 3001), ("term_months", 0), ("origination_fee_percent", 10.5),
                         ("max_ltv", 101), ("loan_amount", 0)):
        body = {"loan_amount": 9_000_000, "rate_type": "floating", "rate_index": "sofr", "spread_bps": 275,
                field: value}
        assert_error(add(api, placement.id, body), 400, "VALIDATION_ERROR", f"Validation failed: {field} ")


def test_a_quote_is_recorded_once_per_idempotency_key(api, account):
    placement = place(deal_with_financials(account), lenders(1)[0])
    first = add(api, placement.id, FIXED, HTTP_IDEMPOTENCY_KEY="ts-1")
    again = add(api, placement.id, FIXED, HTTP_IDEMPOTENCY_KEY="ts-1")
    assert again.json() == first.json() and TermSheet.objects.count() == 1


def test_removing_the_only_quote_puts_the_placement_back_to_reviewing(api, account):
    placement = place(deal_with_financials(account), lenders(1)[0])
    term_sheet = quote(placement)
    assert api.delete(f"/api/v1/term-sheets/{term_sheet.id}/").status_code == 204
    assert Placement.objects.get(pk=placement.id).status == "reviewing"


# --- the winner -------------------------------------------------------------------------------------------
def select(api, term_sheet_id: int, **headers):
    return api.post(f"/api/v1/term-sheets/{term_sheet_id}/select-winner/", format="json", **headers)


def test_choosing_the_winner_closes_every_other_open_placement(api, account):
    deal = deal_with_financials(account)
    ls = lenders(5)
    winner_placement, rival, waiting = place(deal, ls[0]), place(deal, ls[1]), place(deal, ls[2], status="reviewing")
    declined, draft = place(deal, ls[3], status="declined"), place(deal, ls[4], status="draft")
    winner, losing = quote(winner_placement), quote(rival, fixed_rate="6.5")
    response = select(api, winner.id)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["changed"] is True and body["term_sheet"]["winning"] is True
    assert sorted(body["lost_placement_ids"]) == sorted([rival.id, waiting.id, draft.id])
    statuses = dict(Placement.objects.filter(deal=deal).values_list("id", "status"))
    assert statuses == {winner_placement.id: "won", rival.id: "lost", waiting.id: "lost", declined.id: "declined",
                        draft.id: "lost"}
    assert Placement.objects.get(pk=winner_placement.id).decided_at is not None

    repeat = select(api, winner.id).json()
    assert repeat["changed"] is False and repeat["lost_placement_ids"] == []
    # The losing quote's placement is lost now; and a deal has only one winner anyway.
    body = assert_error(select(api, losing.id), 409, "BUSINESS_RULE",
                        f"Not allowed: deal {deal.id} already has a winning term sheet ({winner.id})")
    assert body["details"]["winning_term_sheet_id"] == winner.id
    assert ls[0].name in body["details"]["customer_message"]
    body = assert_error(api.delete(f"/api/v1/term-sheets/{winner.id}/"), 409, "BUSINESS_RULE",
                        f"Not allowed: term sheet {winner.id} is the winning quote")
    assert TermSheet.objects.filter(winning=True).count() == 1


def test_an_expired_quote_or_a_closed_placement_cannot_win(api, account):
    deal = deal_with_financials(account)
    one, two = place(deal, lenders(1)[0]), place(deal, lenders(1)[0])
    expired = quote(one, expires_on=timezone.localdate() - dt.timedelta(days=1))
    body = assert_error(select(api, expired.id), 409, "BUSINESS_RULE", f"Not allowed: term sheet {expired.id} expired")
    assert "extend or reissue" in body["details"]["customer_message"]
    closed = quote(two)
    patch(api, two.id, {"status": "lost"})
    assert_error(select(api, closed.id), 409, "BUSINESS_RULE",
                 f"Not allowed: placement {two.id} of term sheet {closed.id} is lost")
    assert not TermSheet.objects.filter(winning=True).exists()


def test_an_archived_deal_takes_no_quote_and_no_winner(api, account):
    deal = deal_with_financials(account)
    placement = place(deal, lenders(1)[0])
    term_sheet = quote(placement)
    services.deal_archive(deal=deal)
    assert_error(add(api, placement.id, FIXED), 409, "BUSINESS_RULE", f"Not allowed: deal {deal.id} is archived")
    assert_error(select(api, term_sheet.id), 409, "BUSINESS_RULE", f"Not allowed: deal {deal.id} is archived")


# --- comparison and base rates ---------------------------------------------------------------------------------
def test_the_comparison_endpoint_ranks_quotes_and_says_what_it_cannot_compute(api, account):
    deal = deal_with_financials(account)
    cheap, big = place(deal, lenders(1)[0]), place(deal, lenders(1)[0])
    quote(cheap, fixed_rate="5.5")
    quote(big, loan_amount=11_000_000, rate_type="floating", fixed_rate=None, rate_index="sofr", spread_bps=250)
    body = api.get(f"/api/v1/deals/{deal.id}/term-sheets/comparison/").json()
    assert body["count"] == 2 and body["quotes"][0]["placement_id"] == cheap.id
    assert body["quotes"][1]["all_in_rate"] is None
    assert any("SOFR" in text for text in body["unavailable"])
    assert api.get("/api/v1/base-rates/").json() == {"results": []}  # deprecated, read from the market rates


# --- tenancy and roles ---------------------------------------------------------------------------------------
@pytest.fixture
def rival_world(other_account):
    deal = deal_with_financials(other_account, title="Rival deal")
    placement = place(deal, lenders(1)[0])
    return deal, placement, quote(placement)


@pytest.mark.parametrize(("method", "path", "data", "resource"), [
    ("get", "/api/v1/deals/{deal}/placements/", None, "Deal"),
    ("post", "/api/v1/deals/{deal}/placements/", {"lender_ids": [1]}, "Deal"),
    ("get", "/api/v1/deals/{deal}/term-sheets/", None, "Deal"),
    ("get", "/api/v1/deals/{deal}/term-sheets/comparison/", None, "Deal"),
    ("get", "/api/v1/placements/{placement}/", None, "Placement"),
    ("patch", "/api/v1/placements/{placement}/", {"status": "declined"}, "Placement"),
    ("get", "/api/v1/placements/{placement}/term-sheets/", None, "Placement"),
    ("post", "/api/v1/placements/{placement}/term-sheets/", FIXED, "Placement"),
    ("get", "/api/v1/term-sheets/{term_sheet}/", None, "Term sheet"),
    ("delete", "/api/v1/term-sheets/{term_sheet}/", None, "Term sheet"),
    ("post", "/api/v1/term-sheets/{term_sheet}/select-winner/", None, "Term sheet"),
])
def test_another_accounts_objects_answer_exactly_like_missing_ones(api, rival_world, method, path, data, resource):
    deal, placement, term_sheet = rival_world
    ids = {"deal": deal.id, "placement": placement.id, "term_sheet": term_sheet.id}
    rival_id = ids[{"Deal": "deal", "Placement": "placement", "Term sheet": "term_sheet"}[resource]]
    missing_ids = {k: v + 10_000 for k, v in ids.items()}
    rival = getattr(api, method)(path.format(**ids), data, format="json")
    missing = getattr(api, method)(path.format(**missing_ids), data, format="json")
    body = assert_error(rival, 404, "NOT_FOUND", f"{resource} not found: {rival_id}")
    other = assert_error(missing, 404, "NOT_FOUND", f"{resource} not found: ")
    assert set(body) == set(other) and body["details"].keys() == other["details"].keys()
    placement.refresh_from_db()
    term_sheet.refresh_from_db()
    assert (placement.status, term_sheet.winning, term_sheet.deleted_at) == ("quoted", False, None)
    assert Placement.objects.count() == 1 and TermSheet.objects.count() == 1


def test_viewers_read_placements_but_do_not_change_them(account):
    deal = deal_with_financials(account)
    placement = place(deal, lenders(1)[0])
    viewer = MembershipFactory(account=account, user=UserFactory(username="vera"), role=Membership.Role.VIEWER)
    _key, raw = api_key_create(user=viewer.user, account=account, name="t")
    api = client_with_key(raw)
    assert api.get(f"/api/v1/placements/{placement.id}/").status_code == 200
    assert_error(patch(api, placement.id, {"status": "declined"}), 403, "FORBIDDEN", "Forbidden: ")
    assert_error(add(api, placement.id, FIXED), 403, "FORBIDDEN", "Forbidden: ")
    assert_error(create(api, deal.id, {"lender_ids": [placement.lender_id]}), 403, "FORBIDDEN", "Forbidden: ")


def test_list_queries_do_not_grow_with_the_placements(api, account, django_assert_max_num_queries):
    deal = DealFactory(account=account)
    ids = [lender.id for lender in lenders(30)]
    with django_assert_max_num_queries(20):
        body = create(api, deal.id, {"lender_ids": ids}).json()
    assert body["created"] == 30 and all(p["lender_name"] for p in body["placements"])
    Placement.objects.filter(deal=deal).delete()
    for lender in lenders(6):
        quote(place(deal, lender))
    with django_assert_max_num_queries(12):
        assert len(api.get(f"/api/v1/deals/{deal.id}/placements/").json()["results"]) == 6
    with django_assert_max_num_queries(12):
        assert len(api.get(f"/api/v1/deals/{deal.id}/term-sheets/").json()["results"]) == 6
    with django_assert_max_num_queries(12):
        assert api.get(f"/api/v1/deals/{deal.id}/term-sheets/comparison/").json()["count"] == 6


def test_a_quote_received_earlier_is_recorded_on_its_day_never_in_the_future_or_before_it_was_sent(api, account):
    deal = deal_with_financials(account)
    placement = place(deal, lenders(1)[0])
    today = timezone.localdate()
    Placement.objects.filter(pk=placement.pk).update(sent_at=timezone.now() - dt.timedelta(days=10))
    url = f"/api/v1/placements/{placement.id}/term-sheets/"

    earlier = (today - dt.timedelta(days=3)).isoformat()
    made = api.post(url, {**FIXED, "quoted_on": earlier}, format="json")
    assert made.status_code == 201, made.json()
    assert timezone.localtime(TermSheet.objects.get(pk=made.json()["id"]).received_at).date().isoformat() == earlier
    assert made.json()["received_at"].startswith(earlier)

    tomorrow = (today + dt.timedelta(days=1)).isoformat()
    assert_error(api.post(url, {**FIXED, "quoted_on": tomorrow}, format="json"), 400, "VALIDATION_ERROR",
                 f"Validation failed: quoted_on is after today ({today.isoformat()})")
    before_sent = (today - dt.timedelta(days=11)).isoformat()
    sent_on = (today - dt.timedelta(days=10)).isoformat()
    assert_error(api.post(url, {**FIXED, "quoted_on": before_sent}, format="json"), 400, "VALIDATION_ERROR",
                 f"Validation failed: quoted_on is before the placement was sent ({sent_on})")
    assert_error(api.post(url, {**FIXED, "quoted_on": "last week"}, format="json"), 400, "VALIDATION_ERROR",
                 "Validation failed")
    assert TermSheet.objects.filter(placement=placement).count() == 1  # nothing recorded by a refusal
    today_quote = api.post(url, {**FIXED, "quoted_on": today.isoformat()}, format="json").json()
    assert abs(TermSheet.objects.get(pk=today_quote["id"]).received_at - timezone.now()) < dt.timedelta(minutes=1)


def test_a_floating_quote_recorded_for_an_earlier_day_compares_with_that_days_rate(api, account):
    deal = deal_with_financials(account)
    placement = place(deal, lenders(1)[0])
    Placement.objects.filter(pk=placement.pk).update(sent_at=timezone.now() - dt.timedelta(days=20))
    today = timezone.localdate()
    market_rate_set(index="sofr", on=today - dt.timedelta(days=12), rate=Decimal("4.10"))
    market_rate_set(index="sofr", on=today, rate=Decimal("4.60"))
    floating = {**FIXED, "rate_type": "floating", "fixed_rate": None, "rate_index": "sofr", "spread_bps": 250}
    earlier = (today - dt.timedelta(days=3)).isoformat()
    assert api.post(f"/api/v1/placements/{placement.id}/term-sheets/", {**floating, "quoted_on": earlier},
                    format="json").status_code == 201
    body = api.get(f"/api/v1/deals/{deal.id}/term-sheets/comparison/").json()
    (only,) = body["quotes"]
    as_of = (today - dt.timedelta(days=12)).isoformat()
    assert (only["quoted_on"], only["base_rate"], only["base_rate_as_of"], only["all_in_rate"]) == (
        earlier, 4.1, as_of, 6.6)
    assert f"SOFR of {as_of} used, the latest on or before the quote's {earlier}" in only["notes"]
    assert body["base_rates"] == [{"index": "sofr", "rate": 4.1, "as_of": as_of}]
