"""Reads of the lender directory as an account sees it: the global directory (lenders and programs with no
account) and the account's own lenders and programs beside it. Another account's own lenders and programs
do not exist here (LenderNotFound, like a missing one). `account` None: the directory alone."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count, F, Max, Min, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from lenders.models import AssetType, Lender, LenderProgram
from lev.accounts.models import Account
from lev.enums import ASSET_TYPES, LENDER_TYPES, LOAN_TYPES, mask_of
from lev.errors import LenderNotFound, NotFound
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


def visible(account_id: int | None, prefix: str = "") -> Q:
    """The rows (lenders, or programs) the account reads: the directory's (no account) and its own."""
    directory = Q(**{f"{prefix}account__isnull": True})
    return directory if account_id is None else directory | Q(**{f"{prefix}account_id": account_id})


def _account_id(account: Account | None) -> int | None:
    return None if account is None else account.pk


def _active_programs(filters: DirectoryFilters, account_id: int | None) -> Q:
    """Conditions on a lender's active programs the account reads (prefix `programs__`)."""
    cond = Q(programs__status=LenderProgram.Status.ACTIVE) & visible(account_id, "programs__")
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


def lender_directory(*, filters: DirectoryFilters, account: Account | None = None) -> QuerySet[Lender]:
    """Lenders matching the filters (the directory's and the account's own), each annotated with its
    active-program count and loan range over the programs the account reads.

    Program conditions apply to one program at a time (a lender matches when one of its active
    programs satisfies all of them), expressed as an id subquery so counts are not multiplied.
    The annotations are correlated subqueries, not a GROUP BY over the directory: the count
    leaves them out, and PostgreSQL evaluates them only for the rows of the page (a page found by
    key reads no row before it).
    """
    account_id = _account_id(account)
    qs = Lender.objects.filter(visible(account_id))
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
        qs = qs.filter(pk__in=Lender.objects.filter(_active_programs(filters, account_id)).values("pk"))
    active = LenderProgram.objects.filter(visible(account_id), lender=OuterRef("pk"),
                                          status=LenderProgram.Status.ACTIVE).order_by()
    per_lender = active.values("lender")
    return qs.annotate(
        program_count=Coalesce(Subquery(per_lender.annotate(n=Count("id")).values("n")), 0),
        min_loan=Subquery(per_lender.annotate(low=Min("min_loan_amount")).values("low")),
        max_loan=Subquery(per_lender.annotate(high=Max("max_loan_amount")).values("high")),
    )  # ordered and paged by DIRECTORY_KEYSET


# The directory's order, alphabetical then by id; paged by key on the (name, id) index.
DIRECTORY_KEYSET = Keyset(F("name"), Lender._meta.get_field("name"))


def lender_directory_scope(*, filters: DirectoryFilters, account: Account | None = None) -> str:
    """Which directory list a cursor belongs to: its filters and the account (whose own lenders it lists)."""
    return list_scope("lenders", account=_account_id(account), **vars(filters))


# A lender's programs in one order everywhere (its detail and its paged list): active first ("active"
# sorts before "inactive"), then by id. (It was "-status", which listed inactive programs first.)
PROGRAM_ORDER = ("status", "id")


def lender_get(*, lender_id: int, account: Account | None = None) -> Lender:
    """A lender the account reads, with the programs it reads; LenderNotFound for another account's."""
    account_id = _account_id(account)
    lender = (
        Lender.objects.prefetch_related(
            Prefetch("programs", queryset=LenderProgram.objects.filter(visible(account_id)).order_by(*PROGRAM_ORDER))
        )
        .filter(visible(account_id), pk=lender_id)
        .first()
    )
    if lender is None:
        raise LenderNotFound(lender_id)
    return lender


def lender_exists(*, lender_id: int, account: Account | None = None) -> bool:
    return Lender.objects.filter(visible(_account_id(account)), pk=lender_id).exists()


def lender_program_list(*, lender_id: int, account: Account | None = None) -> QuerySet[LenderProgram]:
    """A lender's programs the account reads, in the order of its detail (PROGRAM_ORDER); LenderNotFound
    for no lender (or another account's)."""
    if not lender_exists(lender_id=lender_id, account=account):
        raise LenderNotFound(lender_id)
    return LenderProgram.objects.filter(visible(_account_id(account)), lender_id=lender_id).order_by(*PROGRAM_ORDER)


def program_get(*, lender_id: int, program_id: int, account: Account | None = None) -> LenderProgram:
    """One program of a lender, both read by the account; NotFound names what is missing."""
    if not lender_exists(lender_id=lender_id, account=account):
        raise LenderNotFound(lender_id)
    program = LenderProgram.objects.filter(visible(_account_id(account)), lender_id=lender_id,
                                           pk=program_id).first()
    if program is None:
        raise NotFound("Lender program", program_id)
    return program


def asset_type_list() -> QuerySet[AssetType]:
    return AssetType.objects.order_by("name")
