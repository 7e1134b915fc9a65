"""Reads of the global lender directory (not tenant scoped) and of lender searches (scoped to
the account of their deal)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count, F, Max, Min, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from lenders.models import AssetType, Lender, LenderProgram
from lev.enums import ASSET_TYPES, LENDER_TYPES, LOAN_TYPES, mask_of
from lev.errors import LenderNotFound
from lev.pagination import Keyset, list_scope


@dataclass(frozen=True)
class DirectoryFilters:
    query: str | None = None
    lender_type: str | None = None
    state: str | None = None
    asset_type: str | None = None
    loan_amount: Decimal | None = None
    loan_type: str | None = None
    min_loan_amount: Decimal | None = None
    max_loan_amount: Decimal | None = None


def _active_programs(filters: DirectoryFilters) -> Q:
    """Conditions on a lender's active programs (prefix `programs__`)."""
    cond = Q(programs__status=LenderProgram.Status.ACTIVE)
    if filters.asset_type:
        cond &= Q(programs__asset_type_mask__anybit=mask_of([filters.asset_type], ASSET_TYPES))
    if filters.loan_type:
        cond &= Q(programs__loan_type_mask__anybit=mask_of([filters.loan_type], LOAN_TYPES))
    if filters.loan_amount is not None:
        cond &= Q(programs__min_loan_amount__lte=filters.loan_amount) | Q(programs__min_loan_amount=None)
        cond &= Q(programs__max_loan_amount__gte=filters.loan_amount) | Q(programs__max_loan_amount=None)
    if filters.min_loan_amount is not None:
        cond &= Q(programs__max_loan_amount__gte=filters.min_loan_amount) | Q(programs__max_loan_amount=None)
    if filters.max_loan_amount is not None:
        cond &= Q(programs__min_loan_amount__lte=filters.max_loan_amount) | Q(programs__min_loan_amount=None)
    return cond


def lender_directory(*, filters: DirectoryFilters) -> QuerySet[Lender]:
    """Lenders matching the filters, each annotated with its active-program count and loan range.

    Program conditions apply to one program at a time (a lender matches when one of its active
    programs satisfies all of them), expressed as an id subquery so counts are not multiplied.
    The annotations are correlated subqueries, not a GROUP BY over the directory: the count
    leaves them out, and PostgreSQL evaluates them only for the rows of the page (a page found by
    key reads no row before it).
    """
    qs = Lender.objects.all()
    if filters.query:
        qs = qs.filter(Q(name__icontains=filters.query) | Q(city__icontains=filters.query))
    if filters.lender_type:
        qs = qs.filter(lender_type_mask__anybit=mask_of([filters.lender_type], LENDER_TYPES))
    if filters.state:
        qs = qs.filter(state=filters.state)
    program_filtered = any(
        v is not None
        for v in (filters.asset_type, filters.loan_type, filters.loan_amount, filters.min_loan_amount,
                  filters.max_loan_amount)
    )
    if program_filtered:
        qs = qs.filter(pk__in=Lender.objects.filter(_active_programs(filters)).values("pk"))
    active = LenderProgram.objects.filter(lender=OuterRef("pk"), status=LenderProgram.Status.ACTIVE).order_by()
    per_lender = active.values("lender")
    return qs.annotate(
        program_count=Coalesce(Subquery(per_lender.annotate(n=Count("id")).values("n")), 0),
        min_loan=Subquery(per_lender.annotate(low=Min("min_loan_amount")).values("low")),
        max_loan=Subquery(per_lender.annotate(high=Max("max_loan_amount")).values("high")),
    )  # ordered and paged by DIRECTORY_KEYSET


# The directory's order, alphabetical then by id; paged by key on the (name, id) index.
DIRECTORY_KEYSET = Keyset(F("name"), Lender._meta.get_field("name"))


def lender_directory_scope(*, filters: DirectoryFilters) -> str:
    """Which directory list a cursor belongs to: its filters (the directory is not tenant scoped)."""
    return list_scope("lenders", **vars(filters))


# A lender's programs in one order everywhere (its detail and its paged list): active first ("active"
# sorts before "inactive"), then by id. (It was "-status", which listed inactive programs first.)
PROGRAM_ORDER = ("status", "id")


def lender_get(*, lender_id: int) -> Lender:
    lender = (
        Lender.objects.prefetch_related(
            Prefetch("programs", queryset=LenderProgram.objects.order_by(*PROGRAM_ORDER))
        )
        .filter(pk=lender_id)
        .first()
    )
    if lender is None:
        raise LenderNotFound(lender_id)
    return lender


def lender_program_list(*, lender_id: int) -> QuerySet[LenderProgram]:
    """A lender's programs, in the order of its detail (PROGRAM_ORDER); LenderNotFound for no lender."""
    if not Lender.objects.filter(pk=lender_id).exists():
        raise LenderNotFound(lender_id)
    return LenderProgram.objects.filter(lender_id=lender_id).order_by(*PROGRAM_ORDER)


def asset_type_list() -> QuerySet[AssetType]:
    return AssetType.objects.order_by("name")
