"""Who will quote this deal, and for how much: the stated programs as the prior, the account's own
outcomes as the update, the loan sized per program.

A lender's score (0-100) is the predicted chance, in percent, that it quotes this deal at a size that
covers the ask (or as near as it comes):

1. **Prior, from the stated programs.** `prior(fit) = PRIOR_FLOOR + PRIOR_SPAN x fit`, where `fit` is
   the program fit of `scoring` (loan size, capital source, leverage and coverage headroom). With no
   history this alone orders the lenders, exactly as the fit did before (the cold start).
2. **Sizing.** Each candidate program is sized as an underwriter sizes (`sizing.size_loan`); a program
   that cannot cover the ask is discounted by `(max_loan / ask) ** SIZING_POWER`. A lender's best
   program is the one with the best prior x sizing.
3. **Evidence, shrunk to the prior** (`update`): the lender's decayed quote rate over the account's
   placements, `(quoted + PRIOR_STRENGTH x prior) / (placed + PRIOR_STRENGTH)`, then moved by its
   rate for each feature this deal shares with past ones (asset type, state, region, size band, loan
   and transaction type, business plan, leverage and coverage bands), each shrunk to the overall rate
   with FEATURE_STRENGTH pseudo-placements and added on the log-odds scale with the feature's weight.
   One quote is not a sure thing: with little evidence the score stays near the prior. Declines and
   unanswered placements count against, as they should. Pooled figures of other accounts (only where
   3 or more accounts stand behind them: `evidence.pool`) count at POOL_SHARE of their weight.
4. **Beyond the box.** Each past placement is filed as inside or outside the lender's stated programs
   (`evidence`, by the hard filters). A lender whose record says it quotes such deals — it quoted deals
   of this asset type, or it quotes outside its box (at least OUTSIDE_MIN_QUOTED such quotes, at
   OUTSIDE_MIN_RATE or better) — is a candidate even when no stated program passes the hard filters:
   its base is its record outside the box, shrunk to OUTSIDE_PRIOR, the deal's features move it at
   OUTSIDE_FEATURE_SCALE, and it is marked `outside_box`.

Why this method and not a trained model: it is the simplest that wins the back-test
(docs/ranking.md), needs no training step or library, says in words why a lender moved, and falls back
to the stated programs by construction. Where it runs: the database scores every candidate program's
fit and returns the best `limit` lenders by prior (`sql_scoring.top_lenders`, one statement at 1M
programs), then by a second statement over the lender index the best fit of every lender the account's
evidence names; this module re-scores the top `limit` in Python, then the evidence's lenders: those
beyond the box from their record alone, the others only where an upper bound of their score
(`update_bound`, from their best fit) can still reach the N-th best so far — the evidence of one account
names a few thousand lenders, and most cannot. A lender outside the top `limit` by prior and without
evidence is not re-scored (only its sizing could lift it, and at the default N of 1,000 that is past any
page a broker reads).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from deals.searches.ranking import evidence as ev
from deals.searches.ranking import scoring, sizing
from deals.searches.ranking.criteria import DealCriteria
from deals.searches.ranking.filters import candidate_programs
from deals.searches.ranking.scoring import ProgramFit, ProgramRow
from deals.searches.ranking.sql_scoring import top_lenders

PRIOR_FLOOR = 0.03
PRIOR_SPAN = 0.47
OUTSIDE_PRIOR = 0.03
PRIOR_STRENGTH = 4.0
FEATURE_STRENGTH = 3.0
POOL_SHARE = 0.5
SIZING_POWER = 2.0
OUTSIDE_MIN_QUOTED = 1.0
OUTSIDE_MIN_RATE = 0.25
OUTSIDE_FEATURE_SCALE = 0.25
FEATURE_GAIN = 3.0
DIMENSION_WEIGHTS = {
    "asset_type": 1.0, "asset_state": 0.6, "state": 0.4, "region": 0.3, "size": 0.7, "loan_type": 0.5,
    "transaction_type": 0.3, "business_plan": 0.5, "leverage": 0.5, "coverage": 0.5,
}
_EPS = 1e-4


def prior(fit: float) -> float:
    """The chance of a quote the stated programs alone give: monotone in the program fit."""
    return PRIOR_FLOOR + PRIOR_SPAN * fit


def _logit(p: float) -> float:
    p = min(1 - _EPS, max(_EPS, p))
    return math.log(p / (1 - p))


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def combined(evidence: ev.Evidence | None, lender_id: int) -> ev.Tallies:
    """The lender's own tallies, plus the pooled ones at POOL_SHARE of their weight."""
    if evidence is None:
        return {}
    own, pooled = evidence.own.get(lender_id, {}), evidence.pooled.get(lender_id, {})
    if not pooled:
        return own
    out = dict(own)
    for key, p in pooled.items():
        out[key] = own.get(key, ev.Tally()).plus(p, POOL_SHARE)
    return out


