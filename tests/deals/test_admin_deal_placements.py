"""#13 on the deal team's admin: the deal page lists its placements and compares its quotes next to
its ranked lenders, and "Place with selected lenders" (on the deal page and on a search's page)
places the ticked lenders through the service every door uses — refusals said, tenancy kept."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse
from django.utils.html import escape

from deals.models import Placement
from deals.searches.models import LenderMatch
from lev.accounts.models import Membership
from tests.admin_helpers import admin_client, staff_user, superuser
from tests.deals.fixtures import eager_jobs  # noqa: F401  (a fixture: jobs run in-process, as embedded)
from tests.deals.placements.helpers import place, quote
from tests.deals.searches.factories import make_deal, searched_deal
from tests.factories import AccountFactory, MembershipFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_jobs")]


@pytest.fixture
def client():
    return admin_client(superuser())


@pytest.fixture
def ranked(account, django_capture_on_commit_callbacks):
    """A $10M deal with financials, ranked against six fitting lenders."""
    deal, search = searched_deal(account, django_capture_on_commit_callbacks, lenders=6)
    assert search.status == "completed" and search.total_matches == 6
    top = list(LenderMatch.objects.filter(search=search).order_by("rank"))
    return deal, search, top


def place_url(deal) -> str:
    return reverse("admin:deals_deal_place", args=[deal.pk])


def messages_of(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_the_ranked_lenders_can_be_ticked_and_placed_from_the_deal_page(client, ranked):
    deal, search, top = ranked
    html = client.get(reverse("admin:deals_deal_change", args=[deal.pk])).content.decode()
    # Each ranked row has a checkbox bound to the page's place form, which names the search.
    for match in top:
        assert f'name="lender_ids" value="{match.lender_id}" form="lev-place-form"' in html
    assert f'action="{place_url(deal)}"' in html and f'name="search_id" value="{search.pk}"' in html
    assert "Not placed with any lender yet." in html and "No quotes yet." in html

    chosen = [top[0].lender_id, top[2].lender_id]
    response = client.post(place_url(deal), {"lender_ids": [str(i) for i in chosen], "search_id": str(search.pk)})
    assert response.status_code == 302 and response["Location"].endswith("#placements")
    placements = list(Placement.objects.filter(deal=deal).order_by("source_rank"))
    assert [(p.lender_id, p.status, p.source_search_id, p.source_rank) for p in placements] == [
        (top[0].lender_id, "draft", search.pk, 1), (top[2].lender_id, "draft", search.pk, 3)]
    assert messages_of(response)[0].startswith("Placed with 2 lenders (drafts):")

    # Again: the service refuses a second open placement per lender, and the page says so.
    again = client.post(place_url(deal), {"lender_ids": [str(chosen[0])], "search_id": str(search.pk)})
    assert Placement.objects.filter(deal=deal).count() == 2
    assert messages_of(again)[-1].startswith(f"Conflict: lender {chosen[0]} already has an open placement")

    page = client.get(reverse("admin:deals_deal_change", args=[deal.pk])).content.decode()
    start = page.index('id="placements"')
    panel = page[start:page.index("</section>", start)]
    for p in placements:
        assert escape(p.lender.name) in panel and reverse("admin:deals_placement_change", args=[p.pk]) in panel
    assert panel.count("lev-badge--draft") == 2


def test_the_deal_page_compares_its_quotes_best_first(client, ranked):
    deal, _, top = ranked
    cheap = place(deal, top[0].lender)
    rich = place(deal, top[1].lender)
    quote(cheap, fixed_rate=Decimal("5.500"), loan_amount=Decimal("10000000"))
    winner = quote(rich, fixed_rate=Decimal("6.250"), loan_amount=Decimal("11000000"), recourse="full")
    html = client.get(reverse("admin:deals_deal_change", args=[deal.pk])).content.decode()
    table = html[html.index('class="lev-table lev-comparison"'):]
    table = table[:table.index("</table>")]
    assert "2 quotes, best first" in html and "requested $10,000,000" in html
    # Best first: the lower all-in cost; money and rates as a person reads them, with the notes.
    assert table.index(escape(top[0].lender.name)) < table.index(escape(top[1].lender.name))
    for text in ("5.5%", "6.25%", "$10,000,000", "$11,000,000", "lowest all-in cost", "highest proceeds",
                 "full recourse"):
        assert text in table.lower(), text
    assert "62.5%" in table and "68.75%" in table  # 10M and 11M over the $16M value: their LTVs

    from deals.placements.services import term_sheet_select_winner
    term_sheet_select_winner(term_sheet=winner)
    html = client.get(reverse("admin:deals_deal_change", args=[deal.pk])).content.decode()
    assert 'class="lev-winner"' in html and "lev-badge--won" in html and "lev-badge--lost" in html


def test_a_search_page_places_its_ticked_lenders_and_comes_back(client, ranked):
    deal, search, top = ranked
    url = reverse("admin:deals_lendersearch_change", args=[search.pk])
    html = client.get(url).content.decode()
    assert f'action="{place_url(deal)}"' in html and 'form="lev-place-form">Place with selected lenders' in html
    # The place form sits outside the search's own change form (forms do not nest).
    assert html.index('id="lev-place-form"') > html.index("</form>")
    response = client.post(place_url(deal), {"lender_ids": [str(top[4].lender_id)], "search_id": str(search.pk),
                                             "next": url})
    assert response["Location"] == url
    assert Placement.objects.get(deal=deal).source_rank == 5


@pytest.mark.parametrize("body, message", [
    ({}, "Tick one or more ranked lenders to place the deal with."),
    ({"lender_ids": ["x", "99999999999"]}, "Tick one or more ranked lenders to place the deal with."),
    ({"lender_ids": ["1"], "search_id": "nope"}, "That lender search is not one of this deal's."),
])
def test_hostile_place_forms_get_a_message_not_a_500(client, ranked, body, message):
    deal, _, _ = ranked
    response = client.post(place_url(deal), body)
    assert response.status_code == 302 and messages_of(response) == [message]
    assert not Placement.objects.exists()


@pytest.mark.parametrize("next_url", [
    "https://evil.example/", "http://testserver/evil", "https://testserver/admin/", "//evil.example/x",
    "//testserver/admin/", "/\\evil.example/x", "\\\\evil.example", "javascript:alert(1)", "admin/deals/",
    " /admin/", "http:/evil.example",
])
def test_only_a_path_on_this_site_is_a_next(client, ranked, next_url):
    # Issue 19 item 8: an absolute URL naming this very host was accepted; only "/path" is now.
    deal, _, _ = ranked
    response = client.post(place_url(deal), {"next": next_url})
    assert response["Location"] == reverse("admin:deals_deal_change", args=[deal.pk]) + "#placements"
    kept = client.post(place_url(deal), {"next": "/admin/deals/deal/?q=x"})
    assert kept["Location"] == "/admin/deals/deal/?q=x"


def test_another_deals_search_and_an_archived_deal_are_refused(client, ranked, account):
    deal, search, top = ranked
    other = make_deal(account, title="Other")
    response = client.post(place_url(other), {"lender_ids": [str(top[0].lender_id)], "search_id": str(search.pk)})
    assert messages_of(response) == ["That lender search is not one of this deal's."]
    from deals import services as deal_services
    deal_services.deal_archive(deal=deal)
    response = client.post(place_url(deal), {"lender_ids": [str(top[0].lender_id)]})
    assert not Placement.objects.exists()
    assert "Archived deals cannot be restored" in messages_of(response)[-1]


def test_place_only_answers_post_and_keeps_tenancy(ranked, account):
    deal, _, top = ranked
    assert admin_client(superuser()).get(place_url(deal)).status_code == 405
    permissions = ("view_deal", "change_deal", "view_lendersearch", "view_placement")
    outsider = staff_user("outsider", *permissions)
    MembershipFactory(account=AccountFactory(), user=outsider)
    response = admin_client(outsider).post(place_url(deal), {"lender_ids": [str(top[0].lender_id)]})
    assert (response.status_code, response["Location"]) == (302, "/admin/")  # like a missing deal
    viewer = staff_user("viewer", *permissions)
    MembershipFactory(account=account, user=viewer, role=Membership.Role.VIEWER)
    response = admin_client(viewer).post(place_url(deal), {"lender_ids": [str(top[0].lender_id)]})
    assert messages_of(response) == ["Forbidden: viewers of an account cannot change its deals."]
    assert not Placement.objects.exists()
    # Their placements lists show only their accounts' placements.
    place(deal, top[0].lender)
    listed = admin_client(outsider).get(reverse("admin:deals_placement_changelist")).context["cl"].result_list
    assert list(listed) == []
