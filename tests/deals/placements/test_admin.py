"""Admin of placements and term sheets: lists and filters load, formatting, and every
change goes through the services (a refused action says why; no add, no hard delete)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from deals.models import Placement, TermSheet
from deals.placements.admin import rate_text
from lev.formatting import money, percent
from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "x")
    client.force_login(admin)
    return client


@pytest.fixture
def pipeline(account):
    deal = deal_with_financials(account, title="Harbor Refi")
    draft, sent = place(deal, lenders(1)[0], status="draft"), place(deal, lenders(1)[0])
    fixed = quote(sent, fixed_rate=Decimal("6.125"), origination_fee_percent=Decimal("1"))
    floating = quote(place(deal, lenders(1)[0]), rate_type="floating", fixed_rate=None, rate_index="sofr",
                     spread_bps=275)
    return {"deal": deal, "draft": draft, "sent": sent, "fixed": fixed, "floating": floating}


def test_formatting():
    # The admin's one formatting module (lev.formatting): money as money, rates to their 3 places.
    assert money(Decimal("18500000")) == "$18,500,000" and money(None) == "—"
    assert percent(Decimal("6.125"), 3) == "6.125%" and percent(Decimal("6.100"), 3) == "6.1%" and percent(None) == "—"


def test_lists_filters_and_pages_load(staff, pipeline):
    for name, queries in (("placement", ["", "?status__exact=draft", "?q=Harbor"]),
                          ("termsheet", ["", "?winning__exact=0&rate_type__exact=floating", "?deleted_at__isempty=1"])):
        for query in queries:
            response = staff.get(reverse(f"admin:deals_{name}_changelist") + query)
            assert response.status_code == 200, (name, query)
    page = staff.get(reverse("admin:deals_termsheet_changelist")).content.decode()
    assert "$10M" in page and "6.125%" in page and "SOFR + 2.75%" in page
    assert rate_text(pipeline["floating"]) == "SOFR + 2.75%"
    placement_page = staff.get(reverse("admin:deals_placement_change", args=[pipeline["sent"].pk]))
    assert placement_page.status_code == 200 and "6.125%" in placement_page.content.decode()
    assert staff.get(reverse("admin:deals_placement_add")).status_code == 403
    assert staff.get(reverse("admin:deals_termsheet_add")).status_code == 403


def test_status_actions_call_the_services_and_say_why_one_is_refused(staff, pipeline):
    url = reverse("admin:deals_placement_changelist")
    ids = [pipeline["draft"].pk, pipeline["sent"].pk]  # draft -> sent is allowed; the quoted one is refused
    response = staff.post(url, {"action": "mark_sent", "_selected_action": ids}, follow=True)
    text = response.content.decode()
    assert "Placements marked sent: 1." in text
    assert "can&#x27;t be marked sent" in text  # the quoted one: its customer message
    draft = Placement.objects.get(pk=pipeline["draft"].pk)
    assert draft.status == "sent" and draft.sent_at is not None
    staff.post(url, {"action": "mark_archived", "_selected_action": [draft.pk]})
    assert Placement.objects.get(pk=draft.pk).status == "archived"


def test_editing_a_placement_goes_through_the_service(staff, pipeline):
    placement = pipeline["sent"]
    url = reverse("admin:deals_placement_change", args=[placement.pk])
    response = staff.post(url, {"contact_name": "Dana", "contact_email": "dana@x.com", "notes": "Called",
                                "decline_reason": "Sponsor experience",
                                "term_sheets-TOTAL_FORMS": 1, "term_sheets-INITIAL_FORMS": 1,
                                "term_sheets-MIN_NUM_FORMS": 0, "term_sheets-MAX_NUM_FORMS": 1000,
                                "term_sheets-0-id": pipeline["fixed"].pk})
    assert response.status_code == 302, response.content.decode()[:2000]
    placement.refresh_from_db()
    assert (placement.contact_name, placement.notes, placement.status) == ("Dana", "Called", "quoted")
    # The reason a lender gave for a decline (the ranking's insights say the latest: docs/ranking.md).
    assert placement.decline_reason == "Sponsor experience"


def test_term_sheet_actions(staff, pipeline):
    url = reverse("admin:deals_termsheet_changelist")
    both = [pipeline["fixed"].pk, pipeline["floating"].pk]
    response = staff.post(url, {"action": "choose_winner", "_selected_action": both}, follow=True)
    assert "Choose exactly one" in response.content.decode()
    staff.post(url, {"action": "choose_winner", "_selected_action": [pipeline["fixed"].pk]})
    assert TermSheet.objects.get(pk=pipeline["fixed"].pk).winning
    assert Placement.objects.get(pk=pipeline["floating"].placement_id).status == "lost"
    response = staff.post(url, {"action": "remove", "_selected_action": both}, follow=True)
    assert "cannot be removed" in response.content.decode()  # the winner stays
    assert TermSheet.objects.get(pk=pipeline["floating"].pk).deleted_at is not None
    assert TermSheet.objects.get(pk=pipeline["fixed"].pk).deleted_at is None
