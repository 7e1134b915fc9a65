"""The ranking's back-test (deals.searches.ranking.backtest, `manage.py backtest_ranking`) and the
synthetic market it runs on (bench/market.py): the metrics worked by hand, the command's errors and
table, and a market that is honest — its lenders' true appetite differs from their stated programs,
so a ranking that learns has something to find."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import Counter
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.models import F

from bench.market import SMALL, generate_lenders, seed_market
from deals.management.commands.backtest_ranking import Command
from deals.models import Placement, TermSheet
from deals.searches.ranking.backtest import (
    HeldOutDeal,
    backtest,
    evaluate,
    held_out_deals,
    ndcg_at_k,
    recall_at_k,
)
from deals.searches.ranking.criteria import DealCriteria
from deals.searches.ranking.evidence import learn
from deals.searches.ranking.filters import candidate_programs
from deals.searches.ranking.predict import rank, rank_search
from lenders.models import Lender
from tests.deals.searches.factories import make_deal
from tests.factories import AccountFactory, LenderFactory

# --- the metrics, by hand ---------------------------------------------------------------------------

LOG2_3, LOG2_6 = math.log2(3), math.log2(6)


def test_recall_counts_the_relevant_lenders_in_the_top_k():
    ranked, relevant = [1, 2, 3, 4, 5], {2, 5, 9}
    assert recall_at_k(ranked, relevant, 1) == 0
    assert recall_at_k(ranked, relevant, 3) == pytest.approx(1 / 3)
    assert recall_at_k(ranked, relevant, 5) == pytest.approx(2 / 3)
    assert recall_at_k(ranked, relevant, 50) == pytest.approx(2 / 3)  # a short list is its own top k
    assert recall_at_k([9, 5, 2], relevant, 3) == 1


def test_ndcg_discounts_by_rank_over_the_ideal_of_min_k_relevant():
    ranked, relevant = [1, 2, 3, 4, 5], {2, 5, 9}
    ideal3 = 1 + 1 / LOG2_3 + 1 / 2  # three relevant lenders at ranks 1-3
    # 2 at rank 2, 5 at rank 5: 1/log2(3) + 1/log2(6) over the ideal of 3 = 1.01778 / 2.13093.
    assert ndcg_at_k(ranked, relevant, 5) == pytest.approx((1 / LOG2_3 + 1 / LOG2_6) / ideal3)
    assert ndcg_at_k(ranked, relevant, 5) == pytest.approx(0.47762, abs=1e-5)
    assert ndcg_at_k(ranked, relevant, 3) == pytest.approx((1 / LOG2_3) / ideal3)
    assert ndcg_at_k(ranked, relevant, 1) == 0
    assert ndcg_at_k([9, 2, 5, 1], relevant, 3) == pytest.approx(1)
    # More relevant lenders than k: the ideal is k of them, so a full top k scores 1 (recall does not).
    assert ndcg_at_k([1, 2], {1, 2, 3}, 2) == pytest.approx(1)
    assert recall_at_k([1, 2], {1, 2, 3}, 2) == pytest.approx(2 / 3)
    # The same hits lower down score less.
    assert ndcg_at_k([7, 8, 1, 2], {1, 2}, 4) < ndcg_at_k([1, 2, 7, 8], {1, 2}, 4)


def test_metrics_refuse_a_deal_nobody_quoted():
    with pytest.raises(ValueError):
        recall_at_k([1, 2], set(), 2)
    with pytest.raises(ValueError):
        ndcg_at_k([1, 2], [], 2)


def test_evaluate_averages_each_method_over_the_deals_at_k():
    criteria = DealCriteria(loan_amount=5e6)
    deals = [HeldOutDeal(1, criteria, frozenset({10, 11})), HeldOutDeal(2, criteria, frozenset({20}))]
    ranked = {1: [10, 99, 11], 2: [98, 20, 97]}
    result = evaluate(deals, {"lookup": lambda deal: ranked[deal.deal_id], "nothing": lambda deal: []}, k=2)
    assert (result.k, result.deals) == (2, 2)
    lookup = result.score("lookup")
    # Deal 1: 10 of {10, 11} in the top 2 (11 is third); deal 2: 20 at rank 2.
    assert lookup.recall == pytest.approx((1 / 2 + 1) / 2)
    assert lookup.ndcg == pytest.approx((1 / (1 + 1 / LOG2_3) + (1 / LOG2_3) / 1) / 2)
    assert result.score("nothing").recall == result.score("nothing").ndcg == 0
    assert [score.method for score in result.scores] == ["lookup", "nothing"]


# --- the command's errors ---------------------------------------------------------------------------


def run(*args: str) -> str:
    out = StringIO()
    call_command("backtest_ranking", *args, stdout=out)
    return out.getvalue()


def test_help_says_what_it_does():
    text = Command().create_parser("manage.py", "backtest_ranking").format_help()
    assert "Back-test the lender ranking" in text and "--synthetic" in text and "--split" in text


@pytest.mark.django_db
def test_an_unknown_account_is_named_with_the_slugs_there_are():
    AccountFactory(slug="brokers-east")
    with pytest.raises(CommandError, match=r"No account with slug 'nope'\. Accounts: .*brokers-east"):
        run("--account", "nope", "--split", "2025-07-01")


@pytest.mark.django_db
@pytest.mark.parametrize("split", ["2025-13-01", "yesterday", "01/07/2025"])
def test_a_bad_split_date_says_how_to_write_one(split):
    AccountFactory(slug="brokers-east")
    with pytest.raises(CommandError, match=r"--split: .* is not a date; write YYYY-MM-DD"):
        run("--account", "brokers-east", "--split", split)


@pytest.mark.django_db
def test_account_needs_a_split_and_k_must_be_positive():
    AccountFactory(slug="brokers-east")
    with pytest.raises(CommandError, match="--split is required with --account"):
        run("--account", "brokers-east")
    with pytest.raises(CommandError, match="--k must be a positive"):
        run("--account", "brokers-east", "--split", "2025-07-01", "--k", "0")
    with pytest.raises(CommandError):  # one source of deals: argparse's own message
        run("--account", "brokers-east", "--synthetic")


@pytest.mark.django_db
def test_nothing_to_back_test_without_quoted_deals_after_the_split():
    account = AccountFactory(slug="brokers-east")
    with pytest.raises(CommandError, match=r"nothing to back-test: no placed deals with quotes after 2025-07-01"):
        run("--account", "brokers-east", "--split", "2025-07-01")
    # Placed after the split, and even quoted before it: still nothing to test.
    deal, lender = make_deal(account), LenderFactory()
    placement = Placement.objects.create(deal=deal, lender=lender, status="quoted",
                                         sent_at=dt.datetime(2025, 6, 1, tzinfo=dt.UTC))
    TermSheet.objects.create(placement=placement, deal=deal, loan_amount=Decimal("9000000"), rate_type="fixed",
                             fixed_rate=Decimal("6.1"), received_at=dt.datetime(2025, 6, 5, tzinfo=dt.UTC))
    Placement.objects.create(deal=make_deal(account), lender=lender, status="sent",
                             sent_at=dt.datetime(2025, 8, 1, tzinfo=dt.UTC))
    with pytest.raises(CommandError, match="nothing to back-test"):
        run("--account", "brokers-east", "--split", "2025-07-01")
    assert held_out_deals(account.pk, dt.datetime(2025, 5, 1, tzinfo=dt.UTC))[0].deal_id == deal.pk


# --- the synthetic market -----------------------------------------------------------------------------


@pytest.fixture
def market(db):
    return seed_market(seed=11, **SMALL)


def snapshot(market) -> list[tuple]:
    """The market's history without ids or its tag: what the same seed must write again."""
    rows = (Placement.objects.filter(deal__account=market.account)
            .order_by("deal__title", "lender__website")
            .values_list("deal__title", "deal__loan_amount", "deal__properties__state", "lender__website",
                         "status", "sent_at", "first_response_at", "decided_at"))
    return [(title, amount, state, website.split(".")[0], *rest) for title, amount, state, website, *rest in rows]


