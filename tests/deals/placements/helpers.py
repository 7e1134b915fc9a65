"""Builders for placement and term sheet tests (REST, MCP, activity, concurrency)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from deals.models import Deal, Placement, TermSheet
from deals.placements import services as placement_services
from lenders.models import Lender
from tests.factories import DealFactory, DealFinancialsFactory, DealPropertyFactory, LenderFactory

FIXED = {"loan_amount": 10_000_000, "rate_type": "fixed", "fixed_rate": 6.0, "term_months": 120,
         "amortization_months": 360}


def deal_with_financials(account, **fields) -> Deal:
    """A $10M Texas multifamily deal valued at $16M with $1M of NOI."""
    deal = DealFactory(account=account, **fields)
    DealPropertyFactory(deal=deal, state="TX", asset_type="multifamily")
    DealFinancialsFactory(deal=deal, estimated_value=Decimal("16000000"), in_place_noi=Decimal("1000000"))
    return deal


def lenders(count: int) -> list[Lender]:
    return [LenderFactory() for _ in range(count)]


def place(deal: Deal, lender: Lender, *, status: str = "sent") -> Placement:
    """A placement of `deal` with `lender`, made by the service and moved on to `status`."""
    batch = placement_services.placements_create(deal=deal, lender_ids=[lender.pk], send=status != "draft")
    placement = batch.created[0]
    if status not in ("draft", "sent", "quoted"):
        placement_services.placement_update(placement=placement, data={"status": status})
    return placement


def quote(placement: Placement, **terms: Any) -> TermSheet:
    data = {"loan_amount": Decimal("10000000"), "rate_type": "fixed", "fixed_rate": Decimal("6.000"),
            "term_months": 120, "amortization_months": 360, **terms}
    return placement_services.term_sheet_add(placement=placement, data=data)
