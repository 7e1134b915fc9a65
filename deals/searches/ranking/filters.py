"""The hard filters, in SQL: a program that fails one of them is never scored.

Per program: active; the loan amount inside its range (an open end is unbounded); the deal's loan
type among its loan types (skipped while the deal's loan type is `tbd`); every property's state
covered (no states = nationwide); every property's asset type among its asset types; the deal's
position among its positions; the directory's or the deal's account's own (never another account's).
List fields are compared through their bit masks
(`lev.enums.mask_of`) with the `__anybit` lookup, one bit per required value, so "covers all of
them" is an AND of single-bit tests that runs on PostgreSQL and SQLite alike.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet

import lev.lookups  # noqa: F401  (registers __anybit)
from deals.searches.ranking.criteria import DealCriteria
from lenders.models import LenderProgram
from lenders.selectors import visible
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
    # The directory's programs and the deal's account's own, never another account's (a program of an
    # own lender is its account's: the program's column alone decides, no join to the lender).
    return cond & visible(criteria.account_id)


def candidate_programs(criteria: DealCriteria) -> QuerySet[LenderProgram]:
    """Programs that pass every hard filter (unordered)."""
    return LenderProgram.objects.filter(hard_filter_q(criteria)).order_by()


# What `stated_box` reads of a program: the columns of `hard_filter_q`, in this order.
BOX_COLUMNS = ("lender_id", "asset_type_mask", "loan_type_mask", "state_mask", "position_mask", "min_loan_float",
               "max_loan_float")


def passes(program: tuple, criteria: DealCriteria) -> bool:
    """`hard_filter_q` of one active program's BOX_COLUMNS row, in Python: the evidence files each past
    placement as inside or outside the lender's stated box with it (tests/deals/searches/test_filters.py
    holds the two to the same answers)."""
    _lender, assets, loan_types, states, positions, low, high = program
    for value in criteria.asset_types:
        if not assets & mask_of([value], ASSET_TYPES):
            return False
    loan_type = criteria.loan_type
    if loan_type and loan_type != "tbd" and not loan_types & mask_of([loan_type], LOAN_TYPES):
        return False
    if criteria.states and states != 0:
        for value in criteria.states:
            if not states & mask_of([value], US_STATES):
                return False
    if not positions & mask_of([criteria.position], POSITIONS):
        return False
    amount = float(criteria.loan_amount)
    return (low is None or low <= amount) and (high is None or high >= amount)