def update(p0: float, tallies: ev.Tallies, features: list[tuple[str, str]], *,
           box: str = ev.INSIDE) -> tuple[float, float]:
    """(the chance of a quote after the evidence, the evidence's weight in placements). `box`: whether
    the lender's stated programs take this deal; its record on deals inside (or outside) its box is the
    base the deal's features then move."""
    overall = tallies.get((ev.ALL, ""))
    if overall is None or overall.sent <= 0:
        return p0, 0.0
    same_box = tallies.get((ev.BOX, box))
    if same_box is None and box == ev.INSIDE:
        same_box = overall  # a lender whose programs could not be read back: its whole record
    base = p0 if same_box is None else (same_box.quoted + PRIOR_STRENGTH * p0) / (same_box.sent + PRIOR_STRENGTH)
    shift = 0.0
    by_dimension: dict[str, list[float]] = defaultdict(list)
    for dimension, value in features:
        if dimension in (ev.ALL, ev.BOX):
            continue
        t = tallies.get((dimension, value))
        if t is None or t.sent <= 0:
            continue
        rate = (t.quoted + FEATURE_STRENGTH * base) / (t.sent + FEATURE_STRENGTH)
        by_dimension[dimension].append(_logit(rate) - _logit(base))
    scale = 1.0 if box == ev.INSIDE else OUTSIDE_FEATURE_SCALE
    weights = 0.0
    for dimension, deltas in by_dimension.items():
        weight = DIMENSION_WEIGHTS.get(dimension, 0.0)
        shift += weight * sum(deltas) / len(deltas)
        weights += weight
    # The features of one past deal move together (its asset type, state, size… are one record): their
    # weighted shifts add up to at most FEATURE_GAIN features' worth, not one per feature.
    if weights > FEATURE_GAIN:
        shift *= FEATURE_GAIN / weights
    return _sigmoid(_logit(base) + scale * shift), overall.sent


def sizing_factor(result: sizing.Sizing | None) -> float:
    if result is None or result.max_loan is None or not result.shortfall:
        return 1.0
    ask = result.max_loan + result.shortfall
    return max(0.0, min(1.0, result.max_loan / ask)) ** SIZING_POWER if ask > 0 else 1.0


@dataclass
class Prediction:
    lender_id: int
    score: float  # 0-100, unrounded (the order)
    fit: float  # the best program's fit, 0-1 (0 beyond the box)
    prior: float  # the chance of a quote from the stated programs alone
    chance: float  # after the evidence, before sizing
    sizing_factor: float
    evidence_weight: float  # the (decayed) placements behind the evidence
    programs: list[tuple[ProgramFit, ProgramRow]] = field(default_factory=list)  # best first
    sizing: sizing.Sizing | None = None  # of the best program
    outside_box: bool = False
    capital_source: str = ""
    tallies: ev.Tallies = field(default_factory=dict)  # the account's own, for the insights
    pooled: ev.Tallies = field(default_factory=dict)

    def score_parts(self) -> dict[str, Any]:
        """The score in parts a broker reads: the stated programs' fit and prior, the sizing, the evidence
        and how much of it there is."""
        level = ("none" if self.evidence_weight <= 0 else "thin" if self.evidence_weight < 3
                 else "some" if self.evidence_weight < 10 else "strong")
        return {
            "program_fit": round(100 * self.fit), "stated_chance": round(100 * self.prior),
            "evidence_chance": None if self.evidence_weight <= 0 else round(100 * self.chance),
            "sizing": round(100 * self.sizing_factor), "evidence_placements": round(self.evidence_weight, 1),
            "evidence": level,
        }


