"""The demo's market history (deals.demo_history): deterministic, idempotent, consistent with the
workflow's rules, and the source of the activity signals seed_demo computes."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db.models import Count, Q
from django.urls import reverse

from deals.demo_history import HISTORY_ACCOUNT_SLUG, seed_demo_pipeline, seed_market_history
from deals.models import Deal, Placement, TermSheet
from deals.placements.activity import lender_activity_recompute
from deals.searches.models import LenderSearch
from lenders.demo import seed_directory
from lenders.models import LenderActivity
from lev.accounts.models import Account
from tests.deals.searches.factories import make_deal

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_jobs")]  # jobs in-process, as under tests/lenders

NOW = dt.datetime(2026, 11, 22, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def directory():
    seed_directory(120, seed=7)


def snapshot() -> list[tuple]:
    """The history without database ids: what a second run must reproduce."""
    placements = Placement.objects.filter(deal__account__slug=HISTORY_ACCOUNT_SLUG).order_by(
        "deal__title", "lender__website")
    rows = [(p.deal.title, p.lender.website, p.status, p.sent_at, p.first_response_at, p.decided_at)
            for p in placements.select_related("deal", "lender")]
    quotes = TermSheet.objects.filter(deal__account__slug=HISTORY_ACCOUNT_SLUG).order_by(
        "deal__title", "placement__lender__website", "received_at")
    rows += [(t.deal.title, t.placement.lender.website, t.rate_type, t.fixed_rate, t.spread_bps, t.loan_amount,
              t.received_at, t.winning) for t in quotes.select_related("deal", "placement__lender")]
    return rows


def test_the_same_directory_seed_and_time_give_the_same_history(directory):
    stats = seed_market_history(seed=7, deals=80, now=NOW)
    assert stats.deals > 60 and stats.placements > 3 * stats.deals and stats.term_sheets > 0 and stats.won > 0
    first = snapshot()
    assert seed_market_history(seed=7, deals=80, now=NOW).deals == 0  # already there: nothing made
    assert snapshot() == first
    Account.objects.filter(slug=HISTORY_ACCOUNT_SLUG).delete()
    assert seed_market_history(seed=7, deals=80, now=NOW) == stats
    assert snapshot() == first
    Account.objects.filter(slug=HISTORY_ACCOUNT_SLUG).delete()
    seed_market_history(seed=8, deals=80, now=NOW)
    assert snapshot() != first


def test_the_history_keeps_the_workflows_rules(directory):
    seed_market_history(seed=7, deals=80, now=NOW)
    placements = Placement.objects.all()
    for p in placements:
        times = [t for t in (p.sent_at, p.first_response_at) if t is not None]
        assert times == sorted(times) and all(t <= NOW for t in (*times, p.decided_at or NOW)), p
        assert (p.decided_at is not None) == (p.status in ("declined", "won", "lost")), p
        if p.status in ("reviewing", "quoted", "declined"):
            assert p.first_response_at is not None, p
    # One winner per deal at most, on a won placement, after its quote came in.
    winners = TermSheet.objects.filter(winning=True).select_related("placement")
    assert winners.count() == placements.filter(status="won").count() > 0
    for term_sheet in winners:
        assert term_sheet.placement.status == "won" and term_sheet.received_at <= term_sheet.placement.decided_at
    assert not TermSheet.objects.values("deal").annotate(n=Count("id", filter=Q(winning=True))).filter(n__gt=1)
    assert not placements.filter(status="quoted").annotate(n=Count("term_sheets")).filter(n=0).exists()
    assert TermSheet.objects.filter(received_at__gt=NOW).count() == 0
    statuses = Counter(placements.values_list("status", flat=True))
    assert {"won", "lost", "declined", "quoted", "no_response"} <= set(statuses)


def test_the_signals_come_from_the_history(directory):
    seed_market_history(seed=7, deals=80, now=NOW)
    assert lender_activity_recompute(now=NOW) > 20
    rows = LenderActivity.objects.all()
    assert rows.filter(quotes_90d__gt=0).exists() and rows.filter(closings_90d__gt=0).exists()
    assert len({round(score, 3) for score in rows.values_list("score", flat=True)}) > 5  # lenders differ
    assert rows.exclude(avg_response_hours=None).exists()


def test_the_demo_pipeline(directory, account):
    deal = make_deal(account, loan_amount=18_500_000)
    made = seed_demo_pipeline(deal=deal)
    assert made == 4
    placements = Placement.objects.filter(deal=deal)
    assert sorted(placements.values_list("status", flat=True)) == ["quoted", "quoted", "sent", "sent"]
    assert TermSheet.objects.filter(deal=deal).count() == 2
    # Placed from a completed search of the deal, with the ranks 1-4 of its ranked lenders.
    search = LenderSearch.objects.get(deal=deal)
    assert search.status == "completed" and search.ranked_matches >= 4
    assert sorted(placements.values_list("source_search_id", "source_rank")) == [(search.pk, n) for n in range(1, 5)]
    assert seed_demo_pipeline(deal=deal) == 0
    assert LenderSearch.objects.filter(deal=deal).count() == 1  # idempotent: no second search either


def test_the_demo_deal_page_after_seed_demo(client):
    """A fresh demo: the deal page shows ranked lenders, placements from their ranks and quotes compared."""
    call_command("seed_demo", "--lenders", "120", stdout=StringIO())
    deal = Deal.objects.get(title="Riverside Apartments Refinance")
    client.force_login(get_user_model().objects.get(username="admin"))
    html = client.get(reverse("admin:deals_deal_change", args=[deal.pk])).content.decode()
    assert "No completed lender search yet" not in html
    ranked = html[html.index('class="lev-table lev-ranked"'):]
    assert ranked[:ranked.index("</table>")].count('<td class="lev-num lev-rank">') == 10
    placements = html[html.index('class="lev-table lev-placements"'):]
    placements = placements[:placements.index("</table>")]
    for n in range(1, 5):
        assert f'<td class="lev-num">{n}</td>' in placements  # "from rank" n
    comparison = html[html.index('class="lev-table lev-comparison"'):]
    assert comparison[:comparison.index("</table>")].count("<tr") == 3  # the header and two quotes