def test_the_market_is_written_as_sized_and_a_seed_writes_it_again(market):
    assert (market.lenders, market.past_deals, market.test_deals) == (60, 300, 40)
    assert market.account.slug == "synthetic-market-s11"
    again = seed_market(seed=11, **SMALL)
    assert again.account.slug == "synthetic-market-s11-2"
    assert snapshot(again) == snapshot(market) and len(snapshot(market)) == market.placements
    names = Lender.objects.filter(category="synthetic").values_list("name", flat=True)
    assert len(set(names)) == len(names) == 120  # two markets' lenders, no name twice
    assert generate_lenders(seed=11, count=60) == generate_lenders(seed=11, count=60)
    assert generate_lenders(seed=12, count=60) != generate_lenders(seed=11, count=60)


def test_history_follows_the_workflow_and_the_split(market):
    placements = Placement.objects.filter(deal__account=market.account)
    past, test = placements.filter(sent_at__lt=market.split), placements.filter(sent_at__gte=market.split)
    assert past.count() > 6 * market.past_deals * 0.95 and test.count() > 0
    statuses = Counter(past.values_list("status", flat=True))
    assert set(statuses) == {"quoted", "declined", "no_response", "won", "lost"}
    assert set(test.values_list("status", flat=True)) == {"quoted", "declined", "sent"}
    assert not placements.filter(status__in=["declined", "quoted", "won"], first_response_at__isnull=True).exists()
    assert not placements.filter(status__in=["sent", "no_response"], first_response_at__isnull=False).exists()
    assert not placements.filter(status="declined").exclude(decided_at=F("first_response_at")).exists()
    quoted = TermSheet.objects.filter(deal__account=market.account)
    assert set(quoted.values_list("placement__status", flat=True)) <= {"quoted", "won", "lost"}
    assert not placements.filter(status__in=["quoted", "won"], term_sheets__isnull=True).exists()
    assert quoted.filter(winning=True).count() == statuses["won"]
    assert not quoted.filter(received_at__lt=F("placement__first_response_at")).exists()


