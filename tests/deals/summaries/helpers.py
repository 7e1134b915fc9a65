"""Builders of deals in each state a summary handles, and the check that every cited source is what
the API serves for that record and field."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from django.utils import timezone

from deals.companies.models import Company
from deals.models import Deal, DealFinancials, LenderSearch, Placement
from deals.placements import services as placement_services
from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote
from tests.factories import DealPropertyFactory

API = "/api/v1"


def value_at(body: Any, field: str) -> Any:
    for part in field.split("."):
        body = body[int(part)] if isinstance(body, list) else body[part]
    return body


def check_sources(get, summary: dict[str, Any]) -> int:
    """Every source's value equals what its path serves at its field (`get(path)` -> parsed JSON);
    every [n] of the text has its source. Returns how many sources were checked."""
    served: dict[str, Any] = {}
    for source in summary["sources"]:
        if source["path"] not in served:
            served[source["path"]] = get(source["path"])
        assert value_at(served[source["path"]], source["field"]) == source["value"], source
        assert f"[{source['ref']}]" in summary["text"], source
    return len(summary["sources"])


def rest_get(api):
    def get(path: str) -> Any:
        response = api.get(API + path)
        assert response.status_code == 200, (path, response.content)
        return response.json()
    return get


def full_deal(account) -> Deal:
    """A $10M Texas multifamily deal valued at $16M with $1M NOI and a 6.5% rate, a sponsor and borrower."""
    deal = deal_with_financials(account, loan_amount=Decimal("10000000"), loan_type="permanent")
    DealFinancials.objects.filter(deal=deal).update(interest_rate=Decimal("6.5"), interest_only_months=24)
    deal.sponsor = Company.objects.create(account=account, kind="sponsor", name="Oak Sponsor LLC")
    deal.borrower = Company.objects.create(account=account, kind="borrower", name="Oak Borrower LP")
    deal.save()
    return deal


def searched(deal: Deal, *, status: str = "completed", matches: int = 3, **fields) -> LenderSearch:
    """A search of `deal` in `status`, with `matches` ranked lenders when it has results."""
    from deals.models import LenderMatch

    done = status in ("completed", "partial")
    search = LenderSearch.objects.create(
        account=deal.account, deal=deal, deal_version=deal.version, status=status, progress=100 if done else 40,
        total_matches=matches if done else 0, ranked_matches=matches if done else 0,
        finished_at=timezone.now() if status in ("completed", "failed") else None,
        started_at=timezone.now(), heartbeat_at=timezone.now(), attempts=1, queued_at=timezone.now(), **fields)
    for rank, lender in enumerate(lenders(matches if done else 0), start=1):
        LenderMatch.objects.create(search=search, rank=rank, lender=lender, score=100 - rank)
    return search


def placements_out(deal: Deal, count: int = 3, *, days_ago: int = 10, contact: bool = True) -> list[Placement]:
    placed = [place(deal, lender) for lender in lenders(count)]
    sent = timezone.now() - dt.timedelta(days=days_ago)
    Placement.objects.filter(pk__in=[p.pk for p in placed]).update(sent_at=sent)
    if contact:
        Placement.objects.filter(pk=placed[0].pk).update(contact_name="Dana Lee", contact_email="dana@lender.example")
    return placed


def quotes_in(deal: Deal) -> tuple[Placement, Placement]:
    """Two placements quoted: one fixed at 6.25 %, one floating over an index with no base rate."""
    fixed, floating = placements_out(deal, 2, days_ago=3)
    quote(fixed, fixed_rate=Decimal("6.25"), expires_on=timezone.localdate() + dt.timedelta(days=5))
    quote(floating, rate_type="floating", fixed_rate=None, rate_index="prime", spread_bps=250,
          loan_amount=Decimal("11000000"))
    return fixed, floating


def winner_chosen(deal: Deal):
    fixed, _ = quotes_in(deal)
    term_sheet = fixed.term_sheets.get()
    return placement_services.term_sheet_select_winner(term_sheet=term_sheet)


def many_properties(deal: Deal, count: int, **fields) -> None:
    for n in range(count):
        DealPropertyFactory(deal=deal, name=fields.pop("name", None) or f"Building {n}", state="TX",
                            asset_type="multifamily", units=100 + n, **fields)
