"""A team's own lenders and programs through REST (issue 38): added by the team (members above viewer),
read beside the directory by its account alone, ranked in its searches and never in another's, placed and
quoted like the directory's; another account cannot read, place or change them (404 as for a missing
one); the directory stays the superusers' (403 to change through the API)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from deals.searches import services as search_services
from deals.searches.models import LenderMatch
from lenders.models import Lender, LenderProgram
from lev.accounts.models import Membership
from lev.accounts.services import api_key_create
from tests.conftest import client_with_key
from tests.deals.searches.factories import make_deal
from tests.factories import LenderFactory, LenderProgramFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

PROGRAM = {"title": "Hill Country Bridge", "loan_types": ["permanent"], "asset_types": ["multifamily"],
           "min_loan_amount": 2_000_000, "max_loan_amount": 30_000_000, "sponsor_states": ["TX"],
           "max_ltv": 75, "min_dscr": 1.2, "rate_type": "floating", "rate_index": "sofr",
           "spread_min_bps": 250, "spread_max_bps": 325, "term_months_min": 36, "term_months_max": 60}


def own_lender(api, name: str = "Hill Country Bank", **fields) -> dict:
    response = api.post("/api/v1/lenders/", {"name": name, "state": "Texas", "lender_types": ["bank"], **fields},
                        format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def own_program(api, lender_id: int, **fields) -> dict:
    response = api.post(f"/api/v1/lenders/{lender_id}/programs/", {**PROGRAM, **fields}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def listed(client, **query) -> dict[int, dict]:
    return {row["id"]: row for row in client.get("/api/v1/lenders/", query).json()["results"]}


def test_a_team_adds_a_lender_and_programs_read_beside_the_directory_by_its_account_alone(api, other_api):
    directory = LenderProgramFactory(lender=LenderFactory(name="Big Directory Bank")).lender
    lender = own_lender(api, website="https://hillcountry.example", about="Our best relationship.")
    assert (lender["own"], lender["state"], lender["programs"]) == (True, "TX", [])
    program = own_program(api, lender["id"])
    assert program["own"] is True and program["positions"] == ["senior"]  # senior when left out
    assert (program["max_ltv"], program["spread_min_bps"], program["rate_index"]) == (75.0, 250, "sofr")
    on_directory = own_program(api, directory.pk, title="Our terms with Big Directory", max_ltv=80)

    mine = listed(api)
    assert mine[lender["id"]]["own"] is True and mine[lender["id"]]["program_count"] == 1
    assert mine[directory.pk]["own"] is False and mine[directory.pk]["program_count"] == 2
    detail = api.get(f"/api/v1/lenders/{directory.pk}/").json()
    assert [(p["title"], p["own"]) for p in detail["programs"]][1:] == [("Our terms with Big Directory", True)]

    # The other account: the directory as it is, none of ours.
    theirs = listed(other_api)
    assert lender["id"] not in theirs and theirs[directory.pk]["program_count"] == 1
    assert listed(other_api, query="Hill Country") == {}
    for path in (f"/api/v1/lenders/{lender['id']}/", f"/api/v1/lenders/{lender['id']}/programs/",
                 f"/api/v1/lenders/{lender['id']}/programs/{program['id']}/"):
        missing = other_api.get(path)
        assert missing.status_code == 404 and missing.json()["message"] == f"Lender not found: {lender['id']}"
    assert [p["own"] for p in other_api.get(f"/api/v1/lenders/{directory.pk}/").json()["programs"]] == [False]
    hidden = other_api.get(f"/api/v1/lenders/{directory.pk}/programs/{on_directory['id']}/")
    assert hidden.status_code == 404 and hidden.json()["message"] == f"Lender program not found: {on_directory['id']}"
    # ... nor change them, nor add to them.
    assert other_api.patch(f"/api/v1/lenders/{lender['id']}/", {"name": "Taken"}, format="json").status_code == 404
    assert other_api.patch(f"/api/v1/lenders/{directory.pk}/programs/{on_directory['id']}/", {"max_ltv": 90},
                           format="json").status_code == 404
    assert other_api.post(f"/api/v1/lenders/{lender['id']}/programs/", PROGRAM, format="json").status_code == 404
    assert Lender.objects.get(pk=lender["id"]).name == "Hill Country Bank"
    assert LenderProgram.objects.get(pk=on_directory["id"]).max_ltv == Decimal("80.00")

    # The team changes its own.
    changed = api.patch(f"/api/v1/lenders/{lender['id']}/", {"city": "Austin"}, format="json")
    assert changed.status_code == 200 and changed.json()["city"] == "Austin"
    changed = api.patch(f"/api/v1/lenders/{lender['id']}/programs/{program['id']}/", {"status": "inactive"},
                        format="json")
    assert changed.status_code == 200 and changed.json()["status"] == "inactive"
    assert listed(api)[lender["id"]]["program_count"] == 0


def test_the_directory_is_not_changed_through_the_api_and_viewers_and_read_keys_write_nothing(api, account):
    program = LenderProgramFactory(lender=LenderFactory(name="Directory Bank"))
    refused = api.patch(f"/api/v1/lenders/{program.lender_id}/", {"name": "Mine now"}, format="json")
    assert refused.status_code == 403 and refused.json()["code"] == "FORBIDDEN"
    assert "directory" in refused.json()["message"]
    refused = api.patch(f"/api/v1/lenders/{program.lender_id}/programs/{program.pk}/", {"max_ltv": 90},
                        format="json")
    assert refused.status_code == 403 and refused.json()["code"] == "FORBIDDEN"
    program.refresh_from_db()
    assert (program.lender.name, program.max_ltv, program.account_id) == ("Directory Bank", Decimal("75.00"), None)

    viewer = MembershipFactory(account=account, user=UserFactory(username="vic"), role=Membership.Role.VIEWER).user
    viewer_api = client_with_key(api_key_create(user=viewer, account=account, name="viewer")[1])
    refused = viewer_api.post("/api/v1/lenders/", {"name": "Viewer Bank"}, format="json")
    assert refused.status_code == 403 and "viewers" in refused.json()["message"]
    reader = MembershipFactory(account=account, user=UserFactory(username="rita")).user
    read_only = client_with_key(api_key_create(user=reader, account=account, name="read",
                                               scopes=frozenset({"lenders:read"}))[1])
    assert read_only.post("/api/v1/lenders/", {"name": "Reader Bank"}, format="json").status_code == 403
    assert read_only.post(f"/api/v1/lenders/{program.lender_id}/programs/", PROGRAM,
                          format="json").status_code == 403
    assert read_only.get("/api/v1/lenders/").status_code == 200
    assert not Lender.objects.filter(account__isnull=False).exists()
    assert LenderProgram.objects.count() == 1


def test_names_and_terms_are_refused_in_the_words_of_every_door(api):
    LenderFactory(name="Big Directory Bank")
    lender = own_lender(api)

    def refused(path: str, body: dict) -> dict[str, list[str]]:
        response = api.post(path, body, format="json")
        assert response.status_code == 400, response.json()
        return response.json()["details"]["fields"]

    # A name the directory or the account holds: a conflict with that lender, named.
    directory_id = Lender.objects.get(name="Big Directory Bank").pk
    for name, holder, why in (
            ("big directory bank", directory_id, f"the directory has a lender of this name (id {directory_id}): "
                                                 "add your programs to it instead"),
            ("HILL COUNTRY BANK", lender["id"], f"your account has a lender of this name already (id {lender['id']})")):
        conflict = api.post("/api/v1/lenders/", {"name": name}, format="json")
        assert conflict.status_code == 409 and conflict.json()["message"] == f"Conflict: {why}"
        assert conflict.json()["details"] == {"lender_id": holder}
    programs = f"/api/v1/lenders/{lender['id']}/programs/"
    assert refused(programs, {**PROGRAM, "max_ltv": 0.75}) == {"max_ltv": [
        "must be a percent, not a fraction: 0, or 1 to 100; did you mean 75?"]}
    assert refused(programs, {**PROGRAM, "max_ltv": 250}) == {"max_ltv": ["must be at most 100"]}
    assert refused(programs, {**PROGRAM, "min_dscr": 0}) == {"min_dscr": ["Must be greater than 0."]}
    assert refused(programs, {**PROGRAM, "spread_min_bps": 2.85}) == {"spread_min_bps": [
        "Must be a whole number of basis points (a percent times 100); did you mean 285 (2.85 % over the index)?"]}
    assert refused(programs, {**PROGRAM, "rate_index": None}) == {"rate_index": [
        "This is required with a spread: the index the spread is over."]}
    assert refused(programs, {**PROGRAM, "min_loan_amount": 40_000_000}) == {"max_loan_amount": [
        "Must be at least the min loan amount."]}
    assert list(refused(programs, {**PROGRAM, "loan_types": []})) == ["loan_types"]
    assert refused(programs, {**PROGRAM, "loan_types": None}) == {"loan_types": [
        "An active program offers at least one loan type."]}
    assert list(refused(programs, {**PROGRAM, "loan_types": ["tbd"]})) == ["loan_types.0"]
    assert refused(programs, {**PROGRAM, "colour": "red"}) == {"colour": ["is not a known field"]}
    patched = api.patch(f"{programs}{own_program(api, lender['id'])['id']}/", {"spread_max_bps": 100},
                        format="json")
    assert patched.status_code == 400 and patched.json()["details"]["fields"] == {"spread_max_bps": [
        "Must be at least the min spread."]}
    assert LenderProgram.objects.filter(lender_id=lender["id"]).count() == 1


def _search(deal, capture) -> list[LenderMatch]:
    with capture(execute=True):
        search, _ = search_services.lender_search_start(deal=deal)
    return list(LenderMatch.objects.filter(search=search).order_by("rank"))


def test_own_lenders_rank_in_their_accounts_searches_and_never_in_anothers(
        api, account, other_account, django_capture_on_commit_callbacks):
    LenderProgramFactory(lender=LenderFactory(name="Directory Fit"))
    office_only = LenderProgramFactory(lender=LenderFactory(name="Office Directory"), asset_types=["office"]).lender
    ours = own_lender(api)
    own_program(api, ours["id"])
    own_program(api, office_only.pk, title="Our multifamily line with them", rate_type="fixed", rate_index=None,
                spread_min_bps=None, spread_max_bps=None, fixed_rate_min=6.1, fixed_rate_max=6.6)

    mine = _search(make_deal(account), django_capture_on_commit_callbacks)
    assert {m.lender_id for m in mine} == {ours["id"], office_only.pk, Lender.objects.get(name="Directory Fit").pk}
    shown = api.get(f"/api/v1/lender-searches/{mine[0].search_id}/").json()["results"]
    assert {m["lender_id"]: m["lender_own"] for m in shown} == {
        ours["id"]: True, office_only.pk: False, Lender.objects.get(name="Directory Fit").pk: False}

    theirs = _search(make_deal(other_account), django_capture_on_commit_callbacks)
    assert [m.lender.name for m in theirs] == ["Directory Fit"]
    assert [p["title"] for p in theirs[0].programs] == [Lender.objects.get(name="Directory Fit").programs.get().title]


def test_another_account_cannot_place_quote_or_keep_contacts_at_an_own_lender(
        api, other_api, account, other_account):
    ours = own_lender(api)
    program = own_program(api, ours["id"])
    directory = LenderProgramFactory(lender=LenderFactory(name="Directory Bank")).lender
    on_directory = own_program(api, directory.pk, title="Ours at the directory bank")

    their_deal = make_deal(other_account)
    body = other_api.post(f"/api/v1/deals/{their_deal.pk}/placements/", {"lender_ids": [ours["id"]]},
                          format="json").json()
    assert body["created"] == 0 and body["failed"] == [
        {"lender_id": ours["id"], "code": "NOT_FOUND", "message": f"Lender not found: {ours['id']}"}]
    placed = other_api.post(f"/api/v1/deals/{their_deal.pk}/placements/", {"lender_ids": [directory.pk]},
                            format="json").json()["placements"][0]
    refused = other_api.patch(f"/api/v1/placements/{placed['id']}/", {"program_id": on_directory["id"]},
                              format="json")
    assert refused.status_code == 404 and refused.json()["message"] == f"Lender program not found: {on_directory['id']}"
    contact = other_api.post(f"/api/v1/lenders/{ours['id']}/contacts/", {"name": "Their Banker"}, format="json")
    assert contact.status_code == 404 and other_api.get(f"/api/v1/lenders/{ours['id']}/contacts/").status_code == 404

    # The team itself places, names the program, keeps a contact and takes a quote, as with the directory's.
    our_deal = make_deal(account)
    placement = api.post(f"/api/v1/deals/{our_deal.pk}/placements/", {"lender_ids": [ours["id"]], "send": True},
                         format="json").json()["placements"][0]
    assert api.patch(f"/api/v1/placements/{placement['id']}/", {"program_id": program["id"]},
                     format="json").json()["program_id"] == program["id"]
    assert api.post(f"/api/v1/lenders/{ours['id']}/contacts/", {"name": "Our Banker"}, format="json").status_code == 201
    quoted = api.post(f"/api/v1/placements/{placement['id']}/term-sheets/", {
        "loan_amount": 9_000_000, "rate_type": "fixed", "fixed_rate": 6.2, "term_months": 60}, format="json")
    assert quoted.status_code == 201, quoted.json()
    compared = api.get(f"/api/v1/deals/{our_deal.pk}/term-sheets/comparison/").json()
    assert compared["count"] == 1 and compared["quotes"][0]["placement_id"] == placement["id"]
