"""The admin's view of a lender search's ranked lenders, shared by the search's page and its
deal's page: one page of matches read by rank range (never the whole result), in words, with a
small score chart drawn server-side."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest
from django.urls import reverse

from deals.searches.models import LenderSearch
from deals.searches.ranking.insights import money as compact_money
from deals.searches.selectors import lender_match_page
from lev import formatting, limits
from lev.enums import ASSET_TYPES, LOAN_TYPES

# The score chart (an inline SVG, deals/templates/admin/deals/searches/_score_chart.html), in pixels:
# height of a row, where bars start (the lender names are left of it), the bar of a score of 100.
CHART_ROW = 24
CHART_BAR_X = 300
CHART_BAR = 300
# The chart's axis starts a little below the lowest score shown (never below 0), so scores of 63 and
# 65 read as different bars; the axis says where it starts.
CHART_AXIS_STEP = 10
# Why a lender matches: the first lines shown in the row, the rest behind "more".
INSIGHTS_SHOWN = 2


@dataclass
class RankedRow:
    rank: int
    lender_id: int
    lender_name: str
    lender_url: str
    score: int
    insights: list[str]
    programs: list[dict[str, str]]
    more_programs: int
    placement: Any = None  # the deal's placement with this lender, if it was placed (mark_placed)

    @property
    def insights_shown(self) -> list[str]:
        return self.insights[:INSIGHTS_SHOWN]

    @property
    def insights_more(self) -> list[str]:
        return self.insights[INSIGHTS_SHOWN:]


@dataclass
class RankedPage:
    search: LenderSearch
    rows: list[RankedRow]
    total: int
    page: int
    pages: int
    ready: bool
    chart: list[dict[str, Any]] = field(default_factory=list)
    ranked: int = 0  # ranks stored and paged (the top LEV_RANKING_TOP_N of `total` eligible lenders)
    removed: bool = False  # a superseded search's ranks, purged after retention
    chart_floor: int = 0  # the score where the chart's axis starts
    mix: list[dict[str, Any]] = field(default_factory=list)  # the kinds of capital ranked (first page only)

    @property
    def chart_height(self) -> int:
        return len(self.chart) * CHART_ROW

    @property
    def chart_bar_x(self) -> int:
        return CHART_BAR_X

    @property
    def first_rank(self) -> int:
        return self.rows[0].rank if self.rows else 0

    @property
    def last_rank(self) -> int:
        return self.rows[-1].rank if self.rows else 0

    @property
    def page_numbers(self) -> list[int]:
        """A short pager: first, last and the pages around the current one (0 marks a gap)."""
        near = {1, self.pages, *range(max(1, self.page - 2), min(self.pages, self.page + 2) + 1)}
        numbers: list[int] = []
        for n in sorted(near):
            if numbers and n - numbers[-1] > 1:
                numbers.append(0)
            numbers.append(n)
        return numbers


def program_summary(program: dict[str, Any]) -> dict[str, str]:
    """A compact matching program (as the ranking stores it) in words."""
    parts = [formatting.labels(program.get("loan_types"), LOAN_TYPES)]
    low, high = program.get("min_loan_amount"), program.get("max_loan_amount")
    if low or high:
        parts.append(f"{compact_money(low or 0)}-{compact_money(high)}" if high else f"from {compact_money(low)}")
    if program.get("max_ltv") is not None:
        parts.append(f"LTV ≤ {formatting.percent(program['max_ltv'], 1)}")
    if program.get("min_dscr") is not None:
        parts.append(f"DSCR ≥ {formatting.multiple(program['min_dscr'])}")
    return {"title": str(program.get("title", "")), "terms": " · ".join(p for p in parts if p)}


def ranked_page(search: LenderSearch, *, page: int, size: int, chart_size: int = 0) -> RankedPage:
    """One page of a search's ranked lenders for the admin, read by rank range (never the whole
    stored top N, up to LEV_RANKING_TOP_N rows), with a score chart of the page's first
    `chart_size` rows on its first page."""
    pages = max(1, math.ceil(search.ranked_matches / size))  # pages cover the stored top N
    page = min(max(1, page), pages)
    match_page = lender_match_page(search=search, page=page, size=size, with_mix=page == 1)
    rows = [
        RankedRow(
            rank=m.rank, lender_id=m.lender_id, lender_name=m.lender_name,
            lender_url=reverse("admin:lenders_lender_change", args=[m.lender_id]), score=m.score,
            insights=list(m.match_insights or []),
            programs=[program_summary(p) for p in (m.programs or []) if isinstance(p, dict)],
            more_programs=max(0, m.program_count - len(m.programs or [])),
        )
        for m in match_page.matches
    ]
    chart, floor = score_chart(rows[:chart_size] if chart_size and page == 1 else [])
    mark_placed(search.deal_id, rows)
    return RankedPage(search, rows, match_page.total, page, pages, match_page.ready, chart, match_page.ranked,
                      match_page.removed, floor, capital_mix(match_page.mix))


def capital_mix(mix: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The kinds of capital among the ranked lenders, in words for the page: "Agency: 12 lenders, best
    #1 Acme Capital". A lender whose programs state no kind is counted as "Unstated"."""
    return [{"label": (item["capital_source"] or "unstated").replace("_", " ").capitalize(),
             "lenders": item["lenders"], "best_rank": item["best_rank"], "best_lender_name": item["best_lender_name"],
             "best_lender_url": reverse("admin:lenders_lender_change", args=[item["best_lender_id"]])}
            for item in mix]


