"""A placement's final statuses stay final. `won` and `archived` refuse every status change; `lost`
refuses every one but filing it away (`archived`, docs/placements.md). A refusal is a BUSINESS_RULE
error that names what is allowed, and nothing in the database changes — asked through REST and
through the service itself (which also takes the statuses only the workflow sets: quoted, won)."""

from __future__ import annotations

import pytest

from deals.models import Placement, TermSheet
from deals.placements import services as placement_services
from deals.placements.workflow import UPDATE_STATUSES as PLACEMENT_UPDATE_STATUSES
from lev.errors import BusinessRuleViolation
from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote
from tests.deals.test_api import assert_error

pytestmark = pytest.mark.django_db

# Written out, not read from the code under test: what docs/placements.md promises.
FINAL_NEXT = {"won": (), "lost": ("archived",), "archived": ()}
ALL_STATUSES = [status.value for status in Placement.Status]


def final_placement(account, status: str) -> Placement:
    """A placement brought to `status` by the workflow: won by choosing its quote, lost when
    another lender's quote wins, archived from sent."""
    deal = deal_with_financials(account)
    winner_lender, other_lender = lenders(2)
    winner = place(deal, winner_lender)
    other = place(deal, other_lender)
    if status == "archived":
        placement_services.placement_update(placement=other, data={"status": "archived"})
    else:
        placement_services.term_sheet_select_winner(term_sheet=quote(winner))
    placement = winner if status == "won" else other
    placement.refresh_from_db()
    assert placement.status == status
    return placement


def snapshot(placement: Placement) -> tuple[list[dict], list[dict]]:
    """Every placement and term sheet of the deal, as stored."""
    deal_id = placement.deal_id
    return (list(Placement.objects.filter(deal_id=deal_id).order_by("pk").values()),
            list(TermSheet.objects.filter(deal_id=deal_id).order_by("pk").values()))


def refused(status: str, targets) -> list[tuple[str, str]]:
    return [(status, target) for target in targets if target != status and target not in FINAL_NEXT[status]]


SERVICE_CASES = [case for status in FINAL_NEXT for case in refused(status, ALL_STATUSES)]
REST_CASES = [case for status in FINAL_NEXT for case in refused(status, PLACEMENT_UPDATE_STATUSES)]


@pytest.mark.parametrize(("status", "target"), SERVICE_CASES)
def test_the_service_refuses_every_move_out_of_a_final_status(account, status, target):
    placement = final_placement(account, status)
    before = snapshot(placement)
    with pytest.raises(BusinessRuleViolation) as refusal:
        placement_services.placement_update(placement=Placement.objects.get(pk=placement.pk),
                                            data={"status": target})
    assert refusal.value.code == "BUSINESS_RULE"
    assert str(refusal.value).startswith(f"Not allowed: placement {placement.pk} cannot go from {status} to {target}")
    assert snapshot(placement) == before


@pytest.mark.parametrize(("status", "target"), REST_CASES)
def test_patch_refuses_every_move_out_of_a_final_status(api, account, status, target):
    placement = final_placement(account, status)
    before = snapshot(placement)
    response = api.patch(f"/api/v1/placements/{placement.pk}/", {"status": target}, format="json")
    body = assert_error(response, 409, "BUSINESS_RULE",
                        f"Not allowed: placement {placement.pk} cannot go from {status} to {target}")
    assert body["details"]["allowed_next_statuses"] == list(FINAL_NEXT[status])
    assert body["details"]["status"] == status and body["details"]["requested_status"] == target
    assert snapshot(placement) == before


@pytest.mark.parametrize("status", list(FINAL_NEXT))
def test_asking_for_the_status_a_final_placement_has_changes_nothing(api, account, status):
    placement = final_placement(account, status)
    before = snapshot(placement)
    placement_services.placement_update(placement=Placement.objects.get(pk=placement.pk), data={"status": status})
    assert snapshot(placement) == before
    if status in PLACEMENT_UPDATE_STATUSES:  # PATCH does not take `won`, which only the workflow sets
        response = api.patch(f"/api/v1/placements/{placement.pk}/", {"status": status}, format="json")
        assert response.status_code == 200 and response.json()["status"] == status
        assert response.json()["allowed_next_statuses"] == list(FINAL_NEXT[status])
        assert snapshot(placement) == before


def test_a_lost_placement_may_only_be_filed_away_and_is_final_then(api, account):
    placement = final_placement(account, "lost")
    filed = api.patch(f"/api/v1/placements/{placement.pk}/", {"status": "archived"}, format="json")
    assert filed.status_code == 200 and filed.json()["status"] == "archived"
    assert filed.json()["allowed_next_statuses"] == []
    back = api.patch(f"/api/v1/placements/{placement.pk}/", {"status": "lost"}, format="json")
    assert_error(back, 409, "BUSINESS_RULE", f"Not allowed: placement {placement.pk} cannot go from archived to lost")
    assert Placement.objects.get(pk=placement.pk).status == "archived"
