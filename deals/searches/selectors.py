"""Reads of lender searches, scoped to the account of their deal: a search, its queue status, its pages of
ranked matches, the latest search of deals."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import BooleanField, Count, ExpressionWrapper, F, Min, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from deals.models import Deal
from deals.searches.models import LenderMatch, LenderSearch
from lev.accounts.models import Account
from lev.errors import NotFound


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


def lender_search_list(*, deal: Deal) -> QuerySet[LenderSearch]:
    """Every search of the deal, newest first (the (deal, created_at) index): what the deal's searches
    list pages over."""
    return LenderSearch.objects.filter(deal=deal).order_by("-created_at", "-id")


def lender_search_latest_completed(*, deal: Deal) -> LenderSearch | None:
    return (LenderSearch.objects.filter(deal=deal, status=LenderSearch.Status.COMPLETED)
            .order_by("-created_at", "-id").first())


# What a match shows of its lender: the name, and whether it is the account's own (not the directory's).
MATCH_LENDER = {"lender_name": F("lender__name"),
                "lender_own": ExpressionWrapper(Q(lender__account__isnull=False), output_field=BooleanField())}


@dataclass(frozen=True)
class MatchPage:
    matches: list[LenderMatch]
    total: int  # eligible lenders the search counted (or will have, while partial); 0 until scored
    ready: bool  # False while the page's ranks are not all written yet (pending, running, partial)
    ranked: int = 0  # of them, the top N stored and paged: ranks 1..ranked (0 once removed)
    removed: bool = False  # the stored ranks were purged (a superseded search past retention)
    mix: list[dict] = field(default_factory=list)  # lender_capital_mix of the search


def lender_capital_mix(*, search: LenderSearch) -> list[dict]:
    """The kinds of capital among a search's stored ranks: per kind, how many lenders and its best one
    (two queries on the search's matches), most lenders first."""
    kinds = list(LenderMatch.objects.filter(search=search).values("capital_source")
                 .annotate(n=Count("id"), first=Min("rank")).values_list("capital_source", "n", "first"))
    if not kinds:
        return []
    counts = {source: n for source, n, _first in kinds}
    best = (LenderMatch.objects.filter(search=search, rank__in=[first for _s, _n, first in kinds])
            .annotate(lender_name=F("lender__name"))
            .values_list("capital_source", "rank", "lender_id", "lender_name", "score"))
    mix = [{"capital_source": source, "lenders": counts[source], "best_rank": rank, "best_lender_id": lender_id,
            "best_lender_name": name, "best_score": score} for source, rank, lender_id, name, score in best]
    mix.sort(key=lambda item: (-item["lenders"], item["best_rank"]))
    return mix


def lender_match_page(*, search: LenderSearch, page: int, size: int, capital_source: str | None = None,
                      with_mix: bool = False) -> MatchPage:
    """One page of ranked matches by rank range (an index range scan, no OFFSET).

    Pages cover the top `ranked_matches` (LEV_RANKING_TOP_N) of the `total_matches` eligible
    lenders; a page past them is empty. While a search is partial, a page is served only once
    every rank of it is written, so a reader paging with a cursor never skips or repeats a rank.
    `capital_source`: that kind's ranks only, in rank order; `with_mix`: the kinds of capital ranked
    (lender_capital_mix) beside the page."""
    status = search.status
    if status not in (LenderSearch.Status.PARTIAL, LenderSearch.Status.COMPLETED):
        return MatchPage([], 0, status == LenderSearch.Status.FAILED)
    total = search.total_matches
    if search.matches_purged_at is not None:
        return MatchPage([], total, True, 0, True)
    ranked = search.ranked_matches
    mix = lender_capital_mix(search=search) if with_mix else []
    first = (page - 1) * size
    if capital_source is not None:
        # One kind of capital, in rank order: a page of the (at most LEV_RANKING_TOP_N) stored ranks of
        # that kind; while partial, the ranks written so far.
        kind = LenderMatch.objects.filter(search=search, capital_source=capital_source)
        matches = list(kind.annotate(**MATCH_LENDER).order_by("rank")[first:first + size])
        return MatchPage(matches, total, True, kind.count(), mix=mix)
    expected = max(0, min(size, ranked - first))
    if expected == 0:  # past the stored ranks: nothing to read
        return MatchPage([], total, True, ranked, mix=mix)
    matches = list(
        LenderMatch.objects.filter(search=search, rank__gt=first, rank__lte=first + size)
        .annotate(**MATCH_LENDER)
        .order_by("rank")
    )
    if status == LenderSearch.Status.PARTIAL and len(matches) < expected:
        return MatchPage([], total, False, ranked, mix=mix)
    return MatchPage(matches, total, True, ranked, mix=mix)


def lender_search_superseded_by(*, search: LenderSearch) -> int | None:
    """The newest completed search of the same deal made after this one, if any: the one whose
    ranked list replaced this one's (see services.lender_matches_purge)."""
    return (LenderSearch.objects.filter(deal_id=search.deal_id, status=LenderSearch.Status.COMPLETED)
            .filter(Q(created_at__gt=search.created_at) | Q(created_at=search.created_at, pk__gt=search.pk))
            .order_by("-created_at", "-id").values_list("pk", flat=True).first())
