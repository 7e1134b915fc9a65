"""Factories and builders for hand-made lender directories."""

from __future__ import annotations

from decimal import Decimal

import factory

from deals.models import Deal
from deals.searches.models import LenderSearch
from lenders.models import LenderActivity, LenderProgram
from lev.accounts.models import Account
from tests.factories import (
    AccountFactory,
    DealFactory,
    DealFinancialsFactory,
    DealPropertyFactory,
    LenderFactory,
    LenderProgramFactory,
)

__all__ = ["DealFactory", "DealPropertyFactory", "LenderActivityFactory", "LenderFactory",
           "LenderProgramFactory", "lender_with", "make_deal"]


class LenderActivityFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = LenderActivity

    account = factory.SubFactory(AccountFactory)
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


def searched_deal(account: Account, capture_on_commit, *, lenders: int) -> tuple[Deal, LenderSearch]:
    """A $10M deal with financials ($16M value, $1M NOI), searched against `lenders` fitting lenders;
    the search ran (jobs in-process: the `eager_jobs` fixture). `capture_on_commit`: pytest-django's
    `django_capture_on_commit_callbacks`, so the search's job runs inside the test's transaction."""
    from deals.searches import services as lender_services

    for n in range(lenders):
        lender_with(f"Lender {n:02d}")
    deal = make_deal(account, loan_amount=Decimal("10000000"))
    DealFinancialsFactory(deal=deal, estimated_value=Decimal("16000000"), in_place_noi=Decimal("1000000"))
    with capture_on_commit(execute=True):
        search, _ = lender_services.lender_search_start(deal=deal)
    return deal, refresh(search)
