"""The records a deal's summary reads, in a bounded number of queries whatever the deal's size: the
deal's financials, the sources of the figures applied from its documents, and its properties (one each;
the deal itself comes joined with its stage, owner, sponsor and borrower), its stage changes counted with
the latest (two), its latest lender search and its top matches (two, when the caller may read lender
searches), and — when the caller may read placements — the placements counted by status (one), the
oldest unanswered ones (two) and a page of them (one), and the quote comparison (three,
`deals.placements.comparison`). Never one query per property, placement or quote."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.db.models import Count, F

from deals.documents.figures.selectors import figure_sources
from deals.models import Deal, DealFinancials, DealProperty
from deals.pipeline.models import StageChange
from deals.placements.comparison import Comparison, term_sheet_comparison
from deals.placements.models import Placement
from deals.placements.workflow import STATUSES
from deals.searches.models import LenderMatch, LenderSearch

# How long a placement may wait for the lender's first answer before the summary says follow up.
FOLLOW_UP_DAYS = 7


@dataclass
class SummaryRecords:
    deal: Deal
    financials: DealFinancials | None
    properties: list[DealProperty]
    stage_changes: int
    latest_change: StageChange | None
    search: LenderSearch | None
    matches: list[LenderMatch]
    placements_read: bool
    lenders_read: bool = True
    placement_counts: dict[str, int] = field(default_factory=dict)  # status -> count, workflow order
    stale: list[Placement] = field(default_factory=list)  # sent, unanswered for FOLLOW_UP_DAYS, oldest first
    stale_count: int = 0
    placements: list[Placement] = field(default_factory=list)  # the first `placements_shown`, oldest first
    comparison: Comparison | None = None
    # field -> its source document, for the figures applied from a rent roll or T-12 (deals.documents.figures)
    figure_sources: dict[str, dict] = field(default_factory=dict)


def summary_records(*, deal: Deal, today: dt.date, matches_shown: int, placements_shown: int,
                    follow_ups_shown: int, placements_read: bool, lenders_read: bool) -> SummaryRecords:
    """Everything the summary of `deal` (the caller's, read with deals.selectors.deal_get) shows."""
    financials = DealFinancials.objects.filter(deal=deal).first()
    # The figures applied from the deal's rent roll or T-12 and their documents (one query).
    sources = figure_sources(deal_id=deal.pk)
    if financials is not None:
        financials.deal = deal  # its ratios read the deal's loan: no second read of the deal
        financials.figure_sources_read = sources  # what the financials' serializer answers as `sources`
    properties = list(DealProperty.objects.filter(deal=deal).order_by("id"))
    changes = StageChange.objects.filter(deal=deal)
    stage_changes = changes.count()
    latest_change = changes.order_by("-at", "-id").first()
    search = (LenderSearch.objects.filter(deal=deal).order_by("-created_at", "-id").first() if lenders_read
              else None)
    matches: list[LenderMatch] = []
    if (search is not None and search.status in (LenderSearch.Status.COMPLETED, LenderSearch.Status.PARTIAL)
            and search.matches_purged_at is None and matches_shown):
        matches = list(LenderMatch.objects.filter(search=search, rank__lte=matches_shown)
                       .annotate(lender_name=F("lender__name")).order_by("rank"))
    records = SummaryRecords(deal=deal, financials=financials, properties=properties, stage_changes=stage_changes,
                             latest_change=latest_change, search=search, matches=matches,
                             placements_read=placements_read, lenders_read=lenders_read, figure_sources=sources)
    if not placements_read:
        return records
    placements = Placement.objects.filter(deal=deal)
    counts = dict(placements.order_by().values_list("status").annotate(n=Count("id")))
    records.placement_counts = {status: counts[status] for status in STATUSES if counts.get(status)}
    cutoff = today - dt.timedelta(days=FOLLOW_UP_DAYS)
    stale = placements.filter(status=Placement.Status.SENT, first_response_at=None, sent_at__date__lte=cutoff)
    records.stale_count = counts.get(Placement.Status.SENT, 0) and stale.count()
    if records.stale_count:
        records.stale = list(stale.select_related("lender").order_by("sent_at", "id")[:follow_ups_shown])
    if placements_shown and counts:
        records.placements = list(placements.select_related("lender").order_by("id")[:placements_shown])
    if counts:
        records.comparison = term_sheet_comparison(deal=deal, today=today)
    return records