@dataclass
class Ranking:
    predictions: list[Prediction]
    total_lenders: int  # every eligible lender (stated programs), plus the candidates beyond the box
    total_candidates: int  # every program that passed the hard filters
    outside_box: int = 0
    scored: int = 0  # lenders whose programs were read and sized (the top N by prior and those not pruned)


ROW_FIELDS = ("id", "lender_id", "title", "min_loan_float", "max_loan_float", "loan_type_mask", "state_mask",
              "capital_source_type", "max_ltv_float", "min_dscr_float")
# What sizing reads beyond the row's own columns (its max LTV, min DSCR and max loan are the row's).
TERM_FIELDS = ("min_debt_yield", "rate_type", "rate_index", "spread_min_bps", "spread_max_bps", "fixed_rate_min",
               "fixed_rate_max", "amortization_years", "interest_only_months", "term_months_max")


def fetch_programs(criteria: DealCriteria, lender_ids: list[int]) -> list[tuple[ProgramRow, sizing.SizingTerms]]:
    """The candidate programs (every hard filter passed) of the given lenders, each with what sizing
    reads of it: one query per IDS_PER_QUERY lenders."""
    programs: list[tuple[ProgramRow, sizing.SizingTerms]] = []
    width = len(ROW_FIELDS)
    for ids in ev.chunks(lender_ids):
        # Amounts and limits as their float copies, so the columns arrive as plain Python values: the
        # ORM's query, run on a raw cursor to skip its per-row converters.
        query = candidate_programs(criteria).filter(lender_id__in=ids).values_list(*ROW_FIELDS, *TERM_FIELDS).query
        sql, params = query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            for values in cursor.fetchall():
                row = ProgramRow._make(values[:width])
                (min_dy, rate_type, index, spread_min, spread_max, fixed_min, fixed_max, amortization, io,
                 term) = values[width:]
                programs.append((row, sizing.SizingTerms(
                    max_ltv=row.max_ltv, min_dscr=row.min_dscr, min_debt_yield=_float(min_dy),
                    max_loan_amount=row.max_loan_amount, rate_type=rate_type or "", rate_index=index or "",
                    spread_min_bps=spread_min, spread_max_bps=spread_max, fixed_rate_min=_float(fixed_min),
                    fixed_rate_max=_float(fixed_max), amortization_years=amortization, interest_only_months=io,
                    term_months=term)))
    return programs


def fetch_candidates(criteria: DealCriteria, lender_ids: list[int]) -> list[ProgramRow]:
    """The candidate programs of the given lenders, without their terms."""
    return [row for row, _terms in fetch_programs(criteria, lender_ids)]


def _float(value) -> float | None:
    return None if value is None else float(value)


def sizing_deal(criteria: DealCriteria) -> sizing.SizingDeal:
    """What sizing reads of the deal, from the search's criteria."""
    return sizing.SizingDeal(
        ask=criteria.loan_amount, value=criteria.value, noi=criteria.noi, loan_type=criteria.loan_type,
        interest_rate=criteria.interest_rate, amortization_years=criteria.amortization_years,
        interest_only_months=criteria.interest_only_months)