def test_stated_programs_agree_with_the_rankings_hard_filters(market):
    """The market's own notion of 'stated box' (which placements and the test set use) is the
    ranking's: for every held-out deal, the market lenders with a program past filters.py."""
    by_id = {lender.pk: lender for lender in Lender.objects.filter(category="synthetic")}
    deals = held_out_deals(market.account.pk, market.split)
    assert len(deals) >= 30
    for deal in deals:
        spec = market.deals[deal.deal_id]
        in_db = set(candidate_programs(deal.criteria).filter(lender__in=by_id).values_list("lender_id", flat=True))
        stated = {lender_id for lender_id in by_id if market.directory[lender_id].stated_fit(spec)}
        assert in_db == stated and stated


def test_true_appetite_differs_from_the_stated_programs(market):
    archetypes = Counter(truth.archetype for truth in market.truth.values())
    assert set(archetypes) == {"honest", "stale", "stretcher", "specialist", "slow"}
    deals = held_out_deals(market.account.pk, market.split)
    beyond = stale_quotes = 0
    for deal in deals:
        spec = market.deals[deal.deal_id]
        beyond += sum(not market.directory[lender_id].stated_fit(spec) for lender_id in deal.relevant)
    for lender_id, truth in market.truth.items():
        if truth.archetype == "stale":
            stale_quotes += TermSheet.objects.filter(placement__lender_id=lender_id).count()
    # Stretchers quote outside their stated box: lenders a stated-only ranking can never find.
    assert beyond >= 5
    # Stale boxes rarely quote, however broad their programs.
    stale_placed = Placement.objects.filter(lender_id__in=[i for i, t in market.truth.items()
                                                           if t.archetype == "stale"]).count()
    assert stale_quotes < 0.08 * stale_placed


# --- on the small market: the command's table, and a benchmark that can show a difference ----------------

ROW = re.compile(r"^(product|stated programs only|random) +(\d\.\d{3}) +(\d\.\d{3}) +(\d+)$", re.MULTILINE)
BAND = re.compile(r"^(\d+)-(\d+) +(\d+) +(\d+)% +(\d+)%$", re.MULTILINE)
BRIER = re.compile(r"Brier score \(lower is better\): product (\d\.\d{3}), stated programs only (\d\.\d{3})")


