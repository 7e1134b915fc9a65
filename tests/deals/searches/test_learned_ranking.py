"""The learned ranking (issue 37): the account's own outcomes move the stated programs' prior, thin evidence
shrinks to it, the cold start is the stated programs' order, and no account's records reach another's
ranking except through a pooled aggregate of 3 or more accounts, none dominating."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from deals.models import Deal, DealProperty, Placement, TermSheet
from deals.searches.models import LenderMatch, LenderSearch
from deals.searches.ranking import evidence as ev
from deals.searches.ranking import predict
from deals.searches.ranking.criteria import criteria_from_deal
from deals.searches.ranking.sql_scoring import top_lenders
from lenders.models import LenderSignal
from tests.deals.searches.factories import lender_with, make_deal
from tests.factories import AccountFactory

pytestmark = pytest.mark.django_db

NOW = timezone.now()


def matches(search: LenderSearch) -> list[LenderMatch]:
    return list(LenderMatch.objects.filter(search=search).order_by("rank"))


def history(account, lender, outcomes: str, *, asset_type="multifamily", state="TX", days_ago=30,
            amount=Decimal("10000000")) -> None:
    """Past deals of `account`, one per outcome letter, placed with `lender`: q quoted, d declined,
    n never answered; sent `days_ago` days ago (the first letter the most recent)."""
    for n, outcome in enumerate(outcomes):
        sent = NOW - dt.timedelta(days=days_ago + n)
        deal = Deal.objects.create(account=account, title=f"Past {n}", loan_amount=amount, loan_type="permanent",
                                   business_plan="stabilized", stage=account.stages.order_by("position").first(),
                                   archived=True, archived_at=sent)
        DealProperty.objects.create(deal=deal, name="P", state=state, asset_type=asset_type)
        placement = Placement.objects.create(deal=deal, lender=lender, status="sent", sent_at=sent, created_at=sent)
        if outcome == "q":
            placement.status, placement.first_response_at = "quoted", sent + dt.timedelta(days=2)
            TermSheet.objects.create(placement=placement, deal=deal, loan_amount=amount, rate_type="fixed",
                                     fixed_rate=Decimal("6.5"), received_at=sent + dt.timedelta(days=3))
        elif outcome == "d":
            placement.status = "declined"
            placement.first_response_at = placement.decided_at = sent + dt.timedelta(days=1)
        placement.save()


# --- the method, number by number ----------------------------------------------------------------
def test_no_evidence_leaves_the_prior():
    assert predict.update(0.3, {}, [("all", "")]) == (0.3, 0.0)


def test_one_quote_is_not_a_sure_thing_and_more_evidence_moves_further():
    features = [("all", ""), ("asset_type", "multifamily")]

    def chance(quotes: int, sent: int) -> float:
        t = ev.Tally(sent=sent, quoted=quotes)
        return predict.update(0.3, {("all", ""): t, ("asset_type", "multifamily"): t}, features)[0]

    one, five = chance(1, 1), chance(5, 5)
    assert 0.3 < one < five < 1.0
    assert one < 0.6  # shrunk toward the prior: one quote of one placement
    assert chance(0, 5) < 0.3 < chance(3, 5)


def test_outcomes_at_a_moment():
    sent = NOW - dt.timedelta(days=40)
    common = {"sent_at": sent, "first_response_at": None, "decided_at": None, "first_quote_at": None}
    assert ev.outcome_at(status="sent", as_of=NOW, **common) == (ev.NO_ANSWER, False)
    assert ev.outcome_at(status="sent", as_of=sent + dt.timedelta(days=3), **common) is None  # still open then
    quoted = {**common, "first_quote_at": sent + dt.timedelta(days=5), "decided_at": sent + dt.timedelta(days=9)}
    assert ev.outcome_at(status="won", as_of=NOW, **quoted) == (ev.QUOTED, True)
    assert ev.outcome_at(status="won", as_of=sent + dt.timedelta(days=6), **quoted) == (ev.QUOTED, False)
    declined = {**common, "first_response_at": sent + dt.timedelta(days=1), "decided_at": sent + dt.timedelta(days=1)}
    assert ev.outcome_at(status="declined", as_of=NOW, **declined) == (ev.DECLINED, False)


def test_the_pool_needs_three_accounts_and_caps_each():
    big = ev.Tally(sent=100, quoted=100)
    small = ev.Tally(sent=2, quoted=0)
    assert ev.pool([big, small]) is None
    pooled = ev.pool([big, small, ev.Tally(sent=2, quoted=0)])
    assert pooled is not None and pooled.accounts == 3
    # 100 made-up quotes weigh no more than the two others together's half: a third of the whole at most.
    assert pooled.quoted / pooled.sent == pytest.approx(2 / 6)
    assert pooled.sent_12m == pooled.quoted_12m == 0 and pooled.recent == ""  # no account's counts show


# --- ranking through the product -----------------------------------------------------------------
def _order_by_fit(deal) -> list[int]:
    criteria = criteria_from_deal(deal, list(deal.properties.all()), None)
    return [lender_id for lender_id, _raw, _n in top_lenders(criteria, 100).lenders]


def test_cold_start_ranks_as_the_stated_programs_do(account, rank):
    for n, (low, high) in enumerate(((5e6, 20e6), (1e6, 100e6), (9e6, 11e6), (2e6, 12e6))):
        lender_with(f"Lender {n}", min_loan_amount=Decimal(low), max_loan_amount=Decimal(high))
    deal = make_deal(account)
    search = rank(deal)
    assert [m.lender_id for m in matches(search)] == _order_by_fit(deal)
    assert all(m.score_parts["evidence"] == "none" for m in matches(search))


def test_the_accounts_own_outcomes_move_its_ranking(account, rank):
    quoter = lender_with("Quotes Often").lender
    decliner = lender_with("Declines Often").lender
    silent = lender_with("Never Answers").lender
    first = rank(make_deal(account, title="Before"))
    assert len({m.score for m in matches(first)}) == 1  # three identical programs: one score
    history(account, quoter, "qqqq")
    history(account, decliner, "dddd")
    history(account, silent, "nnnn")
    ev.refresh_lender_signals()
    search = rank(make_deal(account, title="After"))
    found = {m.lender_id: m for m in matches(search)}
    assert matches(search)[0].lender_id == quoter.pk
    assert found[quoter.pk].score > matches(first)[0].score > found[decliner.pk].score
    assert found[quoter.pk].score_parts["evidence"] == "some"
    assert "Quoted 4 of 4 similar multifamily deals in TX (last 12 months)" in found[quoter.pk].match_insights[:2]
    assert "Declined 4 of 4 multifamily deals (last 12 months)" in found[decliner.pk].match_insights[:2]
    assert "No answer on the last 4 placements" in found[silent.pk].match_insights[:2]


def test_a_decline_says_the_accounts_own_latest_reason_and_never_another_accounts(account, rank):
    """"Declined 4 of 4 multifamily deals", with the reason the team recorded last for such a deal (an
    imported history's decline_reason); another account's reasons about the same lender are its own."""
    decliner = lender_with("Declines Often").lender
    lender_with("Other")
    history(account, decliner, "dddd")
    history(AccountFactory(name="Rival", slug="rival"), decliner, "d", days_ago=1)
    declined = Placement.objects.filter(lender=decliner, status="declined").order_by("-decided_at")
    rival = declined.exclude(deal__account=account).get()
    rival.decline_reason = "Their private note"
    rival.save()
    newest, older = declined.filter(deal__account=account)[:2]
    older.decline_reason = "Sponsor experience"
    older.save()
    newest.decline_reason = "  Outside   our box  "
    newest.save()
    ev.refresh_lender_signals()
    found = {m.lender_id: m for m in matches(rank(make_deal(account)))}
    lines = found[decliner.pk].match_insights
    assert "Declined 4 of 4 multifamily deals (last 12 months): last reason \u201cOutside our box\u201d" in lines[:2]
    assert not any("private note" in line for m in found.values() for line in m.match_insights)


def test_a_lender_that_quotes_beyond_its_stated_programs_is_a_candidate(account, rank):
    lender_with("In The Box")
    stretcher = lender_with("Stretcher", asset_types=["office"]).lender  # states no multifamily
    history(account, stretcher, "qqqd")
    ev.refresh_lender_signals()
    found = {m.lender_id: m for m in matches(rank(make_deal(account)))}
    assert found[stretcher.pk].outside_box is True
    assert found[stretcher.pk].programs == []
    assert found[stretcher.pk].match_insights[0] == (
        "Quotes outside its stated programs: 3 of 4 similar deals (12 months)")


# --- privacy by construction --------------------------------------------------------------------
def test_another_accounts_history_never_moves_this_accounts_ranking(account, rank):
    """Account B records 20 made-up quotes by one lender; account A's ranking does not move (issue 37:
    rank 27 to rank 12 before)."""
    target = lender_with("Target").lender
    lender_with("Other")
    before = {m.lender_id: m.score for m in matches(rank(make_deal(account, title="A1")))}
    forger = AccountFactory(name="Forger", slug="forger")
    history(forger, target, "q" * 20)
    ev.refresh_lender_signals()
    after = matches(rank(make_deal(account, title="A2")))
    assert {m.lender_id: m.score for m in after} == before
    assert not any("Quoted" in line or "teams" in line for m in after for line in m.match_insights)
    assert LenderSignal.objects.filter(account=account).count() == 0
    assert not LenderSignal.objects.filter(account__isnull=True).exists()  # one account: no pooled row


def test_three_accounts_make_a_pooled_signal_that_no_one_dominates(account, rank):
    target = lender_with("Target").lender
    lender_with("Other")
    accounts = [AccountFactory(name=f"Team {n}", slug=f"team-{n}") for n in range(3)]
    history(accounts[0], target, "q" * 30)  # one team's flood...
    history(accounts[1], target, "dd")
    ev.refresh_lender_signals()
    assert not LenderSignal.objects.filter(account__isnull=True).exists()  # two accounts: nothing pooled
    history(accounts[2], target, "nn")
    ev.refresh_lender_signals()
    pooled = LenderSignal.objects.get(account__isnull=True, lender=target, dimension="all")
    assert pooled.accounts == 3 and pooled.sent_12m == 0
    assert pooled.quoted_weight / pooled.sent_weight <= 1 / 3 + 1e-3  # ...weighs a third at most (4 places)
    found = {m.lender_id: m for m in matches(rank(make_deal(account)))}
    line = [text for text in found[target.pk].match_insights if "teams" in text]
    assert line and line[0].startswith("Across 3+ teams: quotes about")


# --- fresh: a new outcome refreshes the signals soon after, once per window ----------------------------
def test_a_new_outcome_refreshes_the_signals_once_per_window(account, django_capture_on_commit_callbacks):
    from django.core.cache import cache

    from deals.placements.services import placement_update
    from deals.searches import signals

    cache.delete(signals.DEBOUNCE_KEY)
    lender = lender_with("Decliner").lender
    history(account, lender, "q")
    first, second = (Placement.objects.create(deal=make_deal(account, title=f"Live {n}"), lender=lender,
                                              status="sent", sent_at=NOW) for n in range(2))
    with django_capture_on_commit_callbacks(execute=True):
        placement_update(placement=first, data={"status": "declined"})  # jobs in-process: refreshed at once
    overall = LenderSignal.objects.get(account=account, lender=lender, dimension="all")
    assert (overall.quoted_12m, overall.declined_12m) == (1, 1)
    with django_capture_on_commit_callbacks(execute=True):
        placement_update(placement=second, data={"status": "declined"})  # within the window: no second refresh
    assert LenderSignal.objects.get(account=account, lender=lender, dimension="all").declined_12m == 1
    cache.delete(signals.DEBOUNCE_KEY)
    assert signals.refresh_now() > 0  # the periodic refresh picks it up
    assert LenderSignal.objects.get(account=account, lender=lender, dimension="all").declined_12m == 2
