"""The pipeline through REST: each account's stages with their deals counted and totalled, an account
admin's changes to them (anyone else FORBIDDEN), moving a deal with its history, the automatic moves of
a real search start and a real winner choice (forward only, found by role), tenancy and scopes."""

from __future__ import annotations

from decimal import Decimal

import pytest

from deals.models import Deal, Stage, StageChange
from lev.accounts.models import Membership
from lev.accounts.services import api_key_create
from lev.enums import DEFAULT_STAGES
from lev.limits import STAGES_PER_ACCOUNT_MAX
from tests.conftest import client_with_key
from tests.deals.placements.helpers import place, quote
from tests.deals.searches.factories import lender_with, make_deal
from tests.factories import AccountFactory, DealFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

STAGES = "/api/v1/pipeline/stages/"


def stage(account, key: str) -> Stage:
    return Stage.objects.get(account=account, key=key)


def move(api, deal_id: int, **body):
    return api.post(f"/api/v1/deals/{deal_id}/stage/", body, format="json")


def history(api, deal_id: int) -> list[dict]:
    return api.get(f"/api/v1/deals/{deal_id}/stage-changes/").json()["results"]


@pytest.fixture
def admin_api(account):
    """A client of an account admin (the owner role) of `account`."""
    owner = MembershipFactory(account=account, user=UserFactory(username="olga"), role=Membership.Role.OWNER)
    _key, raw = api_key_create(user=owner.user, account=account, name="owner")
    return client_with_key(raw)


# --- the stages ---------------------------------------------------------------------------------------
def test_a_new_account_has_the_default_stages_in_order_with_counts_and_loan_totals(api, account):
    assert [(s.key, s.name, s.kind, s.position) for s in Stage.objects.filter(account=account)] == [
        (key, name, kind, n) for n, (key, name, kind) in enumerate(DEFAULT_STAGES, start=1)]
    DealFactory(account=account, loan_amount=Decimal("10000000"))
    DealFactory(account=account, loan_amount=Decimal("2500000.50"))
    DealFactory(account=account, loan_amount=None)
    DealFactory(account=account, loan_amount=Decimal("9"), stage=stage(account, "closing"))
    DealFactory(account=account, loan_amount=Decimal("7"), stage=stage(account, "closing"), archived=True)
    DealFactory(loan_amount=Decimal("5000000"))  # another account's deal counts nowhere here

    body = api.get(STAGES).json()
    by_key = {s["key"]: s for s in body["results"]}
    assert [s["key"] for s in body["results"]] == [key for key, _, _ in DEFAULT_STAGES]
    assert (by_key["intake"]["deal_count"], by_key["intake"]["loan_total"]) == (3, 12500000.5)
    assert (by_key["closing"]["deal_count"], by_key["closing"]["loan_total"]) == (1, 9)
    assert (by_key["dead"]["deal_count"], by_key["dead"]["loan_total"]) == (0, 0)
    assert (body["deal_count"], body["loan_total"]) == (4, 12500009.5)
    assert set(by_key["intake"]) == {"id", "key", "name", "kind", "position", "deal_count", "loan_total"}


