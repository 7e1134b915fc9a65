"""The scores computed in the database (deals.searches.ranking.sql_scoring) are the pure functions' scores
(deals.searches.ranking.scoring), program by program and lender by lender, on this run's database."""

from __future__ import annotations

import random
from collections import defaultdict
from decimal import Decimal

import pytest

from deals.searches.ranking import DealCriteria, scoring
from deals.searches.ranking.predict import fetch_candidates
from deals.searches.ranking.sql_scoring import program_fit_expression, top_lenders
from lenders.models import LenderProgram
from lev.enums import CAPITAL_SOURCE_TYPES
from tests.deals.searches.factories import LenderFactory, LenderProgramFactory

pytestmark = pytest.mark.django_db

DEAL = {"loan_amount": 10_000_000.0, "loan_type": "permanent", "states": ("TX",), "asset_types": ("multifamily",)}
CRITERIA = [
    DealCriteria(**DEAL, business_plan="stabilized", ltv=62.5, dscr=1.39),
    DealCriteria(**DEAL, business_plan="value_add", ltv=81.0, dscr=1.05),  # over the limits: scores lower
    DealCriteria(**DEAL, business_plan="", ltv=None, dscr=None),  # no plan, no financials
    DealCriteria(**{**DEAL, "states": ("OK", "TX")}, business_plan="land", ltv=None, dscr=1.2),
]


def varied_directory(lenders: int = 40, seed: int = 3) -> None:
    """Programs that all pass the hard filters of DEAL, with every kind of range and limit: open
    ends, a point range, loans at either end, limits missing, every capital source."""
    rng = random.Random(seed)
    sources = [*CAPITAL_SOURCE_TYPES, ""]
    for n in range(lenders):
        lender = LenderFactory(name=f"Varied {n}")
        for _ in range(rng.randint(1, 3)):
            low = rng.choice([None, Decimal("0"), Decimal("1000000"), Decimal("2500000"), Decimal("10000000")])
            high = rng.choice([None, Decimal("10000000"), Decimal("20000000"), Decimal("250000000")])
            LenderProgramFactory(
                lender=lender, min_loan_amount=low, max_loan_amount=high,
                sponsor_states=rng.choice([[], ["OK", "TX"]]),
                capital_source_type=rng.choice(sources),
                max_ltv=rng.choice([None, Decimal("55"), Decimal("62.5"), Decimal("75"), Decimal("80.25")]),
                min_dscr=rng.choice([None, Decimal("1.05"), Decimal("1.25"), Decimal("1.39"), Decimal("1.6")]),
            )


@pytest.mark.parametrize("criteria", CRITERIA, ids=["stabilized", "over-limits", "no-plan", "two-states"])
def test_every_program_scores_in_the_database_as_in_python(criteria):
    varied_directory()
    in_sql = dict(LenderProgram.objects.annotate(fit=program_fit_expression(criteria)).values_list("id", "fit"))
    rows = fetch_candidates(criteria, sorted({p.lender_id for p in LenderProgram.objects.all()}))
    assert len(rows) == len(in_sql) > 40  # every program passes the hard filters of DEAL
    for row in rows:
        expected = scoring.program_fit(amount=criteria.loan_amount, business_plan=criteria.business_plan,
                                       ltv=criteria.ltv, dscr=criteria.dscr, row=row).fit
        assert in_sql[row.id] == pytest.approx(expected, rel=1e-12, abs=1e-12), row


@pytest.mark.parametrize("criteria", CRITERIA, ids=["stabilized", "over-limits", "no-plan", "two-states"])
def test_the_top_lenders_are_the_python_ranking_cut_at_n(criteria):
    varied_directory()
    lender_ids = sorted({p.lender_id for p in LenderProgram.objects.all()})
    rows = fetch_candidates(criteria, lender_ids)
    best: dict[int, float] = defaultdict(float)
    counts: dict[int, int] = defaultdict(int)
    for row in rows:
        fit = scoring.program_fit(amount=criteria.loan_amount, business_plan=criteria.business_plan,
                                  ltv=criteria.ltv, dscr=criteria.dscr, row=row).fit
        best[row.lender_id] = max(best[row.lender_id], fit)
        counts[row.lender_id] += 1
    # The statement ranks by the stated programs alone (100 x the best fit): no account's signal is read there.
    expected = sorted(((lender_id, 100.0 * best[lender_id], counts[lender_id])
                       for lender_id in best), key=lambda item: (-item[1], item[0]))

    top = top_lenders(criteria, 7)
    assert (top.total_lenders, top.total_candidates) == (len(best), len(rows))
    assert [lender_id for lender_id, _raw, _n in top.lenders] == [lender_id for lender_id, _r, _n in expected[:7]]
    for (got_id, got_raw, got_n), (_id, raw, n) in zip(top.lenders, expected, strict=False):
        assert got_raw == pytest.approx(raw, rel=1e-12) and got_n == n, got_id
    everyone = top_lenders(criteria, 1000)
    assert [item[0] for item in everyone.lenders] == [item[0] for item in expected]


def test_no_candidate_gives_no_lender_and_zero_counts():
    LenderProgramFactory(asset_types=["office"])
    top = top_lenders(CRITERIA[0], 10)
    assert (top.lenders, top.total_lenders, top.total_candidates) == ([], 0, 0)
