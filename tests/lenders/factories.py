"""Factories and builders for hand-made lender directories."""

from __future__ import annotations

from decimal import Decimal

import factory

from deals.models import Account, Deal
from lenders.models import LenderActivity, LenderProgram, LenderSearch
from tests.factories import DealFactory, DealPropertyFactory, LenderFactory, LenderProgramFactory

__all__ = ["DealFactory", "DealPropertyFactory", "LenderActivityFactory", "LenderFactory",
           "LenderProgramFactory", "lender_with", "make_deal"]


class LenderActivityFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = LenderActivity

    lender = factory.SubFactory(LenderFactory)
    state = "TX"
    quotes_90d = 10
    closings_90d = 3
    avg_response_hours = 12.0
    score = 0.5


def lender_with(name: str | None = None, **program_fields) -> LenderProgram:
    """A lender with one program; program fields override the factory's (which match `make_deal`)."""
    lender = LenderFactory(**({"name": name} if name else {}))
    return LenderProgramFactory(lender=lender, **program_fields)


def make_deal(account: Account, *, states: tuple[str, ...] = ("TX",), asset_types: tuple[str, ...] = ("multifamily",),
              **fields) -> Deal:
    """A deal with one property per (state, asset type) pair given in parallel."""
    values = {"loan_amount": Decimal("10000000"), "loan_type": "permanent", "business_plan": "stabilized", **fields}
    deal = DealFactory(account=account, **values)
    for state, asset in zip(states, asset_types, strict=True):
        DealPropertyFactory(deal=deal, state=state, asset_type=asset)
    return deal


def refresh(search: LenderSearch) -> LenderSearch:
    search.refresh_from_db()
    return search