def _outside_box(tallies: ev.Tallies, criteria: DealCriteria) -> bool:
    """Its own record says it quotes deals like this one beyond its stated programs: it quoted deals of
    this asset type (inside its box or not), or it quotes outside its box (at least OUTSIDE_MIN_QUOTED
    such quotes, time-weighted, at OUTSIDE_MIN_RATE of such placements or better)."""
    if any(tallies[key].quoted > 0 for key in (("asset_type", a) for a in criteria.asset_types) if key in tallies):
        return True
    t = tallies.get((ev.BOX, ev.OUTSIDE))
    return t is not None and t.quoted >= OUTSIDE_MIN_QUOTED and t.quoted / t.sent >= OUTSIDE_MIN_RATE


def update_bound(p_low: float, p_high: float, tallies: ev.Tallies, features: list[tuple[str, str]]) -> float:
    """An upper bound of `update(p0, tallies, features)` (inside the box) over every prior p0 in
    [p_low, p_high], without knowing which program — so which p0 — a lender's best will be.

    `update`'s log-odds are `(1 - c·W)·logit(base) + c·Σ_d w_d·mean_i logit(rate_i)`, where `base` and
    every `rate_i` grow with p0, W is the weight of the dimensions with evidence and c = min(1,
    FEATURE_GAIN / W) does not depend on p0. Each term is bounded at the end of the range where it is
    largest: the rates at p_high, the base at p_high when its coefficient is positive, else at p_low.
    The sum of the terms' maxima is at least the maximum of their sum."""
    overall = tallies.get((ev.ALL, ""))
    if overall is None or overall.sent <= 0:
        return p_high
    same_box = tallies.get((ev.BOX, ev.INSIDE)) or overall

    def base(p0: float) -> float:
        return (same_box.quoted + PRIOR_STRENGTH * p0) / (same_box.sent + PRIOR_STRENGTH)

    high = base(p_high)
    rates: dict[str, list[float]] = defaultdict(list)
    for dimension, value in features:
        if dimension in (ev.ALL, ev.BOX):
            continue
        t = tallies.get((dimension, value))
        if t is not None and t.sent > 0:
            rates[dimension].append(_logit((t.quoted + FEATURE_STRENGTH * high) / (t.sent + FEATURE_STRENGTH)))
    weights = sum(DIMENSION_WEIGHTS.get(dimension, 0.0) for dimension in rates)
    c = FEATURE_GAIN / weights if weights > FEATURE_GAIN else 1.0
    coefficient = 1.0 - c * weights
    log_odds = coefficient * _logit(high if coefficient >= 0 else base(p_low))
    for dimension, logits in rates.items():
        log_odds += c * DIMENSION_WEIGHTS.get(dimension, 0.0) * sum(logits) / len(logits)
    return _sigmoid(log_odds)


# A bound is compared with a score computed in another order of operations (and the SQL statement's fit
# with Python's): it must clear the N-th score by more than rounding before a lender is passed over.
BOUND_MARGIN = 1e-9


