"""Issue 23 on the deal page: the winner chosen from the quote comparison (a confirmation, then the
service the API uses; its refusals said in the API's words, never a 500; CSRF; tenancy), ranked
lenders marked when already placed, and the page's query count flat in its ranked lenders and
placements."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.contrib.messages import get_messages
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from deals.models import Placement, TermSheet
from deals.placements import services as placement_services
from deals.searches.models import LenderMatch
from lev.accounts.models import Membership
from tests.admin_helpers import admin_client, staff_user, superuser
from tests.deals.fixtures import eager_jobs  # noqa: F401  (a fixture: jobs run in-process, as embedded)
from tests.deals.placements.helpers import place, quote
from tests.deals.searches.factories import make_deal, searched_deal
from tests.deals.searches.test_admin import completed_search
from tests.factories import AccountFactory, MembershipFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_jobs")]
PERMISSIONS = ("view_deal", "change_deal", "view_lendersearch", "view_placement", "view_termsheet")


@pytest.fixture
def client():
    return admin_client(superuser())


@pytest.fixture
def quoted(account, django_capture_on_commit_callbacks):
    """A ranked deal placed with three lenders, two of them quoted (the first fixed, the second floating)."""
    deal, search = searched_deal(account, django_capture_on_commit_callbacks, lenders=6)
    top = list(LenderMatch.objects.filter(search=search).order_by("rank"))
    placements = [place(deal, top[n].lender) for n in range(3)]
    fixed = quote(placements[0], fixed_rate=Decimal("5.500"), notes="Subject to site visit.\nRate lock at 30 days.")
    floating = quote(placements[1], rate_type="floating", fixed_rate=None, rate_index="term_sofr_1m", spread_bps=350)
    return deal, search, top, placements, fixed, floating


def winner_url(deal, term_sheet) -> str:
    return reverse("admin:deals_deal_choose_winner", args=[deal.pk, term_sheet.pk])


def messages_of(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_the_comparison_reads_in_words_and_offers_the_winner(client, quoted):
    deal, _, _, placements, fixed, floating = quoted
    html = client.get(reverse("admin:deals_deal_change", args=[deal.pk])).content.decode()
    table = html[html.index('class="lev-table lev-comparison"'):]
    table = table[:table.index("</table>")]
    assert "1-month Term SOFR + 3.50%" in table and "bps" not in table and "TERM_SOFR" not in table
    assert "Fixed rate" in table
    assert "Subject to site visit." in table and "Rate lock at 30 days." in table  # the quote's own notes
    assert "<details>" in table
    assert winner_url(deal, fixed) in table and winner_url(deal, floating) in table
    # The ranked lenders placed are marked with their placement's status, linking to it.
    ranked = html[html.index('class="lev-table lev-ranked"'):]
    ranked = ranked[:ranked.index("</table>")]
    for placement in placements:
        assert reverse("admin:deals_placement_change", args=[placement.pk]) in ranked
    assert ranked.count("lev-badge--quoted") == 2 and ranked.count("lev-badge--sent") == 1


def test_choosing_the_winner_confirms_then_calls_the_service(client, quoted):
    deal, _, _, placements, fixed, _ = quoted
    page = client.get(winner_url(deal, fixed))
    text = page.content.decode()
    assert page.status_code == 200 and "cannot be undone" in text and "closing" in text
    assert TermSheet.objects.filter(winning=True).count() == 0  # GET changes nothing
    response = client.post(winner_url(deal, fixed))
    assert response.status_code == 302 and response["Location"].endswith(f"/deals/deal/{deal.pk}/change/#term-sheets")
    assert messages_of(response)[-1].endswith("quote is the winner: its placement is won, 2 other placements lost, "
                                              "and the deal moved to closing.")
    statuses = dict(Placement.objects.filter(deal=deal).values_list("pk", "status"))
    assert statuses == {placements[0].pk: "won", placements[1].pk: "lost", placements[2].pk: "lost"}
    deal.refresh_from_db()
    assert deal.stage.key == "closing"
    html = client.get(reverse("admin:deals_deal_change", args=[deal.pk])).content.decode()
    assert "Choose as winner…" not in html and 'class="lev-winner"' in html
    # Again: already the winner, said, nothing changed.
    again = client.post(winner_url(deal, fixed))
    assert "already the winner" in messages_of(again)[-1]


def test_refusals_are_messages_in_the_apis_words(client, quoted, account):
    deal, _, top, _, fixed, floating = quoted
    TermSheet.objects.filter(pk=floating.pk).update(expires_on=timezone.localdate() - dt.timedelta(days=1))
    response = client.post(winner_url(deal, floating))
    assert response.status_code == 302 and "expired on" in messages_of(response)[-1]
    placement_services.term_sheet_select_winner(term_sheet=fixed)
    late = quote(place(deal, top[4].lender), fixed_rate=Decimal("5.000"))
    response = client.post(winner_url(deal, late))
    assert "A winning quote was already chosen for this deal" in messages_of(response)[-1]
    assert TermSheet.objects.get(winning=True).pk == fixed.pk

    other = make_deal(account, title="Another deal")
    assert client.get(winner_url(other, fixed)).status_code == 404  # not that deal's quote
    assert client.post(winner_url(deal, TermSheet(pk=999999))).status_code == 404


def test_an_archived_deal_refuses_the_winner(client, quoted):
    deal, _, _, _, fixed, _ = quoted
    from deals import services as deal_services
    deal_services.deal_archive(deal=deal)
    response = client.post(winner_url(deal, fixed))
    assert response.status_code == 302 and "Archived" in messages_of(response)[-1]
    assert not TermSheet.objects.filter(winning=True).exists()


def test_viewers_outsiders_and_forged_posts_are_refused(quoted, account):
    deal, _, _, _, fixed, _ = quoted
    viewer = staff_user("viewer", *PERMISSIONS)
    MembershipFactory(account=account, user=viewer, role=Membership.Role.VIEWER)
    response = admin_client(viewer).post(winner_url(deal, fixed))
    assert messages_of(response) == ["Forbidden: viewers of an account cannot change its deals."]
    assert "Choose as winner…" not in admin_client(viewer).get(
        reverse("admin:deals_deal_change", args=[deal.pk])).content.decode()
    outsider = staff_user("outsider", *PERMISSIONS)
    MembershipFactory(account=AccountFactory(), user=outsider)
    assert admin_client(outsider).get(winner_url(deal, fixed)).status_code == 404
    assert admin_client(outsider).post(winner_url(deal, fixed)).status_code == 404
    # Another account's term sheet under this account's deal: 404 too.
    foreign_deal = make_deal(AccountFactory(), title="Theirs")
    assert admin_client(superuser("root2")).get(winner_url(foreign_deal, fixed)).status_code == 404
    reader = staff_user("reader", "view_deal", "view_termsheet")  # may not change deals at all
    MembershipFactory(account=account, user=reader)
    assert admin_client(reader).post(winner_url(deal, fixed)).status_code == 403
    forged = Client(enforce_csrf_checks=True)
    forged.force_login(superuser("root3"))
    assert forged.post(winner_url(deal, fixed)).status_code == 403
    assert not TermSheet.objects.filter(winning=True).exists()


def deal_page_queries(client, deal) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("admin:deals_deal_change", args=[deal.pk])).status_code == 200
    return len(queries)


def test_the_deal_page_query_count_is_flat_in_ranked_lenders_and_placements(client, account):
    small = make_deal(account, title="Small")
    search = completed_search(small, 3)
    lender = LenderMatch.objects.filter(search=search).first().lender
    quote(place(small, lender), fixed_rate=Decimal("6.000"))
    big = make_deal(account, title="Big")
    search = completed_search(big, 1000)
    matches = list(LenderMatch.objects.filter(search=search).order_by("rank").select_related("lender"))
    Placement.objects.bulk_create(Placement(deal=big, lender=m.lender, status="sent", source_search=search,
                                            source_rank=m.rank) for m in matches[5:205])
    for m in matches[:5]:
        quote(place(big, m.lender), fixed_rate=Decimal("6.000") + m.rank)
    deal_page_queries(client, small)  # warm up (content types, sessions)
    few, many = deal_page_queries(client, small), deal_page_queries(client, big)
    assert many <= few + 2, (few, many)
    html = client.get(reverse("admin:deals_deal_change", args=[big.pk])).content.decode()
    assert "The first 25 of 205 placements are shown" in html


def summary_note(client, deal) -> str:
    """The deal summary's one line of what comes next (its stage is beside the figures)."""
    html = client.get(reverse("admin:deals_deal_change", args=[deal.pk])).content.decode()
    section = html[html.index('id="deal-summary"'):html.index("</section>", html.index('id="deal-summary"'))]
    return " ".join(section[section.index('<p class="lev-note'):].split("</p>")[0].split(">", 1)[1].split())


def test_the_summary_says_what_comes_next_as_the_deal_moves_on(client, account, django_capture_on_commit_callbacks):
    """Issue 22's finding: after a winner was chosen the deal page still said "Ready for a lender search"."""
    deal, search = searched_deal(account, django_capture_on_commit_callbacks, lenders=4)
    assert summary_note(client, deal) == "Lenders are ranked: place the deal with the best of them (tick them below)."
    top = list(LenderMatch.objects.filter(search=search).order_by("rank"))
    placements = [place(deal, top[n].lender) for n in range(2)]
    assert summary_note(client, deal).startswith("Placed with 2 lenders: waiting for their answers")
    fixed = quote(placements[0])
    assert summary_note(client, deal) == "1 quote in: compare it below and choose the winner."
    placement_services.term_sheet_select_winner(term_sheet=fixed)
    deal.refresh_from_db()
    note = summary_note(client, deal)
    assert note.startswith("A winning quote is chosen: work it to closing") and "Ready for a lender search" not in note
    page = client.get(reverse("admin:deals_deal_change", args=[deal.pk])).content.decode()
    assert "<dt>Stage</dt><dd>Closing</dd>" in page