@pytest.mark.django_db
def test_the_command_backtests_a_synthetic_market_in_three_rows():
    out = run("--synthetic", "--seed", "7")
    assert "Seeded a synthetic market into account 'synthetic-market-s7': 60 lenders, 300 past deals" in out
    assert "recall@10" in out and "NDCG@10" in out
    rows = ROW.findall(out)
    assert [method for method, *_ in rows] == ["product", "stated programs only", "random"]
    deals = {int(count) for *_, count in rows}
    assert len(deals) == 1 and deals.pop() >= 30
    assert all(0 <= float(recall) <= 1 and 0 <= float(ndcg) <= 1 for _, recall, ndcg, _ in rows)
    # Calibration: the placements after the split in bands of the product's score, each with the chance
    # it predicted and the share that quoted; the bands hold every placement counted, and the learned
    # chance is nearer the outcomes than the stated programs' (a lower Brier score).
    bands = BAND.findall(out)
    assert bands and all(0 <= int(predicted) <= 100 and 0 <= int(quoted) <= 100 for *_, predicted, quoted in bands)
    assert [int(low) for low, *_ in bands] == sorted(int(low) for low, *_ in bands)
    product_brier, stated_brier = map(float, BRIER.search(out).groups())
    assert 0 < product_brier < stated_brier < 1
    # The same account by slug at its split: the same table.
    again = run("--account", "synthetic-market-s7", "--split", "2025-07-01", "--seed", "7")
    assert ROW.findall(again) == rows and BAND.findall(again) == bands


def test_the_market_rewards_knowing_the_true_appetite(market):
    """Honest market: stated programs alone miss many of the lenders that quote, and a ranking by the
    market's own true probabilities (the best any learner could do) finds far more of them."""
    deals = held_out_deals(market.account.pk, market.split)
    result = evaluate(deals, {
        "stated": lambda deal: [p.lender_id for p in rank(deal.criteria, evidence=None, limit=10)],
        "truth": lambda deal: market.true_ranking(deal.deal_id, 10),
    }, k=10)
    stated, truth = result.score("stated"), result.score("truth")
    assert stated.recall < 0.6
    assert truth.recall >= stated.recall + 0.3
    assert truth.ndcg >= stated.ndcg + 0.2


# --- the learned ranking on the seeded market (issue 37: at least 0.20 above stated programs) -------------
@pytest.mark.django_db
def test_the_learned_ranking_beats_stated_programs_by_the_margin_on_the_seeded_market():
    """The small market of seed 7 (docs/ranking.md, "Measured"): learning from the account's own
    placements before the split lifts recall@10 at least 0.20 above ranking by stated programs alone,
    and NDCG@10 with it."""
    market = seed_market(seed=7, **SMALL)
    result = backtest(market.account.pk, market.split, k=10, seed=7)
    product, stated = result.score("product"), result.score("stated programs only")
    assert result.deals >= 30
    assert product.recall - stated.recall >= 0.20, result
    assert product.ndcg > stated.ndcg

    # The lenders passed over by their bound (rank_search's pruning) are exactly those that could not
    # have entered the top N: the same ranking, score for score, as scoring every lender in full.
    evidence = learn(market.account.pk, as_of=market.split)
    pruned_some = False
    for deal in held_out_deals(market.account.pk, market.split):
        for limit in (3, 10):
            pruned = rank_search(deal.criteria, evidence=evidence, limit=limit)
            full = rank_search(deal.criteria, evidence=evidence, limit=limit, prune=False)
            assert [(p.lender_id, p.score) for p in pruned.predictions] == [
                (p.lender_id, p.score) for p in full.predictions]
            assert (pruned.total_lenders, pruned.outside_box) == (full.total_lenders, full.outside_box)
            pruned_some |= pruned.scored < full.scored
    assert pruned_some  # the bound did pass lenders over here, so the comparison above tested it


@pytest.mark.django_db
def test_with_no_history_the_ranking_is_the_stated_programs_ranking():
    """Cold start: an account with no placements before the split ranks each deal exactly as the
    stated programs do (never worse than them on a new account)."""
    market = seed_market(seed=7, **SMALL)
    empty = learn(market.account.pk, as_of=market.split - dt.timedelta(days=4000))
    assert not empty.own
    for deal in held_out_deals(market.account.pk, market.split)[:10]:
        assert [p.lender_id for p in rank(deal.criteria, evidence=empty, limit=20)] == [
            p.lender_id for p in rank(deal.criteria, evidence=None, limit=20)]
