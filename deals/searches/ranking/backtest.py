"""The ranking's back-test: would it have put first the lenders that really quoted?

Given an account and a split date, the evidence is what the account's own placements said by then
(`evidence.learn(account_id, as_of=split)`). Each deal of the account placed at or after the split with
at least one quote is a test case; its *relevant* lenders are those that quoted it (a live term sheet
on a placement sent at or after the split). Each deal is ranked three ways:

* `product` — the ranking with the account's evidence (`predict.rank(criteria, evidence=evidence)`);
* `stated programs only` — the cold start (`predict.rank(criteria, evidence=None)`): fit of each
  lender's best stated program;
* `random` — a seeded shuffle of every lender the stated programs make eligible (the cold start's whole
  list, `rank(criteria, evidence=None, limit=RANDOM_POOL)`), not of the lenders placed on the deal:
  the placed set is chosen after the fact and already knows who was worth asking, which no ranking
  could know when the deal came in.

and scored with recall@k and NDCG@k (binary relevance), averaged over the deals. The metric
functions are pure (tests/deals/searches/test_backtest.py works them by hand).
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from django.db.models import Prefetch

from deals.models import Deal, DealProperty, Placement, TermSheet
from deals.searches.ranking.criteria import DealCriteria, criteria_from_deal, missing_for_search
from deals.searches.ranking.evidence import learn
from deals.searches.ranking.predict import rank

DEFAULT_K = 10
# The random baseline's pool: every lender eligible under the stated programs (far more than a deal has).
RANDOM_POOL = 100_000
METHODS = ("product", "stated programs only", "random")


def recall_at_k(ranked: Sequence[int], relevant: Iterable[int], k: int) -> float:
    """|top k ∩ relevant| / |relevant|. `ranked` holds each lender once; `relevant` must not be empty."""
    relevant = set(relevant)
    if not relevant:
        raise ValueError("recall is undefined without relevant lenders")
    return len(set(ranked[:k]) & relevant) / len(relevant)


def ndcg_at_k(ranked: Sequence[int], relevant: Iterable[int], k: int) -> float:
    """DCG of the top k (1 / log2(rank + 1) per relevant lender) over the ideal DCG, which puts
    min(k, |relevant|) relevant lenders first. `ranked` holds each lender once; `relevant` not empty."""
    relevant = set(relevant)
    if not relevant:
        raise ValueError("NDCG is undefined without relevant lenders")
    dcg = sum(1 / math.log2(rank + 2) for rank, lender in enumerate(ranked[:k]) if lender in relevant)
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(k, len(relevant))))
    return dcg / ideal


@dataclass(frozen=True)
class HeldOutDeal:
    """A deal placed at or after the split: what the ranking sees, and who really quoted it."""

    deal_id: int
    criteria: DealCriteria
    relevant: frozenset[int]  # lender ids


@dataclass(frozen=True)
class MethodScore:
    method: str
    recall: float  # mean recall@k over the deals
    ndcg: float  # mean NDCG@k over the deals


@dataclass(frozen=True)
class CalibrationBand:
    """Placements after the split whose lender the product scored in [low, high): how many, the mean
    predicted chance of a quote (the score / 100) and the share that really quoted."""

    low: int
    high: int
    placements: int
    predicted: float
    quoted: float


@dataclass(frozen=True)
class BacktestResult:
    k: int
    deals: int
    scores: tuple[MethodScore, ...]
    calibration: tuple[CalibrationBand, ...] = ()
    brier: dict[str, float] | None = None  # mean squared error of the chance, per method

    def score(self, method: str) -> MethodScore:
        return next(score for score in self.scores if score.method == method)


Ranker = Callable[[HeldOutDeal], Sequence[int]]


def held_out_deals(account_id: int, split: dt.datetime) -> list[HeldOutDeal]:
    """The account's deals with placements sent at or after `split` and at least one quote on them,
    by deal id, each with the lenders that quoted (three queries and the prefetches)."""
    quoted: dict[int, set[int]] = defaultdict(set)
    rows = (TermSheet.objects.filter(deal__account_id=account_id, deleted_at__isnull=True,
                                     placement__sent_at__gte=split)
            .values_list("deal_id", "placement__lender_id").distinct())
    for deal_id, lender_id in rows:
        quoted[deal_id].add(lender_id)
    deals = (Deal.objects.filter(account_id=account_id, pk__in=quoted).select_related("financials")
             .prefetch_related(Prefetch("properties", queryset=DealProperty.objects.order_by("id")))
             .order_by("id"))
    found = []
    for deal in deals:
        properties = list(deal.properties.all())
        if missing_for_search(deal, properties):  # the ranking cannot rank it: not a test case
            continue
        financials = getattr(deal, "financials", None)
        found.append(HeldOutDeal(deal.pk, criteria_from_deal(deal, properties, financials), frozenset(quoted[deal.pk])))
    return found


def placed_after(account_id: int, split: dt.datetime) -> bool:
    """Whether the account placed anything at or after `split` (to say why there is nothing to test)."""
    return Placement.objects.filter(deal__account_id=account_id, sent_at__gte=split).exists()


def evaluate(deals: Sequence[HeldOutDeal], rankers: dict[str, Ranker], k: int) -> BacktestResult:
    """Each ranker's mean recall@k and NDCG@k over `deals` (not empty)."""
    scores = []
    for method, ranker in rankers.items():
        recalls, ndcgs = [], []
        for deal in deals:
            ranked = list(ranker(deal))[:k]
            recalls.append(recall_at_k(ranked, deal.relevant, k))
            ndcgs.append(ndcg_at_k(ranked, deal.relevant, k))
        scores.append(MethodScore(method, sum(recalls) / len(deals), sum(ndcgs) / len(deals)))
    return BacktestResult(k=k, deals=len(deals), scores=tuple(scores))