def score_chart(rows: list[RankedRow]) -> tuple[list[dict[str, Any]], int]:
    """Bars of the rows' scores on an axis from a round number below the lowest (not from 0: the
    top ten are often within a few points of each other), and that axis start."""
    if not rows:
        return [], 0
    low = min(row.score for row in rows)
    floor = max(0, (low - 1) // CHART_AXIS_STEP * CHART_AXIS_STEP)
    span = max(1, 100 - floor)
    chart = []
    for n, row in enumerate(rows):
        width = max(2, round((row.score - floor) * CHART_BAR / span))
        chart.append({"row": row, "y": n * CHART_ROW, "width": width, "value_x": CHART_BAR_X + width + 6})
    return chart, floor


def mark_placed(deal_id: int, rows: list[RankedRow]) -> None:
    """Mark each row whose lender the deal was placed with (its newest placement), in one query for
    the whole page."""
    from deals.placements.models import Placement  # the placements room reads searches, not the reverse

    if not rows:
        return
    newest: dict[int, Placement] = {}
    for placement in (Placement.objects.filter(deal_id=deal_id, lender_id__in={r.lender_id for r in rows})
                      .only("id", "lender_id", "status", "created_at").order_by("created_at", "id")):
        newest[placement.lender_id] = placement
    for row in rows:
        row.placement = newest.get(row.lender_id)


def page_number(request: HttpRequest, name: str = "page") -> int:
    """A page number from the query string: anything but digits reads as page 1, a number past
    PAGE_NUMBER_MAX as that (ranked_page then shows the last page there is)."""
    raw = request.GET.get(name, "")
    if not raw.isascii() or not raw.isdigit():
        return 1
    if len(raw) > len(str(limits.PAGE_NUMBER_MAX)):
        return limits.PAGE_NUMBER_MAX
    return min(max(1, int(raw)), limits.PAGE_NUMBER_MAX)


def criteria_summary(criteria: dict[str, Any]) -> list[tuple[str, str]]:
    """What a search ranked, as (label, value) rows instead of a JSON blob."""
    c = criteria or {}
    rows = [
        ("Loan amount", formatting.money(c.get("loan_amount"))),
        ("Loan type", formatting.label(c.get("loan_type") or "tbd")),
        ("Business plan", formatting.label(c["business_plan"]) if c.get("business_plan") else formatting.EMPTY),
        ("Transaction", formatting.label(c.get("transaction_type") or "tbd")),
        ("States", formatting.labels(c.get("states"))),
        ("Asset types", formatting.labels(c.get("asset_types"), ASSET_TYPES)),
        ("LTV", formatting.percent(c.get("ltv"))),
        ("Debt yield", formatting.percent(c.get("debt_yield"))),
        ("DSCR", formatting.multiple(c.get("dscr")) + (
            f" ({c['dscr_basis'].replace('_', '-')})" if c.get("dscr") is not None and c.get("dscr_basis") else "")),
        ("Properties", str(c.get("property_count", 0))),
    ]
    return rows