def test_an_account_admin_adds_renames_and_reorders_stages(admin_api, api, account):
    created = admin_api.post(STAGES, {"name": "Credit committee", "position": 3}, format="json",
                             HTTP_IDEMPOTENCY_KEY="stage-1")
    assert created.status_code == 201
    assert created.json()["key"] == "" and created.json()["position"] == 3 and created.json()["kind"] == "open"
    again = admin_api.post(STAGES, {"name": "Credit committee", "position": 3}, format="json",
                           HTTP_IDEMPOTENCY_KEY="stage-1")
    assert again.json() == created.json() and Stage.objects.filter(account=account).count() == 8
    names = [s["name"] for s in api.get(STAGES).json()["results"]]
    assert names[:4] == ["Intake", "Underwriting", "Credit committee", "In market"]

    in_market = stage(account, "in_market")
    renamed = admin_api.patch(f"{STAGES}{in_market.pk}/", {"name": "Out to lenders"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["key"] == "in_market"
    assert renamed.json()["name"] == "Out to lenders"

    ids = [s["id"] for s in api.get(STAGES).json()["results"]]
    reordered = admin_api.put(f"{STAGES}order/", {"stage_ids": [ids[1], ids[0], *ids[2:]]}, format="json")
    assert reordered.status_code == 200
    assert [s["name"] for s in reordered.json()["results"]][:2] == ["Underwriting", "Intake"]
    assert [s["position"] for s in reordered.json()["results"]] == list(range(1, 9))


def test_a_name_with_letters_beyond_ascii_twice_is_a_conflict_not_a_500(admin_api, account):
    """The name check lowers in the database, as the unique index does (SQLite's LOWER folds ASCII only):
    a second "Refi Ēast" is the same 409 as a second "Refi East", never an IntegrityError."""
    first = admin_api.post(STAGES, {"name": "Refi Ēast"}, format="json")
    assert first.status_code == 201, first.content
    again = admin_api.post(STAGES, {"name": "Refi Ēast"}, format="json")
    assert again.status_code == 409 and again.json()["code"] == "CONFLICT", again.content
    assert again.json()["details"]["stage_id"] == first.json()["id"]
    renamed = admin_api.patch(f"{STAGES}{stage(account, 'intake').pk}/", {"name": "refi Ēast"}, format="json")
    assert renamed.status_code == 409 and renamed.json()["code"] == "CONFLICT", renamed.content


def test_stage_changes_are_refused_in_the_contract(admin_api, account):
    taken = admin_api.post(STAGES, {"name": "  in MARKET "}, format="json")
    assert taken.status_code == 409 and taken.json()["code"] == "CONFLICT"
    assert taken.json()["details"]["stage_id"] == stage(account, "in_market").pk
    intake = stage(account, "intake")
    clash = admin_api.patch(f"{STAGES}{intake.pk}/", {"name": "Closing"}, format="json")
    assert clash.status_code == 409 and clash.json()["code"] == "CONFLICT"
    for body in ({"stage_ids": [intake.pk]}, {"stage_ids": [intake.pk] * 7}, {"stage_ids": []}):
        refused = admin_api.put(f"{STAGES}order/", body, format="json")
        assert refused.status_code == 400 and refused.json()["code"] == "VALIDATION_ERROR", body
        assert "stage_ids" in refused.json()["details"]["fields"]
    blank = admin_api.post(STAGES, {"name": " ", "kind": "maybe"}, format="json")
    assert set(blank.json()["details"]["fields"]) == {"name", "kind"}
    assert admin_api.post(STAGES, {"name": "X", "extra": 1}, format="json").json()["details"]["fields"] == {
        "extra": ["is not a known field"]}
    for n in range(STAGES_PER_ACCOUNT_MAX - 7):
        assert admin_api.post(STAGES, {"name": f"Extra {n}"}, format="json").status_code == 201
    full = admin_api.post(STAGES, {"name": "One too many"}, format="json")
    assert full.status_code == 409 and full.json()["code"] == "BUSINESS_RULE"
    assert full.json()["details"]["limit"] == STAGES_PER_ACCOUNT_MAX
    assert Stage.objects.get(account=account, key="in_market").name == "In market"


def test_only_an_account_admin_changes_stages_anyone_else_is_forbidden(api, account):
    intake = stage(account, "intake")
    for response in (api.post(STAGES, {"name": "Mine"}, format="json"),
                     api.patch(f"{STAGES}{intake.pk}/", {"name": "Mine"}, format="json"),
                     api.put(f"{STAGES}order/", {"stage_ids": [intake.pk]}, format="json")):
        assert response.status_code == 403 and response.json()["code"] == "FORBIDDEN"
        assert "account admin" in response.json()["message"]
    assert not Stage.objects.filter(name="Mine").exists() and stage(account, "intake").name == "Intake"


def test_another_accounts_stage_and_deal_are_missing_exactly_like_missing_ones(api, admin_api, account,
                                                                               other_account):
    foreign = stage(other_account, "closing")
    foreign_deal = DealFactory(account=other_account)
    missing_stage = api.get(f"{STAGES}987654321/").json()
    assert api.get(f"{STAGES}{foreign.pk}/").json() == {
        **missing_stage, "message": f"Stage not found: {foreign.pk}", "details": {"resource": "stage",
                                                                                   "id": str(foreign.pk)}}
    assert api.get(f"{STAGES}{foreign.pk}/").status_code == 404
    renamed = admin_api.patch(f"{STAGES}{foreign.pk}/", {"name": "Mine"}, format="json")
    assert renamed.status_code == 404 and renamed.json()["code"] == "NOT_FOUND"
    deal = DealFactory(account=account)
    moved = move(api, deal.pk, stage=str(foreign.pk))
    assert moved.status_code == 404 and moved.json()["message"] == f"Stage not found: {foreign.pk}"
    assert move(api, foreign_deal.pk, stage="closing").status_code == 404
    assert api.get(f"/api/v1/deals/{foreign_deal.pk}/stage-changes/").status_code == 404
    reorder = admin_api.put(f"{STAGES}order/", {"stage_ids": [s.pk for s in Stage.objects.filter(
        account=other_account)]}, format="json")
    assert reorder.status_code == 400
    assert refresh(foreign_deal).stage.key == "intake" and stage(other_account, "closing").name == "Closing"


def refresh(deal: Deal) -> Deal:
    return Deal.objects.select_related("stage").get(pk=deal.pk)


# --- a deal's stage and owner -------------------------------------------------------------------------
def test_a_new_deal_starts_in_the_first_stage_owned_by_its_creator_and_says_so(api, user, account):
    created = api.post("/api/v1/deals/", {"title": "Pine Court"}, format="json").json()
    assert created["stage"] == {"id": stage(account, "intake").pk, "key": "intake", "name": "Intake",
                                "kind": "open"}
    assert created["owner"] == {"id": user.pk, "username": "alice"}
    [start] = history(api, created["id"])
    assert start["from_stage"] is None and start["to_stage"]["name"] == "Intake"
    assert start["automatic"] and start["by"] == {"id": user.pk, "username": "alice"}
    listed = api.get("/api/v1/deals/").json()["results"][0]
    assert listed["stage"]["key"] == "intake" and listed["owner"]["username"] == "alice"


def test_a_deal_moves_by_key_name_or_id_any_direction_and_every_move_is_recorded(api, user, account):
    deal = DealFactory(account=account)
    first = move(api, deal.pk, stage="underwriting", reason="Sponsor sent the rent roll")
    assert first.status_code == 200
    assert first.json()["changed"] and first.json()["stage"]["key"] == "underwriting"
    assert first.json()["change"]["from_stage"]["name"] == "Intake"
    assert move(api, deal.pk, stage="TERM SHEETS").json()["stage"]["key"] == "term_sheets"
    back = move(api, deal.pk, stage=str(stage(account, "underwriting").pk))
    assert back.json()["stage"]["key"] == "underwriting"
    same = move(api, deal.pk, stage="Underwriting")
    assert same.status_code == 200 and same.json() == {**same.json(), "changed": False, "change": None}

    records = history(api, deal.pk)
    assert [(r["from_stage"]["name"], r["to_stage"]["name"]) for r in records] == [
        ("Intake", "Underwriting"), ("Underwriting", "Term sheets"), ("Term sheets", "Underwriting")]
    assert records[0]["reason"] == "Sponsor sent the rent roll" and not records[0]["automatic"]
    assert records[0]["by"]["id"] == user.pk
    assert refresh(deal).stage.key == "underwriting"


def test_a_move_is_refused_in_the_contract(api, account):
    deal = DealFactory(account=account)
    unknown = move(api, deal.pk, stage="Signed")
    assert unknown.status_code == 404 and unknown.json()["code"] == "NOT_FOUND"
    assert unknown.json()["message"].startswith("Stage not found: 'Signed' (the stages: Intake, Underwriting")
    for body in ({}, {"stage": " "}, {"stage": "closing", "when": "now"}):
        refused = move(api, deal.pk, **body)
        assert refused.status_code == 400 and refused.json()["code"] == "VALIDATION_ERROR", body
    archived = DealFactory(account=account, archived=True)
    frozen = move(api, archived.pk, stage="dead")
    assert frozen.status_code == 409 and frozen.json()["code"] == "BUSINESS_RULE"
    assert frozen.json()["message"] == f"Not allowed: deal {archived.pk} is archived and cannot be moved"
    assert not StageChange.objects.filter(deal__in=[deal, archived]).exists()


def test_the_deal_list_filters_by_stage_id_key_or_name(api, account):
    intake, closing = DealFactory(account=account), DealFactory(account=account, stage=stage(account, "closing"))
    for value in ("closing", "Closing", str(stage(account, "closing").pk)):
        assert [d["id"] for d in api.get("/api/v1/deals/", {"stage": value}).json()["results"]] == [closing.pk]
    assert [d["id"] for d in api.get("/api/v1/deals/", {"stage": "intake"}).json()["results"]] == [intake.pk]
    assert api.get("/api/v1/deals/", {"stage": str(stage(AccountFactory(), "closing").pk)}).json()["results"] == []


def test_the_owner_is_a_member_of_the_account(api, account, other_account):
    colleague = MembershipFactory(account=account, user=UserFactory(username="bob")).user
    outsider = MembershipFactory(account=other_account, user=UserFactory(username="eve")).user
    deal = DealFactory(account=account)
    version = deal.version
    changed = api.patch(f"/api/v1/deals/{deal.pk}/", {"owner_id": colleague.pk}, format="json")
    assert changed.status_code == 200 and changed.json()["owner"] == {"id": colleague.pk, "username": "bob"}
    assert Deal.objects.get(pk=deal.pk).version == version  # who runs it is not what a search ranks
    refused = api.patch(f"/api/v1/deals/{deal.pk}/", {"owner_id": outsider.pk}, format="json")
    # Another account's user and no user at all are the same 404 (a well-formed id naming nothing here).
    nobody = api.patch(f"/api/v1/deals/{deal.pk}/", {"owner_id": 10**9}, format="json")
    assert refused.status_code == nobody.status_code == 404
    assert refused.json()["code"] == nobody.json()["code"] == "NOT_FOUND"
    assert refused.json()["message"] == f"Member not found: {outsider.pk}"
    assert Deal.objects.get(pk=deal.pk).owner_id == colleague.pk
    created = api.post("/api/v1/deals/", {"title": "Theirs", "owner_id": colleague.pk}, format="json").json()
    assert created["owner"]["id"] == colleague.pk


# --- scopes and roles -----------------------------------------------------------------------------------
def test_a_read_only_key_reads_the_pipeline_and_cannot_move_a_deal(user, account):
    _key, raw = api_key_create(user=user, account=account, name="ro", scopes={"deals:read"})
    reader, deal = client_with_key(raw), DealFactory(account=account)
    assert reader.get(STAGES).status_code == 200
    assert reader.get(f"/api/v1/deals/{deal.pk}/stage-changes/").status_code == 200
    refused = move(reader, deal.pk, stage="closing")
    assert refused.status_code == 403 and refused.json()["details"] == {"required_scope": "deals:write"}


def test_a_viewer_cannot_move_a_deal(account):
    viewer = MembershipFactory(account=account, user=UserFactory(username="vic"), role=Membership.Role.VIEWER)
    _key, raw = api_key_create(user=viewer.user, account=account, name="v")
    deal = DealFactory(account=account)
    assert move(client_with_key(raw), deal.pk, stage="closing").status_code == 403
    assert refresh(deal).stage.key == "intake"


# --- automatic moves ----------------------------------------------------------------------------------
def searchable(account) -> Deal:
    lender_with("Lone Star Bank")
    return make_deal(account)


def test_a_search_start_moves_the_deal_into_market_by_itself_and_says_why(api, user, account):
    deal = searchable(account)
    move(api, deal.pk, stage="underwriting")
    started = api.post(f"/api/v1/deals/{deal.pk}/lender-searches/", {}, format="json")
    assert started.status_code in (201, 202), started.json()
    search_id = started.json()["search_id"] if "search_id" in started.json() else started.json()["id"]
    assert refresh(deal).stage.key == "in_market"
    last = history(api, deal.pk)[-1]
    assert last["automatic"] and (last["from_stage"]["name"], last["to_stage"]["name"]) == ("Underwriting",
                                                                                             "In market")
    assert last["reason"] == f"Lender search {search_id} started." and last["by"]["id"] == user.pk


def test_the_automatic_moves_find_a_renamed_stage_by_its_role(api, admin_api, account):
    deal = searchable(account)
    admin_api.patch(f"{STAGES}{stage(account, 'in_market').pk}/", {"name": "Out to lenders"}, format="json")
    api.post(f"/api/v1/deals/{deal.pk}/lender-searches/", {}, format="json")
    assert refresh(deal).stage.name == "Out to lenders"


@pytest.mark.parametrize("where", ["term_sheets", "closing", "closed", "dead"])
def test_an_automatic_move_never_takes_a_deal_back_or_out_of_a_final_stage(api, account, where):
    deal = searchable(account)
    move(api, deal.pk, stage=where)
    before = StageChange.objects.filter(deal=deal).count()
    assert api.post(f"/api/v1/deals/{deal.pk}/lender-searches/", {}, format="json").status_code in (201, 202)
    assert refresh(deal).stage.key == where and StageChange.objects.filter(deal=deal).count() == before


def test_choosing_a_winner_moves_the_deal_to_closing_in_the_same_transaction(api, user, account):
    deal = searchable(account)
    placement = place(deal, lender_with("Gulf Coast Capital").lender)
    term_sheet = quote(placement)
    move(api, deal.pk, stage="term_sheets")
    chosen = api.post(f"/api/v1/term-sheets/{term_sheet.pk}/select-winner/", format="json")
    assert chosen.status_code == 200, chosen.json()
    assert refresh(deal).stage.key == "closing"
    last = history(api, deal.pk)[-1]
    assert last["automatic"] and last["to_stage"]["name"] == "Closing" and last["by"]["id"] == user.pk
    assert last["reason"] == f"Term sheet {term_sheet.pk} from Gulf Coast Capital chosen as the winning quote."
    # Choosing it again changes nothing, and records nothing.
    count = StageChange.objects.filter(deal=deal).count()
    api.post(f"/api/v1/term-sheets/{term_sheet.pk}/select-winner/", format="json")
    assert StageChange.objects.filter(deal=deal).count() == count


def test_a_custom_stage_takes_part_in_the_order_of_the_automatic_moves(api, admin_api, account):
    """A stage added after "in market" is further on: a search start leaves a deal there."""
    deal = searchable(account)
    custom = admin_api.post(STAGES, {"name": "Lender calls", "position": 4}, format="json").json()
    move(api, deal.pk, stage=str(custom["id"]))
    api.post(f"/api/v1/deals/{deal.pk}/lender-searches/", {}, format="json")
    assert refresh(deal).stage.pk == custom["id"]
