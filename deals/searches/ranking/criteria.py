"""What a deal asks lenders for, captured once when a search starts."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import Any

from deals.models import Deal, DealFinancials, DealProperty

# Deals ask for senior debt today; a mezzanine or preferred-equity search would add a position
# argument to the search and set it here.
DEFAULT_POSITION = "senior"


@dataclass(frozen=True)
class DealCriteria:
    loan_amount: float
    loan_type: str = "tbd"  # "tbd": no loan-type filter
    business_plan: str = ""
    transaction_type: str = "tbd"
    states: tuple[str, ...] = ()
    asset_types: tuple[str, ...] = ()
    position: str = DEFAULT_POSITION
    ltv: float | None = None  # percent
    dscr: float | None = None  # the one lenders underwrite (DealFinancials.dscr), which the ranking scores
    property_count: int = 0
    # Shown beside it in the insights (searches recorded before issue 22 lack them: None).
    dscr_basis: str | None = None
    dscr_interest_only: float | None = None
    dscr_amortizing: float | None = None
    debt_yield: float | None = None  # percent
    # What sizing reads (issue 37; None in searches recorded before it, and where the deal lacks them).
    value: float | None = None  # estimated value, else purchase price
    noi: float | None = None  # in place, else stabilized
    interest_rate: float | None = None  # percent
    amortization_years: int | None = None
    interest_only_months: int | None = None
    # Whose own lenders and programs are candidates beside the directory's: the deal's account (None in
    # searches recorded before issue 38: the directory alone). lenders.selectors.visible.
    account_id: int | None = None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["states"] = list(self.states)
        data["asset_types"] = list(self.asset_types)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DealCriteria:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["states"] = tuple(known.get("states") or ())
        known["asset_types"] = tuple(known.get("asset_types") or ())
        return cls(**known)


# What is missing names the first few properties that lack something and counts the rest, and
# clips long names, so the message of a refused search and each deal of a list stay short.
MISSING_PROPERTIES_NAMED = 3
LABEL_NAME_MAX = 40
# The property fields the rule reads (lists load only these).
READINESS_FIELDS = ("id", "deal_id", "name", "state", "asset_type")


def _label(prop: DealProperty) -> str:
    name = prop.name if len(prop.name) <= LABEL_NAME_MAX else prop.name[: LABEL_NAME_MAX - 1] + "…"
    return f"property {name!r} (id {prop.pk})"


def missing_for_search(deal: Deal, properties: list[DealProperty]) -> list[str]:
    """What the deal lacks before lenders can be matched, each phrased for a person; [] = ready.

    The one statement of the rule: the search start refuses with it, and deal lists show it."""
    missing: list[str] = []
    if not deal.loan_amount or deal.loan_amount <= 0:
        missing.append("a loan amount")
    if not properties:
        missing.append("at least one property")
    lacking = []
    for prop in properties:
        lacks = [name for name, value in (("state", prop.state), ("asset type", prop.asset_type)) if not value]
        if lacks:
            lacking.append(f"{' and '.join(lacks)} of {_label(prop)}")
    missing += lacking[:MISSING_PROPERTIES_NAMED]
    if len(lacking) > MISSING_PROPERTIES_NAMED:
        more = len(lacking) - MISSING_PROPERTIES_NAMED
        missing.append(f"state or asset type of {more} more {'property' if more == 1 else 'properties'}")
    return missing


def criteria_from_deal(deal: Deal, properties: list[DealProperty],
                       financials: DealFinancials | None) -> DealCriteria:
    """The deal as the ranking sees it. Call only when `missing_for_search` is empty."""
    figures: dict[str, Any] = {}
    if financials is not None:
        financials.deal = deal  # the ratios read the loan amount and type from the deal
        figures = {name: _float(getattr(financials, name))
                   for name in ("ltv", "dscr", "dscr_interest_only", "dscr_amortizing", "debt_yield")}
        figures["dscr_basis"] = financials.dscr_basis
        figures["value"] = _float(financials.estimated_value or financials.purchase_price)
        figures["noi"] = _float(financials.noi)
        figures["interest_rate"] = _float(financials.interest_rate)
        figures["amortization_years"] = financials.amortization_years
        figures["interest_only_months"] = financials.interest_only_months
    return DealCriteria(
        loan_amount=float(deal.loan_amount),
        loan_type=deal.loan_type or "tbd",
        business_plan=deal.business_plan or "",
        transaction_type=deal.transaction_type or "tbd",
        states=tuple(sorted({p.state for p in properties if p.state})),
        asset_types=tuple(sorted({p.asset_type for p in properties if p.asset_type})),
        property_count=len(properties),
        account_id=deal.account_id,
        **figures,
    )


def _float(value: Decimal | None) -> float | None:
    return None if value is None else float(value)
