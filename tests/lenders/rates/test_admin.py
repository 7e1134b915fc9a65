"""The market rate admin: a superuser adds and edits dated rates; a staff member of an account without
the model's permissions cannot; the list filters by index and walks dates; the old base rate pages lead
to the list."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.urls import reverse

from lenders.rates.models import MarketRate
from lenders.rates.services import market_rate_set
from lev.accounts.models import Membership
from tests.admin_helpers import admin_client, change_form_data, staff_user, superuser
from tests.factories import AccountFactory, MembershipFactory

pytestmark = pytest.mark.django_db

LIST = reverse("admin:lenders_marketrate_changelist")


def test_a_superuser_adds_and_edits_rates_and_the_list_filters(client):
    root = admin_client(superuser())
    added = root.post(reverse("admin:lenders_marketrate_add"),
                      {"index": "prime", "on": "2026-11-20", "rate": "7.5", "source": "admin"})
    assert added.status_code == 302
    row = MarketRate.objects.get(index="prime", on=dt.date(2026, 11, 20))
    url = reverse("admin:lenders_marketrate_change", args=[row.pk])
    data = change_form_data(root.get(url))
    data.update(rate="7.25")
    assert root.post(url, data).status_code == 302
    assert MarketRate.objects.get(pk=row.pk).rate == Decimal("7.25")
    # The same index and date twice is refused by the form, not a 500.
    again = root.post(reverse("admin:lenders_marketrate_add"),
                      {"index": "prime", "on": "2026-11-20", "rate": "7.0", "source": "admin"})
    assert again.status_code == 200 and MarketRate.objects.count() == 1
    market_rate_set(index="sofr", on=dt.date(2026, 11, 19), rate=Decimal("4.31"))
    page = root.get(LIST, {"index__exact": "sofr"}).content.decode()
    assert "4.310 %" in page or "4.31" in page
    assert "7.250" not in page
    assert root.get(LIST, {"on__year": "2026", "on__month": "11"}).status_code == 200
    assert root.get(LIST, {"q": "admin"}).status_code == 200


def test_an_account_member_without_the_permissions_cannot_edit():
    staff = staff_user("member")
    MembershipFactory(account=AccountFactory(), user=staff, role=Membership.Role.OWNER)
    member = admin_client(staff)
    row = market_rate_set(index="sofr", on=dt.date(2026, 11, 19), rate=Decimal("4.31"))
    assert member.get(LIST).status_code == 403
    assert member.post(reverse("admin:lenders_marketrate_add"),
                       {"index": "prime", "on": "2026-11-20", "rate": "7.5"}).status_code == 403
    assert member.post(reverse("admin:lenders_marketrate_change", args=[row.pk]),
                       {"index": "sofr", "on": "2026-11-19", "rate": "9"}).status_code == 403
    assert MarketRate.objects.get(pk=row.pk).rate == Decimal("4.31") and MarketRate.objects.count() == 1
    # Given only the view permission, the member reads the list but still changes nothing.
    viewer = admin_client(staff_user("viewer", "view_marketrate"))
    assert viewer.get(LIST).status_code == 200
    assert viewer.post(reverse("admin:lenders_marketrate_change", args=[row.pk]),
                       {"index": "sofr", "on": "2026-11-19", "rate": "9"}).status_code == 403


def test_the_old_base_rate_pages_lead_to_the_market_rates(client):
    for old in ("/admin/deals/baserate/", "/admin/deals/baserate/3/change/"):
        response = client.get(old)
        assert (response.status_code, response["Location"]) == (301, "/admin/lenders/marketrate/")
