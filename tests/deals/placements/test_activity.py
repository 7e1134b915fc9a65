"""Lender activity signals recomputed from placements and term sheets (deals.placements.activity): the counts,
the 90-day window, the median response time, markets from the deal's property states, the scores,
and the ranking reading them. Runs on SQLite and PostgreSQL alike (the same SQL)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from deals.models import Placement, TermSheet
from deals.placements.activity import lender_activity_recompute
from deals.placements.tasks import refresh_lender_activity
from lenders.activity import activity_score
from lenders.models import LenderActivity
from tests.deals.searches.factories import LenderActivityFactory, lender_with
from tests.factories import DealFactory, DealPropertyFactory, LenderFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_jobs")]  # jobs in-process, as under tests/lenders

NOW = dt.datetime(2026, 11, 22, 12, 0, tzinfo=dt.UTC)


def ago(days: float = 0, hours: float = 0) -> dt.datetime:
    return NOW - dt.timedelta(days=days, hours=hours)


def deal_in(account, *states: str):
    deal = DealFactory(account=account)
    for state in states:
        DealPropertyFactory(deal=deal, state=state)
    return deal


def placement(deal, lender, *, sent: dt.datetime | None, answered_after_h: float | None = None,
              status: str = "reviewing", decided: dt.datetime | None = None) -> Placement:
    return Placement.objects.create(
        deal=deal, lender=lender, status=status, sent_at=sent, decided_at=decided, created_at=sent or NOW,
        first_response_at=sent + dt.timedelta(hours=answered_after_h) if answered_after_h is not None else None,
    )


def term_sheet(p: Placement, received: dt.datetime, *, deleted: bool = False) -> TermSheet:
    return TermSheet.objects.create(placement=p, deal=p.deal, loan_amount=Decimal("1000000"), rate_type="fixed",
                                    fixed_rate=Decimal("6"), received_at=received,
                                    deleted_at=received if deleted else None)


def row(lender, state) -> tuple | None:
    found = LenderActivity.objects.filter(lender=lender, state=state).values_list(
        "quotes_90d", "closings_90d", "avg_response_hours").first()
    return found


def test_counts_window_and_median_per_market(account):
    lender, other = LenderFactory(), LenderFactory()
    tx, tx_fl = deal_in(account, "TX"), deal_in(account, "TX", "FL", "TX")
    # Quoted in the window, twice on one placement: one quote. Answered after 2 h.
    quoted = placement(tx, lender, sent=ago(20), answered_after_h=2, status="quoted")
    term_sheet(quoted, ago(19))
    term_sheet(quoted, ago(10))
    # Won in the window (its deal is in TX and FL): a quote and a closing in both markets. Answered after 4 h.
    won = placement(tx_fl, lender, sent=ago(40), answered_after_h=4, status="won", decided=ago(5))
    term_sheet(won, ago(30))
    # Answered after 30 h, declined: no quote, no closing, but a response time.
    placement(deal_in(account, "TX"), lender, sent=ago(60), answered_after_h=30, status="declined",
              decided=ago(58))
    # Outside the window: answered and quoted 100 days ago, won 95 days ago.
    old = placement(deal_in(account, "TX"), lender, sent=ago(101), answered_after_h=1, status="won", decided=ago(95))
    term_sheet(old, ago(100))
    # A removed quote counts for nothing (its placement answered outside the window).
    removed = placement(deal_in(account, "TX"), lender, sent=ago(200), answered_after_h=1, status="quoted")
    term_sheet(removed, ago(3), deleted=True)
    # Never answered: no response time.
    placement(deal_in(account, "TX"), lender, sent=ago(10), status="no_response")
    # Another lender, a market of its own.
    theirs = placement(deal_in(account, "CA"), other, sent=ago(3), answered_after_h=10, status="quoted")
    term_sheet(theirs, ago(2))
    LenderActivityFactory(lender=lender, state="NY", quotes_90d=40)  # a stale row: no activity there now

    assert lender_activity_recompute(now=NOW) == 3
    # TX: quotes from `quoted` and `won`; closing `won`; response times 2, 4, 30 h -> median 4.
    assert row(lender, "TX") == (2, 1, 4.0)
    assert row(lender, "FL") == (1, 1, 4.0)
    assert row(other, "CA") == (1, 0, 10.0)
    assert row(lender, "NY") is None
    assert LenderActivity.objects.count() == 3
    for activity in LenderActivity.objects.all():
        assert activity.score == pytest.approx(activity_score(activity.quotes_90d, activity.closings_90d,
                                                              activity.avg_response_hours))


def test_the_median_of_an_even_count_is_the_mean_of_the_middle_two(account):
    lender = LenderFactory()
    for hours in (30, 2, 10, 4):
        placement(deal_in(account, "OH"), lender, sent=ago(10), answered_after_h=hours)
    lender_activity_recompute(now=NOW)
    assert row(lender, "OH") == (0, 0, 7.0)


def test_the_window_is_ninety_days_back_from_now(account):
    lender = LenderFactory()
    p = placement(deal_in(account, "TX"), lender, sent=ago(89, hours=23), answered_after_h=1, status="won",
                  decided=ago(89, hours=20))
    term_sheet(p, ago(89, hours=21))
    lender_activity_recompute(now=NOW)
    assert row(lender, "TX") == (1, 1, 1.0)
    lender_activity_recompute(now=NOW + dt.timedelta(days=1))
    assert row(lender, "TX") is None


def test_a_recompute_is_idempotent_and_deals_without_a_state_count_nowhere(account):
    lender = LenderFactory()
    p = placement(deal_in(account, "TX"), lender, sent=ago(3), answered_after_h=5, status="quoted")
    term_sheet(p, ago(2))
    stateless = placement(deal_in(account, ""), lender, sent=ago(3), answered_after_h=1, status="quoted")
    term_sheet(stateless, ago(2))
    assert lender_activity_recompute(now=NOW) == 1
    first = list(LenderActivity.objects.values_list("lender_id", "state", "quotes_90d", "closings_90d",
                                                    "avg_response_hours", "score"))
    assert lender_activity_recompute(now=NOW) == 1
    assert list(LenderActivity.objects.values_list("lender_id", "state", "quotes_90d", "closings_90d",
                                                   "avg_response_hours", "score")) == first
    assert first[0][2:5] == (1, 0, 5.0)


def test_the_task_recomputes_from_placements(account):
    lender = LenderFactory()
    p = placement(deal_in(account, "TX"), lender, sent=timezone.now() - dt.timedelta(days=1), answered_after_h=3,
                  status="won", decided=timezone.now())
    term_sheet(p, timezone.now())
    assert refresh_lender_activity() == 1
    assert row(lender, "TX") == (1, 1, 3.0)


def test_each_account_s_activity_is_its_own(account, other_account):
    """Account A places one Wyoming deal with a lender and closes it: the row is A's alone, and account B
    has none (issue 37: B's ranking and lender page showed A's deal flow)."""
    program = lender_with("Busy Bank")
    p = placement(deal_in(account, "WY"), program.lender, sent=timezone.now() - dt.timedelta(days=2),
                  answered_after_h=6, status="won", decided=timezone.now())
    term_sheet(p, timezone.now() - dt.timedelta(days=1))
    lender_activity_recompute()
    row = LenderActivity.objects.get()
    assert (row.account_id, row.lender_id, row.state, row.quotes_90d, row.closings_90d) == (
        account.pk, program.lender_id, "WY", 1, 1)
    assert not LenderActivity.objects.filter(account=other_account).exists()
