"""The demo's market history (deals.demo.history): the demo account's own, deterministic, idempotent,
consistent with the workflow's rules, and the source of the signals and activity seed_demo computes, so
the demo deal's search shows evidence from the account's own record."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db.models import Count, Q
from django.urls import reverse

from deals.demo.directory import seed_directory
from deals.demo.history import (
    HISTORY_DESCRIPTION,
    LEGACY_HISTORY_ACCOUNT_SLUG,
    Market,
    history_deals,
    retire_legacy_history,
    seed_demo_pipeline,
    seed_market_history,
)
from deals.models import Deal, DealProperty, Placement, TermSheet
from deals.placements.activity import lender_activity_recompute
from deals.searches.models import LenderMatch, LenderSearch
from lenders.models import LenderActivity
from lev.accounts.models import Account, Membership
from tests.deals.searches.factories import make_deal

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_jobs")]  # jobs in-process, as under tests/lenders

NOW = dt.datetime(2026, 11, 22, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def directory():
    seed_directory(120, seed=7)


TX_MULTIFAMILY = Market("TX", "multifamily", 18_500_000, "permanent", "refinance", "stabilized", weight=4)


def snapshot() -> list[tuple]:
    """The history without database ids: what a second run must reproduce."""
    placements = Placement.objects.filter(deal__description=HISTORY_DESCRIPTION).order_by(
        "deal__title", "lender__website")
    rows = [(p.deal.title, p.lender.website, p.status, p.sent_at, p.first_response_at, p.decided_at)
            for p in placements.select_related("deal", "lender")]
    quotes = TermSheet.objects.filter(deal__description=HISTORY_DESCRIPTION).order_by(
        "deal__title", "placement__lender__website", "received_at")
    rows += [(t.deal.title, t.placement.lender.website, t.rate_type, t.fixed_rate, t.spread_bps, t.loan_amount,
              t.received_at, t.winning) for t in quotes.select_related("deal", "placement__lender")]
    return rows


def test_the_same_directory_seed_and_time_give_the_same_history(directory, account):
    stats = seed_market_history(account, seed=7, deals=80, now=NOW, focus=[TX_MULTIFAMILY])
    assert stats.deals > 60 and stats.placements > 3 * stats.deals and stats.term_sheets > 0 and stats.won > 0
    # In the account itself: archived past deals, so its active lists show its own deals.
    assert history_deals(account).count() == stats.deals == Deal.objects.filter(account=account).count()
    assert not Deal.objects.filter(account=account, archived=False).exists()
    first = snapshot()
    assert seed_market_history(account, seed=7, deals=80, now=NOW, focus=[TX_MULTIFAMILY]).deals == 0  # there
    assert snapshot() == first
    history_deals(account).delete()
    assert seed_market_history(account, seed=7, deals=80, now=NOW, focus=[TX_MULTIFAMILY]) == stats
    assert snapshot() == first
    history_deals(account).delete()
    seed_market_history(account, seed=8, deals=80, now=NOW, focus=[TX_MULTIFAMILY])
    assert snapshot() != first


def test_the_history_leans_toward_the_focus_markets(directory, account):
    seed_market_history(account, seed=7, deals=120, now=NOW, focus=[TX_MULTIFAMILY])
    focused = DealProperty.objects.filter(deal__in=history_deals(account), state="TX", asset_type="multifamily")
    assert focused.count() > 120 * 0.3  # about 45% of the deals, not one market's share of hundreds
    assert set(Deal.objects.filter(properties__in=focused).values_list("loan_type", flat=True)) == {"permanent"}
    # Lenders differ on deals of one kind: some quote nearly all of them, some decline or never answer.
    outcomes: dict[int, Counter] = {}
    for lender_id, status in Placement.objects.filter(deal__properties__in=focused).values_list("lender_id",
                                                                                                "status"):
        outcomes.setdefault(lender_id, Counter())[status] += 1
    often = [c for c in outcomes.values() if sum(c.values()) >= 3]
    assert any(c["declined"] == sum(c.values()) for c in often)
    assert any(c["quoted"] + c["won"] + c["lost"] >= 0.8 * sum(c.values()) for c in often)
    assert any(c["no_response"] >= 2 and not (c["quoted"] + c["won"] + c["declined"]) for c in outcomes.values())


def test_the_demo_deals_placements_do_not_pass_for_the_history(directory, account):
    """The history's idempotence check reads its own past deals: the account's demo deal placed first
    (an active deal of the same account) does not stop the history from being made."""
    deal = make_deal(account, loan_amount=18_500_000)
    assert seed_demo_pipeline(deal=deal) == 4
    assert seed_market_history(account, seed=7, deals=40, now=NOW).deals > 20
    assert Placement.objects.filter(deal=deal).count() == 4 and not deal.archived


def test_an_older_databases_history_account_is_removed(directory, account):
    legacy = Account.objects.create(name="Market History (demo)", slug=LEGACY_HISTORY_ACCOUNT_SLUG)
    seed_market_history(legacy, seed=7, deals=30, now=NOW)
    made = Deal.objects.filter(account=legacy).count()
    assert made > 10 and retire_legacy_history() == made
    assert not Account.objects.filter(slug=LEGACY_HISTORY_ACCOUNT_SLUG).exists()
    assert not Placement.objects.filter(deal__account_id=legacy.pk).exists()
    assert retire_legacy_history() == 0
    # An account of that name with members is someone's: left alone.
    legacy = Account.objects.create(name="Market History (demo)", slug=LEGACY_HISTORY_ACCOUNT_SLUG)
    Membership.objects.create(account=legacy, user=get_user_model().objects.create(username="someone"))
    assert retire_legacy_history() == 0 and Account.objects.filter(pk=legacy.pk).exists()


def test_the_history_keeps_the_workflows_rules(directory, account):
    seed_market_history(account, seed=7, deals=80, now=NOW)
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


def test_the_signals_come_from_the_history(directory, account):
    seed_market_history(account, seed=7, deals=80, now=NOW)
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


def test_the_demo_deals_search_learns_from_the_demo_accounts_own_history():
    """seed_demo: the demo deal's stored search ranks with evidence from the demo account's own past
    placements (no other account's), its lenders differing in score and sizing."""
    call_command("seed_demo", "--lenders", "200", stdout=StringIO())
    assert not Account.objects.filter(slug=LEGACY_HISTORY_ACCOUNT_SLUG).exists()
    assert set(Deal.objects.values_list("account__slug", flat=True)) == {"demo-capital"}
    deal = Deal.objects.get(title="Riverside Apartments Refinance")
    search = LenderSearch.objects.filter(deal=deal, status="completed").latest("id")
    matches = list(LenderMatch.objects.filter(search=search).order_by("rank"))
    top = matches[:10]
    assert len({m.score for m in top}) >= 5
    assert sum(m.score_parts["evidence"] != "none" for m in top) >= 5
    lines = [line for m in top for line in m.match_insights]
    assert sum(line.startswith("Quoted ") and "similar multifamily deals in TX" in line for line in lines) >= 3
    everywhere = [line for m in matches for line in m.match_insights]
    assert any(line.startswith("Declined ") for line in everywhere)
    assert any(line.startswith("No answer on the last ") for line in everywhere)
    sized = [m.sizing for m in top if m.sizing]
    assert len({s["max_loan"] for s in sized}) >= 3 and {s["rate_source"] for s in sized} >= {"program", "deal"}
    # A second run makes nothing new and keeps the search.
    placements = Placement.objects.count()
    call_command("seed_demo", "--lenders", "200", stdout=StringIO())
    assert Placement.objects.count() == placements
    assert LenderSearch.objects.filter(deal=deal).latest("id").pk == search.pk