def rank_search(criteria: DealCriteria, *, evidence: ev.Evidence | None, limit: int,
                index_rates: dict[str, float] | None = None, prune: bool = True) -> Ranking:
    """The best `limit` lenders for the deal, best first, with the counts of the whole ranking.
    `evidence` None: the stated programs only.

    Which lenders are scored in full (their candidate programs read, each sized, the evidence applied):
    the best `limit` by prior (the SQL statement), then of the lenders the evidence names, those beyond
    the box (no candidate program: nothing to read) and those whose score can still reach the N-th best
    so far (`update_bound` from the best fit `top_lenders` returns for them). `prune` False scores
    every lender the evidence names in full: the reference the tests hold the pruned ranking to."""
    limit = max(1, limit)
    named = sorted(evidence.lenders()) if evidence is not None else []
    top = top_lenders(criteria, limit, also=named)
    ids = [lender_id for lender_id, _raw, _n in top.lenders]
    listed = set(ids)
    context = _Context(criteria, evidence, index_rates if index_rates is not None else {})
    predictions = context.score(ids)
    outside = 0
    beyond = [lender_id for lender_id in named if lender_id not in listed and lender_id not in top.also]
    for lender_id in beyond:
        tallies = context.tallies(lender_id)
        if tallies and _outside_box(tallies, criteria):
            chance, weight = update(OUTSIDE_PRIOR, tallies, context.features, box=ev.OUTSIDE)
            outside += 1
            predictions.append(Prediction(
                lender_id, 100.0 * chance, 0.0, OUTSIDE_PRIOR, chance, 1.0, weight, [], None, True, "",
                evidence.own.get(lender_id, {}), evidence.pooled.get(lender_id, {})))
    others = [lender_id for lender_id in named if lender_id not in listed and lender_id in top.also]
    if prune and len(predictions) >= limit:
        nth = sorted((p.score for p in predictions), reverse=True)[limit - 1]
        others = [lender_id for lender_id in others
                  if 100.0 * update_bound(PRIOR_FLOOR, prior(min(1.0, top.also[lender_id][0] / 100.0 + BOUND_MARGIN)),
                                          context.tallies(lender_id), context.features) >= nth - BOUND_MARGIN]
    predictions += context.score(others)
    predictions.sort(key=lambda p: (-p.score, p.lender_id))
    return Ranking(predictions[:limit], top.total_lenders + outside, top.total_candidates, outside,
                   len(ids) + len(others))


class _Context:
    """What scoring a lender in full reads of the deal (once a search)."""

    def __init__(self, criteria: DealCriteria, evidence: ev.Evidence | None, rates: dict[str, float]):
        self.criteria, self.evidence, self.rates = criteria, evidence, rates
        self.deal = sizing_deal(criteria)
        self.features = ev.criteria_features(criteria)
        self._tallies: dict[int, ev.Tallies] = {}

    def tallies(self, lender_id: int) -> ev.Tallies:
        """`combined` of the lender, once a search (the bound and the full score both read it)."""
        found = self._tallies.get(lender_id)
        if found is None:
            found = self._tallies[lender_id] = combined(self.evidence, lender_id)
        return found

    def score(self, lender_ids: list[int]) -> list[Prediction]:
        """The lenders' predictions from their candidate programs (a lender without one is left out)."""
        if not lender_ids:
            return []
        criteria, evidence = self.criteria, self.evidence
        by_lender: dict[int, list[tuple[ProgramRow, sizing.SizingTerms]]] = defaultdict(list)
        for row, terms in fetch_programs(criteria, lender_ids):
            by_lender[row.lender_id].append((row, terms))
        amount, plan, ltv, dscr = criteria.loan_amount, criteria.business_plan, criteria.ltv, criteria.dscr
        predictions = []
        for lender_id in lender_ids:
            programs = by_lender.get(lender_id)
            if not programs:
                continue
            scored = []
            for row, terms in programs:
                fit = scoring.program_fit(amount=amount, business_plan=plan, ltv=ltv, dscr=dscr, row=row)
                sized = sizing.size_loan(terms, self.deal, index_rates=self.rates)
                scored.append((prior(fit.fit) * sizing_factor(sized), fit, row, sized))
            scored.sort(key=lambda item: (-item[0], -item[1].fit, item[2].id))
            _best, fit, row, sized = scored[0]
            p0, factor = prior(fit.fit), sizing_factor(sized)
            chance, weight = update(p0, self.tallies(lender_id), self.features)
            predictions.append(Prediction(
                lender_id, 100.0 * chance * factor, fit.fit, p0, chance, factor, weight,
                [(f, r) for _p, f, r, _s in scored], sized, False, row.capital_source_type,
                evidence.own.get(lender_id, {}) if evidence else {},
                evidence.pooled.get(lender_id, {}) if evidence else {}))
        return predictions


def rank(criteria: DealCriteria, *, evidence: ev.Evidence | None, limit: int,
         index_rates: dict[str, float] | None = None) -> list[Prediction]:
    """`rank_search`'s lenders alone (the back-test's call)."""
    return rank_search(criteria, evidence=evidence, limit=limit, index_rates=index_rates).predictions