def random_ranker(seed: int) -> Ranker:
    """A seeded shuffle of the lenders the stated programs make eligible for the deal (see above)."""
    def ranker(deal: HeldOutDeal) -> list[int]:
        pool = sorted(p.lender_id for p in rank(deal.criteria, evidence=None, limit=RANDOM_POOL))
        random.Random(f"{seed}:{deal.deal_id}").shuffle(pool)
        return pool

    return ranker


def backtest(account_id: int, split: dt.datetime, *, k: int = DEFAULT_K, seed: int = 0) -> BacktestResult | None:
    """The back-test of the account at `split` (see the module docstring); None when no deal placed at
    or after the split has a quote. Reads only: nothing is written."""
    deals = held_out_deals(account_id, split)
    if not deals:
        return None
    evidence = learn(account_id, as_of=split)
    result = evaluate(deals, {
        "product": lambda deal: [p.lender_id for p in rank(deal.criteria, evidence=evidence, limit=k)],
        "stated programs only": lambda deal: [p.lender_id for p in rank(deal.criteria, evidence=None, limit=k)],
        "random": random_ranker(seed),
    }, k)
    bands, brier = calibration(account_id, split, evidence)
    return BacktestResult(result.k, result.deals, result.scores, bands, brier)


CALIBRATION_BANDS = ((0, 10), (10, 20), (20, 40), (40, 60), (60, 80), (80, 101))


def calibration(account_id: int, split: dt.datetime, evidence) -> tuple[tuple[CalibrationBand, ...], dict[str, float]]:
    """Does a score of 60 mean a 60 % chance? Every placement sent at or after the split whose lender the
    ranking scores for its deal (with the evidence, and by the stated programs alone): the score / 100
    beside whether that lender quoted, in bands of the product's score, and each method's Brier score
    (the mean squared error of the chance; lower is better). Placements with lenders the ranking does not
    score (not eligible, no evidence beyond the box) are left out of both."""
    quoted = set(TermSheet.objects.filter(deal__account_id=account_id, deleted_at__isnull=True,
                                          placement__sent_at__gte=split).values_list("placement_id", flat=True))
    placed: dict[int, list[tuple[int, bool]]] = defaultdict(list)
    for placement_id, deal_id, lender_id in Placement.objects.filter(
            deal__account_id=account_id, sent_at__gte=split).values_list("id", "deal_id", "lender_id"):
        placed[deal_id].append((lender_id, placement_id in quoted))
    deals = [deal for deal in held_out_deals(account_id, split) if deal.deal_id in placed]
    pairs: list[tuple[float, float, bool]] = []  # (product chance, stated chance, quoted)
    for deal in deals:
        product = {p.lender_id: p.score / 100 for p in rank(deal.criteria, evidence=evidence, limit=RANDOM_POOL)}
        stated = {p.lender_id: p.score / 100 for p in rank(deal.criteria, evidence=None, limit=RANDOM_POOL)}
        pairs += [(product[lender_id], stated[lender_id], won) for lender_id, won in placed[deal.deal_id]
                  if lender_id in product and lender_id in stated]
    if not pairs:
        return (), {}
    bands = []
    for low, high in CALIBRATION_BANDS:
        inside = [(chance, won) for chance, _stated, won in pairs if low <= 100 * chance < high]
        if inside:
            bands.append(CalibrationBand(low, min(high, 100), len(inside), sum(c for c, _ in inside) / len(inside),
                                         sum(w for _, w in inside) / len(inside)))
    brier = {"product": sum((c - w) ** 2 for c, _s, w in pairs) / len(pairs),
             "stated programs only": sum((s - w) ** 2 for _c, s, w in pairs) / len(pairs)}
    return tuple(bands), brier
