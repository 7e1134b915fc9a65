"""The hard filters, in SQL: a program that fails one of them is never scored.

Per program: active; the loan amount inside its range (an open end is unbounded); the deal's loan
type among its loan types (skipped while the deal's loan type is `tbd`); every property's state
covered (no states = nationwide); every property's asset type among its asset types; the deal's
position among its positions. List fields are compared through their bit masks
(`lev.enums.mask_of`) with the `__anybit` lookup, one bit per required value, so "covers all of
them" is an AND of single-bit tests that runs on PostgreSQL and SQLite alike.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet

import lev.lookups  # noqa: F401  (registers __anybit)
from deals.searches.ranking.criteria import DealCriteria
from lenders.models import LenderProgram
from lev.enums import ASSET_TYPES, LOAN_TYPES, POSITIONS, US_STATES, mask_of


def _all_bits(field: str, values: tuple[str, ...], universe: tuple[str, ...]) -> Q:
    cond = Q()
    for value in values:
        cond &= Q(**{f"{field}__anybit": mask_of([value], universe)})
    return cond


def hard_filter_q(criteria: DealCriteria) -> Q:
    # Most selective and cheapest first: PostgreSQL evaluates these conditions in this order,
    # and an integer AND rules a row out for less than a numeric comparison does.
    cond = _all_bits("asset_type_mask", criteria.asset_types, ASSET_TYPES)
    if criteria.loan_type and criteria.loan_type != "tbd":
        cond &= Q(loan_type_mask__anybit=mask_of([criteria.loan_type], LOAN_TYPES))
    if criteria.states:
        cond &= Q(state_mask=0) | _all_bits("state_mask", criteria.states, US_STATES)
    cond &= Q(position_mask__anybit=mask_of([criteria.position], POSITIONS))
    cond &= Q(status=LenderProgram.Status.ACTIVE)
    # The float copies of the amounts (LenderProgram.refresh_masks): the same order for amounts in
    # cents up to the model's 14 digits, and a float comparison is cheaper than a numeric one.
    amount = float(criteria.loan_amount)
    cond &= Q(min_loan_float__isnull=True) | Q(min_loan_float__lte=amount)
    cond &= Q(max_loan_float__isnull=True) | Q(max_loan_float__gte=amount)
    return cond


def candidate_programs(criteria: DealCriteria) -> QuerySet[LenderProgram]:
    """Programs that pass every hard filter (unordered)."""
    return LenderProgram.objects.filter(hard_filter_q(criteria)).order_by()
