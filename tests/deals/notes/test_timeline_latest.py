"""The deal page reads only the timeline it shows: deal_timeline_latest(n) is exactly the newest n of
the whole timeline (the API's), whether what happened lately are entries or edits that are none; the
page's queries are as many for a deal with 3 entries as for one with 300, its quotes bounded (the
rest counted and linked), and the whole timeline is one link away."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from deals.models import Note
from deals.notes.timeline import deal_timeline, deal_timeline_latest
from deals.placements import services as placement_services
from lev import limits
from tests.admin_helpers import admin_client, staff_user
from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote
from tests.factories import AccountFactory, MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def acme():
    return AccountFactory(slug="acme", name="Acme")


@pytest.fixture
def staffer(acme):
    user = staff_user("staffer", "view_deal", "change_deal", "view_placement", "view_termsheet", "view_note")
    MembershipFactory(account=acme, user=user)
    return user


def busy(deal, user, count: int, *, rate=6.0):
    """`count` lenders placed, each quoted and noted; a placement's status moved on for some."""
    sheets = []
    for i, lender in enumerate(lenders(count)):
        placement = place(deal, lender)
        if i % 3 == 1:
            placement_services.placement_update(placement=placement, data={"status": "reviewing"})
        sheets.append(quote(placement, fixed_rate=rate + i / 100))
        Note.objects.create(account=deal.account, placement=placement, author=user, kind="call",
                            body=f"Called {lender.name}")
    return sheets


def test_the_latest_entries_are_the_newest_of_the_whole_timeline(acme, staffer):
    deal = deal_with_financials(acme)
    sheets = busy(deal, staffer, 8)
    placement_services.term_sheet_select_winner(term_sheet=sheets[3], user=staffer)
    Note.objects.create(account=acme, deal=deal, author=staffer, body="Closing call booked")
    whole = deal_timeline(deal=deal)
    assert len(whole) > 30
    for n in (1, 2, 5, 13, len(whole) - 1, len(whole), len(whole) + 5):
        assert deal_timeline_latest(deal=deal, n=n) == whole[::-1][:n], n


def test_edits_that_are_no_entry_do_not_hide_older_entries(acme, staffer):
    deal = deal_with_financials(acme)
    placements = [place(deal, lender) for lender in lenders(4)]
    # The latest things that happened are edits of a placement's notes: history rows, no entries.
    for i in range(12):
        placement_services.placement_update(placement=placements[0], data={"notes": f"edit {i}"})
    whole = deal_timeline(deal=deal)
    for n in (3, 6, len(whole)):
        assert deal_timeline_latest(deal=deal, n=n) == whole[::-1][:n], n


def test_the_deal_page_reads_as_many_queries_for_3_entries_as_for_300(acme, staffer):
    client = admin_client(staffer)
    small, large = deal_with_financials(acme), deal_with_financials(acme, title="Large")
    busy(small, staffer, 1)
    busy(large, staffer, 90)
    assert len(deal_timeline(deal=small)) <= 5 and len(deal_timeline(deal=large)) >= 300
    pages = {}
    for deal in (small, large):
        client.get(reverse("admin:deals_deal_change", args=[deal.pk]))  # caches warmed alike
        with CaptureQueriesContext(connection) as queries:
            pages[deal.title] = client.get(reverse("admin:deals_deal_change", args=[deal.pk]))
        pages[deal.title].queries = len(queries)
    few, many = pages[small.title], pages[large.title]
    assert few.queries == many.queries, (few.queries, many.queries)

    context = many.context["lev_deal"]
    assert len(context["timeline"]) == limits.ADMIN_TIMELINE_ENTRIES and context["older_entries"]
    assert context["timeline"] == deal_timeline(deal=large)[::-1][: limits.ADMIN_TIMELINE_ENTRIES]
    assert len(context["quotes"]) == limits.ADMIN_DEAL_QUOTES
    assert context["more_quotes"] == 90 - limits.ADMIN_DEAL_QUOTES
    html = many.content.decode()
    timeline_url = reverse("admin:deals_deal_timeline", args=[large.pk])
    assert f'href="{timeline_url}"' in html and "the whole timeline" in html
    assert (f"{limits.ADMIN_DEAL_QUOTES} of 90 quotes are shown, {90 - limits.ADMIN_DEAL_QUOTES} more" in html
            and f"?deal__id__exact={large.pk}" in html)
    assert html.count('class="lev-timeline-') == limits.ADMIN_TIMELINE_ENTRIES
    small_context = few.context["lev_deal"]
    assert not small_context["older_entries"] and small_context["more_quotes"] == 0
    assert "the whole timeline" not in few.content.decode()

    # The link: every entry, newest first; the term sheet list filtered to the deal lists its 90 quotes.
    whole = client.get(timeline_url)
    assert whole.status_code == 200
    assert whole.content.decode().count('class="lev-timeline-') == len(deal_timeline(deal=large))
    listed = client.get(reverse("admin:deals_termsheet_changelist") + f"?deal__id__exact={large.pk}")
    assert listed.status_code == 200 and listed.context["cl"].result_count == 90


def test_the_winner_is_shown_first_even_when_it_is_the_dearest(acme, staffer):
    client = admin_client(staffer)
    deal = deal_with_financials(acme)
    sheets = busy(deal, staffer, limits.ADMIN_DEAL_QUOTES + 3)
    placement_services.term_sheet_select_winner(term_sheet=sheets[-1], user=staffer)  # the dearest quote
    context = client.get(reverse("admin:deals_deal_change", args=[deal.pk])).context["lev_deal"]
    shown = context["quotes"]
    # A chosen winner comes first, everywhere (issue 39: the deal page listed a lost quote above it).
    assert len(shown) == limits.ADMIN_DEAL_QUOTES and shown[0].term_sheet_id == sheets[-1].pk and shown[0].winning


def test_another_accounts_timeline_is_not_found(acme, staffer):
    theirs = deal_with_financials(AccountFactory(slug="rival", name="Rival"))
    answer = admin_client(staffer).get(reverse("admin:deals_deal_timeline", args=[theirs.pk]))
    assert answer.status_code == 302 and answer["Location"] == reverse("admin:index")
