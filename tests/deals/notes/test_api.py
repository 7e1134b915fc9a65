"""Notes and a deal's timeline through REST: notes on each of the four targets, read, changed, deleted,
listed by filter and page; validation; idempotent creates; tenancy (another account's note or target
is a 404 like a missing one); scopes; and the timeline of a real flow (stage move → search → place →
status change → quote → winner → notes), with the acting user the history recorded for an API key."""

from __future__ import annotations

import pytest

from deals.models import Company, Contact, Note, Placement, TermSheet
from deals.placements import services as placement_services
from lev import limits
from lev.accounts.services import api_key_create
from lev.enums import TIMELINE_KINDS
from tests.conftest import client_with_key
from tests.deals.placements.helpers import FIXED, deal_with_financials, lenders, place
from tests.deals.searches.factories import lender_with, make_deal
from tests.deals.test_api import assert_error
from tests.factories import DealFinancialsFactory

pytestmark = pytest.mark.django_db

NOTES = "/api/v1/notes/"


def note(client, **fields) -> dict:
    response = client.post(NOTES, {"body": "Called the sponsor.", **fields}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def targets(account):
    deal = deal_with_financials(account)
    placement = place(deal, lenders(1)[0])
    company = Company.objects.create(account=account, kind="sponsor", name="Harbor Capital")
    contact = Contact.objects.create(account=account, company=company, name="Dana Reyes")
    return deal, placement, company, contact


# --- CRUD ---------------------------------------------------------------------------------------------
def test_notes_on_each_target_are_written_read_changed_listed_and_deleted(api, account, user):
    deal, placement, company, contact = targets(account)
    on_deal = note(api, deal_id=deal.pk, kind="meeting", body="Met the sponsor on site.")
    on_placement = note(api, placement_id=placement.pk, kind="call", body="Lender wants the rent roll.")
    on_company = note(api, company_id=company.pk, kind="email")
    on_contact = note(api, contact_id=contact.pk)
    assert (on_deal["deal_id"], on_deal["kind"], on_deal["author"], on_deal["author_id"]) == (
        deal.pk, "meeting", "alice", user.pk)
    assert (on_placement["placement_id"], on_placement["deal_id"]) == (placement.pk, None)
    assert on_contact["kind"] == "note" and Note.objects.get(pk=on_contact["id"]).account == account

    assert api.get(f"{NOTES}{on_deal['id']}/").json()["body"] == "Met the sponsor on site."
    changed = api.patch(f"{NOTES}{on_deal['id']}/", {"body": "Met the sponsor and the PM.", "kind": "call"},
                        format="json").json()
    assert (changed["body"], changed["kind"], changed["deal_id"]) == ("Met the sponsor and the PM.", "call", deal.pk)

    every = api.get(NOTES).json()
    assert [n["id"] for n in every["results"]] == [on_contact["id"], on_company["id"], on_placement["id"],
                                                   on_deal["id"]]  # newest first
    # A deal's notes include those on its placements (as its timeline shows them).
    assert {n["id"] for n in api.get(f"{NOTES}?deal_id={deal.pk}").json()["results"]} == {
        on_deal["id"], on_placement["id"]}
    assert [n["id"] for n in api.get(f"{NOTES}?placement_id={placement.pk}").json()["results"]] == [on_placement["id"]]
    assert [n["id"] for n in api.get(f"{NOTES}?company_id={company.pk}").json()["results"]] == [on_company["id"]]
    assert [n["id"] for n in api.get(f"{NOTES}?contact_id={contact.pk}&kind=note").json()["results"]] == [
        on_contact["id"]]
    assert api.get(f"{NOTES}?kind=meeting").json()["results"] == []

    first = api.get(f"{NOTES}?page_size=3").json()
    assert len(first["results"]) == 3 and first["count"] == 4 and "cursor=" in first["next"]
    rest = api.get(first["next"]).json()
    assert [n["id"] for n in rest["results"]] == [on_deal["id"]] and rest["next"] is None

    assert api.delete(f"{NOTES}{on_company['id']}/").status_code == 204
    assert_error(api.get(f"{NOTES}{on_company['id']}/"), 404, "NOT_FOUND", f"Note not found: {on_company['id']}")


@pytest.mark.parametrize(("body", "message"), [
    ({"body": "x"}, "Validation failed: a note is on exactly one of deal_id, placement_id, company_id or contact_id"),
    ({"body": "x", "deal_id": 1, "company_id": 1}, "Validation failed: a note is on exactly one of"),
    ({"deal_id": 1}, "Validation failed: body is required"),
    ({"deal_id": 1, "body": " "}, "Validation failed: body may not be blank"),
    ({"deal_id": 1, "body": "b" * (limits.NOTE_BODY_MAX + 1)},
     f"Validation failed: body must be at most {limits.NOTE_BODY_MAX} characters"),
    ({"deal_id": 1, "body": "x", "kind": "fax"}, "Validation failed: kind must be one of: note, call, email, meeting"),
    ({"deal_id": 0, "body": "x"}, "Validation failed: deal_id"),
    ({"deal_id": 1, "body": "x", "author": "me"}, "Validation failed: author"),
])
def test_a_note_that_breaks_a_rule_is_refused_with_the_field_named(api, body, message):
    assert_error(api.post(NOTES, body, format="json"), 400, "VALIDATION_ERROR", message)
    assert not Note.objects.exists()


def test_a_patch_changes_kind_and_body_only(api, account):
    deal = deal_with_financials(account)
    made = note(api, deal_id=deal.pk)
    assert_error(api.patch(f"{NOTES}{made['id']}/", {"deal_id": deal.pk + 1}, format="json"), 400,
                 "VALIDATION_ERROR", "Validation failed: deal_id")
    assert_error(api.patch(f"{NOTES}{made['id']}/", {"body": ""}, format="json"), 400, "VALIDATION_ERROR",
                 "Validation failed: body may not be blank")


def test_a_repeated_idempotency_key_writes_one_note(api, account):
    deal = deal_with_financials(account)
    body = {"deal_id": deal.pk, "kind": "call", "body": "Once"}
    first = api.post(NOTES, body, format="json", HTTP_IDEMPOTENCY_KEY="note-1")
    again = api.post(NOTES, body, format="json", HTTP_IDEMPOTENCY_KEY="note-1")
    assert first.status_code == again.status_code == 201 and first.json()["id"] == again.json()["id"]
    assert_error(api.post(NOTES, {**body, "body": "Other"}, format="json", HTTP_IDEMPOTENCY_KEY="note-1"), 409,
                 "CONFLICT", "")
    assert Note.objects.count() == 1


# --- tenancy ------------------------------------------------------------------------------------------
def test_another_accounts_notes_and_targets_are_missing_exactly_like_missing_ones(api, other_api, account,
                                                                                 other_account):
    deal, placement, company, contact = targets(other_account)
    theirs = note(other_api, deal_id=deal.pk)
    mine = deal_with_financials(account)
    note(api, deal_id=mine.pk)
    for name, target, resource in (("deal_id", deal.pk, "Deal"), ("placement_id", placement.pk, "Placement"),
                                   ("company_id", company.pk, "Company"), ("contact_id", contact.pk, "Contact")):
        refused = assert_error(api.post(NOTES, {name: target, "body": "Spy"}, format="json"), 404, "NOT_FOUND",
                               f"{resource} not found: {target}")
        missing = assert_error(api.post(NOTES, {name: target + 999, "body": "Spy"}, format="json"), 404,
                               "NOT_FOUND", f"{resource} not found: {target + 999}")
        assert refused["details"]["resource"] == missing["details"]["resource"]
        assert_error(api.get(f"{NOTES}?{name}={target}"), 404, "NOT_FOUND", f"{resource} not found: {target}")
    for response in (api.get(f"{NOTES}{theirs['id']}/"),
                     api.patch(f"{NOTES}{theirs['id']}/", {"body": "Taken"}, format="json"),
                     api.delete(f"{NOTES}{theirs['id']}/")):
        assert_error(response, 404, "NOT_FOUND", f"Note not found: {theirs['id']}")
    assert_error(api.get(f"/api/v1/deals/{deal.pk}/timeline/"), 404, "NOT_FOUND", f"Deal not found: {deal.pk}")
    assert [n["deal_id"] for n in api.get(NOTES).json()["results"]] == [mine.pk]
    assert Note.objects.get(pk=theirs["id"]).body == "Called the sponsor." and not Note.objects.filter(body="Spy")


# --- scopes -------------------------------------------------------------------------------------------
def test_notes_are_read_with_deals_read_and_written_with_deals_write(user, account):
    deal = deal_with_financials(account)
    made = Note.objects.create(account=account, deal=deal, body="Kept")
    _key, raw = api_key_create(user=user, account=account, name="reader", scopes=frozenset({"deals:read"}))
    reader = client_with_key(raw)
    _key, raw = api_key_create(user=user, account=account, name="placer", scopes=frozenset({"placements:read"}))
    placer = client_with_key(raw)
    assert reader.get(NOTES).status_code == 200 and reader.get(f"{NOTES}{made.pk}/").status_code == 200
    assert reader.get(f"/api/v1/deals/{deal.pk}/timeline/").status_code == 200
    for response in (reader.post(NOTES, {"deal_id": deal.pk, "body": "x"}, format="json"),
                     reader.patch(f"{NOTES}{made.pk}/", {"body": "x"}, format="json"),
                     reader.delete(f"{NOTES}{made.pk}/")):
        assert_error(response, 403, "FORBIDDEN", "Forbidden: this needs the scope deals:write")
    assert_error(placer.get(NOTES), 403, "FORBIDDEN", "Forbidden: this needs the scope deals:read")
    assert_error(placer.get(f"/api/v1/deals/{deal.pk}/timeline/"), 403, "FORBIDDEN",
                 "Forbidden: this needs the scope deals:read")
    assert list(Note.objects.values_list("body", flat=True)) == ["Kept"]


# --- the timeline -------------------------------------------------------------------------------------
def timeline(api, deal_id: int) -> list[dict]:
    entries, url = [], f"/api/v1/deals/{deal_id}/timeline/?page_size=5"
    while url:
        body = api.get(url).json()
        entries += body["results"]
        url = body["next"]
    return entries


def test_the_timeline_tells_a_real_flow_oldest_first_with_who_did_what(api, user, account,
                                                                      django_capture_on_commit_callbacks):
    lender_with("Lone Star Bank")
    lender_with("Gulf Coast Credit")
    deal = make_deal(account)
    DealFinancialsFactory(deal=deal)
    assert api.post(f"/api/v1/deals/{deal.pk}/stage/", {"stage": "underwriting", "reason": "T-12 in"},
                    format="json").status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(f"/api/v1/deals/{deal.pk}/lender-searches/", {}, format="json")
    assert started.status_code in (201, 202), started.content
    search_id = started.json().get("search_id") or started.json()["id"]
    placed = api.post(f"/api/v1/deals/{deal.pk}/placements/", {"search_id": search_id, "top_n": 2, "send": True},
                      format="json")
    assert placed.status_code in (200, 201), placed.content
    first, second = sorted(placed.json()["placements"], key=lambda p: p["id"])
    assert api.patch(f"/api/v1/placements/{second['id']}/", {"status": "reviewing"}, format="json").status_code == 200
    sheet = api.post(f"/api/v1/placements/{first['id']}/term-sheets/", FIXED, format="json")
    assert sheet.status_code == 201, sheet.content
    sheet_id = sheet.json()["id"]
    removed = api.post(f"/api/v1/placements/{first['id']}/term-sheets/", {**FIXED, "fixed_rate": 6.5}, format="json")
    assert api.delete(f"/api/v1/term-sheets/{removed.json()['id']}/").status_code == 204
    assert api.post(f"/api/v1/term-sheets/{sheet_id}/select-winner/", {}, format="json").status_code == 200
    note(api, placement_id=first["id"], kind="call", body="Lender confirmed the rate lock.")
    note(api, deal_id=deal.pk, kind="meeting", body="Kickoff with the sponsor.")

    entries = timeline(api, deal.pk)
    kinds = [e["kind"] for e in entries]
    assert kinds == [
        "stage_changed",  # → Underwriting, by hand
        "search_started", "stage_changed",  # → In market, automatic
        "search_finished",
        "placement_sent", "placement_sent",
        "placement_status",  # sent → reviewing
        "quote_received", "quote_received", "quote_removed",
        "winner_chosen", "placement_status",  # the other placement lost
        "stage_changed",  # → Closing, automatic
        "note", "note",
    ], "\n".join(f"{e['kind']} {e['actor']} {e['text']}" for e in entries)
    assert set(kinds) <= set(TIMELINE_KINDS)
    assert [e["at"] for e in entries] == sorted(e["at"] for e in entries)
    by_kind = {}
    for entry in entries:
        by_kind.setdefault(entry["kind"], []).append(entry)
    # Who: the key's user for what it did; Lev for what Lev did by itself.
    assert by_kind["stage_changed"][0]["actor"] == "alice" and by_kind["stage_changed"][0]["actor_id"] == user.pk
    assert by_kind["stage_changed"][0]["text"] == "Moved from Intake to Underwriting: T-12 in"
    assert by_kind["stage_changed"][1]["actor"] == "Lev" and by_kind["stage_changed"][1]["actor_id"] is None
    assert by_kind["search_finished"][0]["actor"] == "Lev"
    assert [e["actor"] for e in by_kind["placement_sent"]] == ["alice", "alice"]
    reviewing, lost = by_kind["placement_status"]
    assert reviewing["actor"] == "alice" and "sent → reviewing" in reviewing["text"]
    assert lost["actor"] == "Lev" and "quoted" not in lost["text"] and "lost" in lost["text"]
    assert lost["refs"] == {"placement_id": second["id"], "lender_id": second["lender_id"]}
    assert by_kind["quote_removed"][0]["actor"] == "alice"
    assert by_kind["quote_removed"][0]["refs"]["term_sheet_id"] == removed.json()["id"]
    winner = by_kind["winner_chosen"][0]
    assert (winner["actor"], winner["refs"]["term_sheet_id"], winner["refs"]["placement_id"]) == (
        "alice", sheet_id, first["id"])
    assert "$10,000,000 at 6%" in by_kind["quote_received"][0]["text"]
    assert by_kind["search_started"][0]["refs"] == {"search_id": search_id}
    call, meeting = by_kind["note"]
    assert call["text"].startswith("Call (") and call["text"].endswith("Lender confirmed the rate lock.")
    assert call["refs"]["placement_id"] == first["id"] and meeting["actor"] == "alice"
    # The history library recorded the key's user for each change it made.
    assert {r.history_user_id for r in Placement.history.filter(deal_id=deal.pk)} == {user.pk}
    assert {r.history_user_id for r in TermSheet.history.filter(deal_id=deal.pk)} == {user.pk}


def test_records_written_before_their_history_read_from_their_timestamps(api, account):
    deal = deal_with_financials(account)
    declined = place(deal, lenders(1)[0], status="declined")
    quoted = place(deal, lenders(1)[0])
    sheet = placement_services.term_sheet_add(placement=quoted, data=dict(FIXED))
    # As rows written before the history was kept: none for the declined one, no creation for the others.
    Placement.history.filter(id=declined.pk).delete()
    Placement.history.filter(history_type="+").delete()
    TermSheet.history.all().delete()
    assert api.post(f"/api/v1/term-sheets/{sheet.pk}/select-winner/", {}, format="json").status_code == 200
    entries = timeline(api, deal.pk)
    said = [(e["kind"], e["refs"].get("placement_id"), e["actor"]) for e in entries]
    assert ("placement_sent", declined.pk, "Lev") in said and ("placement_status", declined.pk, "Lev") in said
    assert ("placement_sent", quoted.pk, "Lev") in said
    assert ("quote_received", quoted.pk, "Lev") in said and ("winner_chosen", quoted.pk, "alice") in said
