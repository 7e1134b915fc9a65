"""The ranking's scores computed in the database: every eligible lender scored in one statement,
and only the best N of them brought back.

`scoring` states the formulas as plain functions (they stay the reference, and score the handful
of programs the insights are written from); this module states the same formulas as database
expressions, term for term and in the same order of operations, so a program scores the same
here as there (tests/deals/searches/test_sql_scoring.py checks it on both databases).

Why in the database: at 1M programs a broad deal has ~170k candidate programs from ~120k lenders.
Fetching them into Python, scoring them there and writing a match for each took 4-6 s; scoring
them where they are and returning the top N takes a fraction of that (bench/bench_ranking.py).
The expressions are Django's (Ln, Greatest, Case...), so the statement runs on SQLite too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Case, F, FloatField, Q, Value, When
from django.db.models.functions import Abs, Greatest, Least, Ln
from django.db.models.lookups import GreaterThanOrEqual

from deals.searches.ranking import scoring
from deals.searches.ranking.criteria import DealCriteria
from deals.searches.ranking.filters import candidate_programs


def _num(value: float) -> Value:
    return Value(float(value), output_field=FloatField())


def loan_size_fit_expression(amount: float):
    """`scoring.loan_size_fit` of the program's range (its float copies: LenderProgram.refresh_masks)."""
    low, high = F("min_loan_float"), F("max_loan_float")
    position = Least(_num(1.0), Greatest(_num(0.0), Ln(_num(amount) / low) / Ln(high / low)))
    return Case(
        When(Q(min_loan_float__isnull=True) | Q(max_loan_float__isnull=True) | Q(min_loan_float__lte=0),
             then=_num(scoring.NEUTRAL)),
        When(max_loan_float__lte=F("min_loan_float"), then=_num(1.0)),
        default=_num(0.25) + _num(0.75) * (_num(1.0) - Abs(_num(2.0) * position - _num(1.0))),
        output_field=FloatField(),
    )


def capital_fit_expression(business_plan: str):
    """`scoring.capital_fit` of the program's capital source."""
    fits = scoring.CAPITAL_FIT.get(business_plan, {}) if business_plan else {}
    if not fits:
        return _num(0.5)
    return Case(*[When(capital_source_type=source, then=_num(fit)) for source, fit in fits.items()],
                default=_num(0.5), output_field=FloatField())


def headroom_fit_expression(headroom, full: float):
    """`scoring.headroom_fit`."""
    return Case(
        When(GreaterThanOrEqual(headroom, _num(0.0)),
             then=_num(0.6) + _num(0.4) * Least(_num(1.0), headroom / _num(full))),
        default=Greatest(_num(0.0), _num(0.4) * (_num(1.0) + headroom / _num(full))),
        output_field=FloatField(),
    )


def program_fit_expression(criteria: DealCriteria):
    """`scoring.program_fit(...).fit` of a LenderProgram row, as one expression."""
    weights = scoring.WEIGHTS
    total = (_num(weights["loan_size"]) * loan_size_fit_expression(criteria.loan_amount)
             + _num(weights["capital"]) * capital_fit_expression(criteria.business_plan))
    weight = weights["loan_size"] + weights["capital"]
    if criteria.ltv is not None:
        leverage = Case(
            When(max_ltv_float__isnull=True, then=_num(scoring.NEUTRAL)),
            default=headroom_fit_expression(F("max_ltv_float") - _num(criteria.ltv), scoring.LTV_HEADROOM_POINTS),
            output_field=FloatField(),
        )
        total = total + _num(weights["leverage"]) * leverage
        weight += weights["leverage"]
    if criteria.dscr is not None:
        coverage = Case(
            When(min_dscr_float__isnull=True, then=_num(scoring.NEUTRAL)),
            default=headroom_fit_expression(_num(criteria.dscr) - F("min_dscr_float"), scoring.DSCR_HEADROOM),
            output_field=FloatField(),
        )
        total = total + _num(weights["coverage"]) * coverage
        weight += weights["coverage"]
    return total / _num(weight)


@dataclass(frozen=True)
class TopLenders:
    """The best lenders of a ranking, best first, and what the whole ranking counted."""

    lenders: list[tuple[int, float, int]]  # (lender id, unrounded score 0-100, matching programs)
    total_lenders: int  # every lender with at least one candidate program
    total_candidates: int  # every program that passed the hard filters
    # Of the lenders asked about (`also`), those with a candidate program: lender id -> (best fit 0-100,
    # matching programs). One asked about and absent here has no program that passes the hard filters.
    also: dict[int, tuple[float, int]] = field(default_factory=dict)


def _id_list(ids: list[int]) -> tuple[str, list]:
    """`lender_id` among `ids` as one SQL condition with one parameter, whatever their number."""
    if connection.vendor == "postgresql":
        return "lender_id = ANY(%s)", [ids]
    return "lender_id IN (SELECT value FROM json_each(%s))", [json.dumps(ids)]


def top_lenders(criteria: DealCriteria, limit: int, *, also: list[int] | tuple[int, ...] = ()) -> TopLenders:
    """Score every candidate program in the database, keep each lender's best fit, and return the best
    `limit` lenders by it (ties by lender id) with the counts over all of them; then, by a second
    statement over the lender index, the best fit of each lender of `also` that has a candidate program
    (the lenders an account's evidence names: `predict.rank_search` bounds their scores with it before
    reading their programs). The first statement is one, whatever the size; the second reads only the
    programs of the lenders asked about (folding it into the first, as a second reference to the
    per-lender aggregate, made PostgreSQL materialise that aggregate and give up its parallel plan: twice
    the time at 1M programs). The fit is the stated programs' prior; the account's evidence and the
    sizing are applied afterwards (`predict`), so nothing learned from any account is read here."""
    fit = program_fit_expression(criteria)
    candidates = candidate_programs(criteria).annotate(fit=fit).values_list("lender_id", "fit")
    candidates_sql, params = candidates.query.sql_with_params()
    sql = f"""
        WITH c (lender_id, fit) AS ({candidates_sql}),
        l AS (SELECT lender_id, MAX(fit) AS fit, COUNT(*) AS n FROM c GROUP BY lender_id)
        SELECT l.lender_id, 100.0 * l.fit AS raw, l.n, COUNT(*) OVER () AS lenders, SUM(l.n) OVER () AS programs
        FROM l
        ORDER BY raw DESC, l.lender_id
        LIMIT %s"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, max(1, limit)])
        rows = cursor.fetchall()
    asked_about = _best_fits(criteria, fit, sorted(set(also))) if also else {}
    if not rows:
        return TopLenders([], 0, 0, asked_about)
    return TopLenders([(lender_id, float(raw), int(n)) for lender_id, raw, n, _l, _p in rows],
                      int(rows[0][3]), int(rows[0][4]), asked_about)


def _best_fits(criteria: DealCriteria, fit, lender_ids: list[int]) -> dict[int, tuple[float, int]]:
    """Per lender of `lender_ids` with a candidate program: (its best fit 0-100, its candidate programs)."""
    condition, extra = _id_list(lender_ids)
    candidates = candidate_programs(criteria).annotate(fit=fit).values_list("lender_id", "fit")
    candidates_sql, params = candidates.query.sql_with_params()
    sql = f"SELECT lender_id, 100.0 * MAX(fit), COUNT(*) FROM ({candidates_sql}) c WHERE {condition} GROUP BY lender_id"
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *extra])
        return {lender_id: (float(raw), int(n)) for lender_id, raw, n in cursor.fetchall()}
