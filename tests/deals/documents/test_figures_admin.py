"""The deal page's "Figures from documents" in the admin: the figures beside the deal's values and the
problems with their rows, Apply for the ticked figures (sources recorded), a file that is no rent roll
or T-12 said in words; another account's deal or a version of another deal is "not found"; a member
who may only view sees no Apply and cannot post one."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.urls import reverse

from deals.models import DealFinancials, FigureSource
from tests.admin_helpers import admin_client, staff_user
from tests.deals.documents import figures_files as files
from tests.deals.documents.figures_files import stored
from tests.deals.searches.factories import make_deal
from tests.factories import AccountFactory, DealFinancialsFactory, MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def acme():
    return AccountFactory(slug="acme", name="Acme")


@pytest.fixture
def staffer(acme):
    user = staff_user("staffer", "view_deal", "change_deal")
    MembershipFactory(account=acme, user=user)
    return user


@pytest.fixture
def deal(acme):
    deal = make_deal(acme, title="Harbor View")
    DealFinancialsFactory(deal=deal, in_place_noi=Decimal("900000"))
    return deal


@pytest.fixture(autouse=True)
def _remove_files():
    yield
    from deals.documents.models import DocumentVersion

    for version in DocumentVersion.objects.all():
        version.file.delete(save=False)


def url(deal, version) -> str:
    return reverse("admin:deals_deal_figures", args=[deal.pk, version.pk])


def test_the_preview_shows_the_figures_beside_the_deals_and_apply_applies_the_ticked(staffer, deal):
    version = stored(deal, files.yardi_t12()[0], "Harbor T12.xlsx", kind="t12")
    client = admin_client(staffer)
    page = client.get(url(deal, version))
    assert page.status_code == 200
    html = page.content.decode()
    assert url(deal, version) == f"/admin/deals/deal/{deal.pk}/figures/{version.pk}/"
    assert "Figures from Harbor T12.xlsx" in html and "Yardi layout" in html
    assert "$644,400.00" in html and "$900,000.00" in html and "entered by hand" in html
    assert 'id="apply-figures"' in html and "Every row was read." in html
    response = client.post(url(deal, version), {"fields": ["in_place_noi", "operating_expenses"]})
    assert response.status_code == 302
    fin = DealFinancials.objects.get(deal=deal)
    assert (fin.in_place_noi, fin.operating_expenses, fin.effective_gross_income) == (
        Decimal("644400"), Decimal("501600"), None)
    assert set(FigureSource.objects.filter(deal=deal).values_list("field", flat=True)) == {
        "in_place_noi", "operating_expenses"}
    after = client.get(url(deal, version)).content.decode()
    assert "Applied from Harbor T12.xlsx (version 1): In-place NOI, Operating expenses." in after
    assert "Harbor T12.xlsx, version 1" in after


def test_the_problems_are_listed_with_their_rows(staffer, deal):
    version = stored(deal, files.hand_made_rent_roll()[0], "roll.xlsx")
    html = admin_client(staffer).get(url(deal, version)).content.decode()
    assert "What could not be read (5)" in html
    assert "Row 9: rent &#x27;12O0&#x27; of unit 104 is not an amount" in html


def test_nothing_ticked_and_a_file_that_is_no_rent_roll_are_said_in_words(staffer, deal):
    client = admin_client(staffer)
    version = stored(deal, b"Name,Email\nAda,a@b.co\n", "contacts.csv")
    html = client.get(url(deal, version)).content.decode()
    assert 'id="figures-refused"' in html and "no header was recognised" in html
    good = stored(deal, files.yardi_t12()[0], "t12.xlsx", kind="t12")
    client.post(url(deal, good), {})
    assert "Tick one or more figures to apply." in client.get(url(deal, good)).content.decode()
    assert not FigureSource.objects.exists()


def test_another_accounts_deal_and_another_deals_version_are_not_found(staffer, deal, acme):
    other = make_deal(AccountFactory(slug="other"))
    theirs = stored(other, files.yardi_t12()[0], "t12.xlsx", kind="t12")
    mine_elsewhere = stored(make_deal(acme), files.yardi_t12()[0], "t12.xlsx", kind="t12")
    client = admin_client(staffer)
    response = client.get(url(other, theirs))
    assert response.status_code in (302, 404)  # the admin's "not found" (a redirect with a message)
    assert client.post(url(other, theirs), {"fields": ["in_place_noi"]}).status_code in (302, 404)
    assert client.get(url(deal, mine_elsewhere)).status_code == 404
    assert client.get(url(deal, theirs)).status_code == 404
    assert not FigureSource.objects.exists()


@pytest.mark.parametrize(("permissions", "role"),
                         [(("view_deal",), "member"), (("view_deal", "change_deal"), "viewer")],
                         ids=["view-permission-only", "viewer-role"])
def test_who_may_only_view_sees_no_apply_and_cannot_post_one(acme, deal, permissions, role):
    viewer = staff_user("viewer", *permissions)
    MembershipFactory(account=acme, user=viewer, role=role)
    version = stored(deal, files.yardi_t12()[0], "t12.xlsx", kind="t12")
    client = admin_client(viewer)
    page = client.get(url(deal, version))
    assert page.status_code == 200 and "$644,400.00" in page.content.decode()
    assert 'id="apply-figures"' not in page.content.decode()
    assert client.post(url(deal, version), {"fields": ["in_place_noi"]}).status_code in (302, 403)
    assert not FigureSource.objects.exists()
