"""The refusals of an account's deal work that are not about one subpackage: each class builds its
own message, `customer_message` and details, so a service raises it in one line. (Placements and
lender searches keep theirs in `deals/placements/errors.py` and `deals/searches/errors.py`.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lev.errors import BusinessRuleViolation

if TYPE_CHECKING:
    from deals.models import Deal

# Archiving is final (a soft delete that keeps the record): the message says what to do instead.
ARCHIVED_CUSTOMER_MESSAGE = (
    "This deal is archived, so it can no longer be changed. Archived deals cannot be restored: "
    "create a new deal to continue."
)


class DealArchived(BusinessRuleViolation):
    """A change to an archived deal (its fields, properties or financials); `action` says which,
    as in "cannot be updated"."""

    def __init__(self, deal: Deal, action: str):
        super().__init__(
            f"deal {deal.pk} is archived and cannot be {action}",
            customer_message=ARCHIVED_CUSTOMER_MESSAGE,
            details={"deal_id": deal.pk},
        )
