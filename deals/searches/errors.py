"""Why a deal cannot be searched for lenders: each refusal builds its own message, `customer_message`
(safe to relay) and details, so `check_deal_searchable` raises in one line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lev.errors import BusinessRuleViolation

if TYPE_CHECKING:
    from deals.models import Deal


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


class ArchivedDealNotSearchable(BusinessRuleViolation):
    def __init__(self, deal: Deal):
        super().__init__(
            f"deal {deal.pk} is archived",
            customer_message="This deal is archived, so lenders can no longer be searched for it.",
            details={"deal_id": deal.pk},
        )


class DealNotReadyForSearch(BusinessRuleViolation):
    """The deal lacks what the ranking needs; `missing` names each thing (e.g. "a loan amount")."""

    def __init__(self, deal: Deal, missing: list[str]):
        super().__init__(
            f"deal {deal.pk} is not ready for a lender search: it needs {_join(missing)}",
            customer_message=f"This deal can't be matched with lenders yet. Add {_join(missing)}, then search again.",
            details={"deal_id": deal.pk, "missing": missing},
        )
