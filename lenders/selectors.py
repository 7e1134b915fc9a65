"""Reads of the global lender directory (not tenant scoped) and of lender searches (scoped to
the account of their deal)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db.models import Count, F, Max, Min, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from deals.models import Account, Deal
from lenders.models import AssetType, Lender, LenderMatch, LenderProgram, LenderSearch
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



# --- lender searches (tenant scoped: a search belongs to the account of its deal) ---------------
def lender_search_get(*, account: Account, search_id: int) -> LenderSearch:
    """The account's search, or NotFound — the same answer for another account's search."""
    search = (
        LenderSearch.objects.filter(account=account, pk=search_id)
        .annotate(current_deal_version=F("deal__version"))
        .first()
    )
    if search is None:
        raise NotFound("Lender search", search_id)
    return search


def lender_search_reusable(*, deal: Deal) -> LenderSearch | None:
    """A recent search of this exact deal version that has not failed and is not stuck."""
    now = timezone.now()
    stale = now - dt.timedelta(seconds=settings.LEV_SEARCH_STALE_SECONDS)
    return (
        LenderSearch.objects.filter(
            deal=deal, deal_version=deal.version,
            created_at__gte=now - dt.timedelta(seconds=settings.LEV_SEARCH_REUSE_SECONDS),
        )
        .exclude(status=LenderSearch.Status.FAILED)
        .exclude(status__in=(LenderSearch.Status.RUNNING, LenderSearch.Status.PARTIAL), heartbeat_at__lt=stale)
        .exclude(status=LenderSearch.Status.PENDING, queued_at__lt=stale)
        .order_by("-created_at", "-id")
        .first()
    )


class QueueStatus:
    """Where a pending search's job is: handed to the broker and waiting its turn; waiting longer
    than LEV_SEARCH_PENDING_WARN_SECONDS (no worker has picked it up); or never handed over
    (the broker could not be reached — the sweep queues it when the broker is back)."""

    QUEUED = "queued"
    NOT_PICKED_UP = "not_picked_up"
    NOT_QUEUED = "not_queued"


def _pending_since(search: LenderSearch) -> dt.datetime:
    # A search that never ran waits since it was created (a re-queue by the sweep does not make
    # its wait shorter); one put back after a lost run waits since it was queued again.
    if search.attempts == 0 or search.queued_at is None:
        return search.created_at
    return search.queued_at


def lender_search_queue_status(*, search: LenderSearch) -> str | None:
    """QueueStatus of a pending search; None for any other status."""
    if search.status != LenderSearch.Status.PENDING:
        return None
    if search.queued_at is None:
        return QueueStatus.NOT_QUEUED
    waited = (timezone.now() - _pending_since(search)).total_seconds()
    return QueueStatus.NOT_PICKED_UP if waited >= settings.LEV_SEARCH_PENDING_WARN_SECONDS else QueueStatus.QUEUED


def lender_search_pending_seconds(*, search: LenderSearch) -> int:
    """Whole seconds a pending search has waited for a worker (0 for other statuses)."""
    if search.status != LenderSearch.Status.PENDING:
        return 0
    return max(0, int((timezone.now() - _pending_since(search)).total_seconds()))


def lender_searches_pending_stale() -> dict[str, int]:
    """For operators (/health): searches of every account that no worker has picked up for
    LEV_SEARCH_PENDING_WARN_SECONDS (`pending_stale`, which includes `not_queued`: those the
    broker refused)."""
    warn = timezone.now() - dt.timedelta(seconds=settings.LEV_SEARCH_PENDING_WARN_SECONDS)
    pending = LenderSearch.objects.filter(status=LenderSearch.Status.PENDING)
    counts = pending.aggregate(
        pending_stale=Count("id", filter=Q(queued_at__isnull=True)
                            | Q(attempts=0, created_at__lt=warn)
                            | Q(attempts__gt=0, queued_at__lt=warn)),
        not_queued=Count("id", filter=Q(queued_at__isnull=True)),
    )
    return {"pending_stale": counts["pending_stale"], "not_queued": counts["not_queued"]}


def deals_with_latest_search(deals: QuerySet[Deal]) -> QuerySet[Deal]:
    """Deals annotated with their latest search's `latest_search_id`, `latest_search_status` and
    `latest_search_matches` (None without a search): correlated subqueries on the (deal, …)
    index, evaluated for the rows of a page only."""
    latest = LenderSearch.objects.filter(deal=OuterRef("pk")).order_by("-created_at", "-id")
    return deals.annotate(
        latest_search_id=Subquery(latest.values("id")[:1]),
        latest_search_status=Subquery(latest.values("status")[:1]),
        latest_search_matches=Subquery(latest.values("total_matches")[:1]),
    )


def lender_searches_of_deal(*, deal: Deal, limit: int) -> list[LenderSearch]:
    """The deal's most recent searches, newest first."""
    return list(LenderSearch.objects.filter(deal=deal).select_related("created_by").order_by("-created_at", "-id")
                [:limit])


def lender_search_latest_completed(*, deal: Deal) -> LenderSearch | None:
    return (LenderSearch.objects.filter(deal=deal, status=LenderSearch.Status.COMPLETED)
            .order_by("-created_at", "-id").first())


@dataclass(frozen=True)
class MatchPage:
    matches: list[LenderMatch]
    total: int  # eligible lenders the search counted (or will have, while partial); 0 until scored
    ready: bool  # False while the page's ranks are not all written yet (pending, running, partial)
    ranked: int = 0  # of them, the top N stored and paged: ranks 1..ranked (0 once removed)
    removed: bool = False  # the stored ranks were purged (a superseded search past retention)


def lender_match_page(*, search: LenderSearch, page: int, size: int) -> MatchPage:
    """One page of ranked matches by rank range (an index range scan, no OFFSET).

    Pages cover the top `ranked_matches` (LEV_RANKING_TOP_N) of the `total_matches` eligible
    lenders; a page past them is empty. While a search is partial, a page is served only once
    every rank of it is written, so a reader paging with a cursor never skips or repeats a rank."""
    status = search.status
    if status not in (LenderSearch.Status.PARTIAL, LenderSearch.Status.COMPLETED):
        return MatchPage([], 0, status == LenderSearch.Status.FAILED)
    total = search.total_matches
    if search.matches_purged_at is not None:
        return MatchPage([], total, True, 0, True)
    ranked = search.ranked_matches
    first = (page - 1) * size
    expected = max(0, min(size, ranked - first))
    if expected == 0:  # past the stored ranks: nothing to read
        return MatchPage([], total, True, ranked)
    matches = list(
        LenderMatch.objects.filter(search=search, rank__gt=first, rank__lte=first + size)
        .annotate(lender_name=F("lender__name"))
        .order_by("rank")
    )
    if status == LenderSearch.Status.PARTIAL and len(matches) < expected:
        return MatchPage([], total, False, ranked)
    return MatchPage(matches, total, True, ranked)


def lender_search_superseded_by(*, search: LenderSearch) -> int | None:
    """The newest completed search of the same deal made after this one, if any: the one whose
    ranked list replaced this one's (see services.lender_matches_purge)."""
    return (LenderSearch.objects.filter(deal_id=search.deal_id, status=LenderSearch.Status.COMPLETED)
            .filter(Q(created_at__gt=search.created_at) | Q(created_at=search.created_at, pk__gt=search.pk))
            .order_by("-created_at", "-id").values_list("pk", flat=True).first())
