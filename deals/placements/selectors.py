"""Reads of placements and term sheets. Placements and term sheets are scoped to the
account of their deal: another account's placement answers exactly like a missing one."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from deals.models import Deal
from deals.placements.models import Placement, TermSheet
from lev.accounts.models import Account
from lev.errors import NotFound


@dataclass(frozen=True)
class PlacementFilters:
    status: str | None = None
    lender_id: int | None = None


@dataclass(frozen=True)
class TermSheetFilters:
    placement_id: int | None = None
    lender_id: int | None = None
    quote_type: str | None = None
    winning: bool | None = None


def with_term_sheet_count(qs: QuerySet[Placement]) -> QuerySet[Placement]:
    """Placements with `term_sheet_count`: their live (not removed) quotes."""
    return qs.annotate(term_sheet_count=Count("term_sheets", filter=Q(term_sheets__deleted_at=None)))


def placement_list(*, deal: Deal, filters: PlacementFilters) -> QuerySet[Placement]:
    """The deal's placements (archived ones too: filter by status to leave them out), oldest first."""
    qs = Placement.objects.filter(deal=deal)
    if filters.status:
        qs = qs.filter(status=filters.status)
    if filters.lender_id is not None:
        qs = qs.filter(lender_id=filters.lender_id)
    return with_term_sheet_count(qs.select_related("lender", "program")).order_by("id")


def placement_get(*, account: Account, placement_id: int) -> Placement:
    """The account's placement, or NotFound — the same answer for another account's placement."""
    placement = (
        with_term_sheet_count(Placement.objects.select_related("lender", "program", "deal"))
        .filter(deal__account=account, pk=placement_id)
        .first()
    )
    if placement is None:
        raise NotFound("Placement", placement_id)
    return placement


def live_term_sheets() -> QuerySet[TermSheet]:
    """Term sheets not removed, with what their serializer reads."""
    return TermSheet.objects.filter(deleted_at=None).select_related("placement__lender")


def term_sheet_list(*, deal: Deal, filters: TermSheetFilters) -> QuerySet[TermSheet]:
    qs = live_term_sheets().filter(deal=deal)
    if filters.placement_id is not None:
        qs = qs.filter(placement_id=filters.placement_id)
    if filters.lender_id is not None:
        qs = qs.filter(placement__lender_id=filters.lender_id)
    if filters.quote_type:
        qs = qs.filter(quote_type=filters.quote_type)
    if filters.winning is not None:
        qs = qs.filter(winning=filters.winning)
    return qs.order_by("id")


def term_sheet_get(*, account: Account, term_sheet_id: int) -> TermSheet:
    """The account's live term sheet, or NotFound (also for a removed or another account's one)."""
    term_sheet = live_term_sheets().filter(deal__account=account, pk=term_sheet_id).first()
    if term_sheet is None:
        raise NotFound("Term sheet", term_sheet_id)
    return term_sheet

