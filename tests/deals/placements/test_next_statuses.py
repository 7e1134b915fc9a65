"""A tool never lists a next status it would refuse (issue 22: `update_placement` listed `quoted` in
allowed_next_statuses, then refused it). From every status, every status in allowed_next_statuses is
accepted by REST PATCH and by update_placement, and the automatic ones are listed apart."""

from __future__ import annotations

import pytest

from deals.placements import workflow
from deals.placements.models import Placement
from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote
from tests.mcp_tools.test_tool_arguments import Caller

pytestmark = pytest.mark.django_db


# A way to bring a fresh placement to each status a placement can move out of.
def placement_in(account, status: str) -> Placement:
    deal = deal_with_financials(account)
    placement = place(deal, lenders(1)[0], status="draft" if status == "draft" else "sent")
    if status == "quoted":
        quote(placement)
    elif status not in ("draft", "sent"):
        Placement.objects.filter(pk=placement.pk).update(status=status)
    placement.refresh_from_db()
    assert placement.status == status
    return placement


MOVES = [(status, target) for status in workflow.STATUSES for target in workflow.next_statuses(status)]


@pytest.mark.parametrize(("status", "target"), MOVES)
def test_every_listed_next_status_is_accepted_by_rest_and_by_update_placement(api, api_key, account, status, target):
    tools = Caller(api_key)
    for door in ("rest", "mcp"):
        placement = placement_in(account, status)
        if door == "rest":
            listed = api.get(f"/api/v1/placements/{placement.pk}/").json()
            response = api.patch(f"/api/v1/placements/{placement.pk}/", {"status": target}, format="json")
            assert response.status_code == 200, response.content
            moved = response.json()
        else:
            listed = tools.ok("get_placement", {"placement_id": placement.pk})["placement"]
            moved = tools.ok("update_placement", {"placement_id": placement.pk, "status": target})["placement"]
        assert target in listed["allowed_next_statuses"]
        assert not set(listed["automatic_next_statuses"]) & set(listed["allowed_next_statuses"])
        assert moved["status"] == target


@pytest.mark.parametrize("status", ["sent", "reviewing", "quoted"])
def test_automatic_next_statuses_name_what_other_calls_make_and_patch_refuses_them(api, account, status):
    placement = placement_in(account, status)
    listed = api.get(f"/api/v1/placements/{placement.pk}/").json()
    assert listed["automatic_next_statuses"] == (["won"] if status == "quoted" else ["quoted"])
    for target in listed["automatic_next_statuses"]:
        assert api.patch(f"/api/v1/placements/{placement.pk}/", {"status": target}, format="json").status_code == 400
