"""The refusals of the placement workflow, one class each: the class builds the message, the
`customer_message` an agent may relay verbatim, and the details, so a service raises in one line.

What a refusal reports about the workflow (the moves allowed from a status, the statuses that take
quotes) it reads from the workflow table (`deals.placements.workflow`), the same the services check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deals.placements.models import Placement
from deals.placements.workflow import QUOTABLE_STATUSES, next_statuses
from lev.errors import BusinessRuleViolation, Conflict
from lev.limits import TERM_SHEETS_PER_DEAL_MAX

if TYPE_CHECKING:
    from collections.abc import Sequence

    from deals.models import Deal
    from deals.placements.models import TermSheet
    from deals.searches.models import LenderSearch

ARCHIVED_DEAL_MESSAGE = ("This deal is archived, so it can no longer be sent to lenders or take quotes. Archived "
                         "deals cannot be restored: create a new deal to continue.")


def _join(items: Sequence[str], last: str = "or") -> str:
    items = list(items)
    if not items:
        return "nothing"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {last} " + items[-1]


def _label(status: str) -> str:
    return status.replace("_", " ")


# --- the deal and its lender search -----------------------------------------------------------------
class ArchivedDealNotPlaceable(BusinessRuleViolation):
    """An archived deal takes no new placements, quotes or winner."""

    def __init__(self, deal: Deal):
        super().__init__(f"deal {deal.pk} is archived", customer_message=ARCHIVED_DEAL_MESSAGE,
                         details={"deal_id": deal.pk})


class SearchOfAnotherDeal(BusinessRuleViolation):
    def __init__(self, deal: Deal, search: LenderSearch):
        super().__init__(
            f"lender search {search.pk} ranked another deal, not deal {deal.pk}",
            customer_message="That lender search was run for a different deal. Search lenders for this deal, "
                             "then place it with the lenders found.",
            details={"deal_id": deal.pk, "search_id": search.pk},
        )


class SearchNotCompleted(BusinessRuleViolation):
    """The search is still pending or running, or it failed: it has no ranked list to place from."""

    def __init__(self, deal: Deal, search: LenderSearch, *, failed: bool):
        what = "failed; start a new lender search" if failed else "still running; wait until it is completed"
        super().__init__(
            f"lender search {search.pk} is {search.status}, not completed",
            customer_message=f"The lender search for this deal {what}, then place the deal with its lenders.",
            details={"deal_id": deal.pk, "search_id": search.pk, "search_status": search.status},
        )


class SearchPurged(BusinessRuleViolation):
    """A superseded search whose ranked lenders were removed after their retention."""

    def __init__(self, deal: Deal, search: LenderSearch):
        super().__init__(
            f"lender search {search.pk} was superseded and its ranked lenders were removed after retention",
            customer_message="That lender search was replaced by a newer search of this deal and its ranked list "
                             "is no longer kept. Place the deal from its latest lender search.",
            details={"deal_id": deal.pk, "search_id": search.pk},
        )


class ConcurrentPlacement(Conflict):
    """The database's one-open-placement-per-lender rule caught a write that skipped the deal lock."""

    def __init__(self, deal: Deal):
        super().__init__("another request placed this deal with one of these lenders at the same time; "
                         "list the deal's placements and try again", details={"deal_id": deal.pk})


# --- a placement's status and fields ----------------------------------------------------------------
class TransitionRefused(BusinessRuleViolation):
    """A status change the workflow does not allow from the placement's status; the message names
    every status a person may move it to from there (none for a final status)."""

    def __init__(self, placement: Placement, requested: str):
        allowed = next_statuses(placement.status)  # what allowed_next_statuses lists, in its order
        if requested == "quoted":
            how = "A placement becomes quoted when the lender's quote is recorded as a term sheet."
        elif requested == "won":
            how = "A placement is won by choosing one of its term sheets as the winning quote."
        elif not allowed:
            how = f"Its status is final ({_label(placement.status)}) and cannot change."
        else:
            how = f"From {_label(placement.status)} it can move to {_join([_label(s) for s in allowed])}."
        super().__init__(
            f"placement {placement.pk} cannot go from {placement.status} to {requested}; allowed next: "
            f"{', '.join(allowed) or 'none'}",
            customer_message=f"This placement is {_label(placement.status)}, so it can't be marked "
                             f"{_label(requested)}. {how}",
            details={"placement_id": placement.pk, "status": placement.status, "requested_status": requested,
                     "allowed_next_statuses": list(allowed)},
        )


class PlacementArchived(BusinessRuleViolation):
    """An edit of an archived placement's notes, contact or program: archived is final."""

    def __init__(self, placement: Placement):
        super().__init__(
            f"placement {placement.pk} is archived",
            customer_message="This placement is archived, so it can no longer be changed.",
            details={"placement_id": placement.pk, "status": placement.status},
        )


# --- term sheets (quotes) and the winner ------------------------------------------------------------
class PlacementNotQuotable(BusinessRuleViolation):
    """A quote recorded on a placement whose status takes none (QUOTABLE_STATUSES do)."""

    def __init__(self, placement: Placement):
        first = " Mark it sent first." if placement.status == Placement.Status.DRAFT else ""
        quotable = _join(QUOTABLE_STATUSES)  # "sent, reviewing or quoted"
        super().__init__(
            f"placement {placement.pk} is {placement.status}; a term sheet needs a {quotable} placement",
            customer_message=f"A quote can only be recorded for a placement that went to the lender and is still "
                             f"open ({quotable}); this one is {_label(placement.status)}.{first}",
            details={"placement_id": placement.pk, "status": placement.status,
                     "allowed_statuses": list(QUOTABLE_STATUSES)},
        )


class TooManyQuotes(BusinessRuleViolation):
    """The deal already holds TERM_SHEETS_PER_DEAL_MAX live quotes."""

    def __init__(self, deal: Deal):
        super().__init__(
            f"deal {deal.pk} already has {TERM_SHEETS_PER_DEAL_MAX} term sheets",
            customer_message=f"This deal already holds {TERM_SHEETS_PER_DEAL_MAX} quotes, the most one deal can "
                             "compare. Remove quotes that no longer matter before adding more.",
            details={"deal_id": deal.pk, "limit": TERM_SHEETS_PER_DEAL_MAX},
        )


class WinningQuoteNotRemovable(BusinessRuleViolation):
    def __init__(self, term_sheet: TermSheet):
        super().__init__(
            f"term sheet {term_sheet.pk} is the winning quote of deal {term_sheet.deal_id}",
            customer_message="This is the deal's winning quote, so it cannot be removed.",
            details={"term_sheet_id": term_sheet.pk, "deal_id": term_sheet.deal_id},
        )


class SecondWinner(BusinessRuleViolation):
    """A deal has one winner: `current` is the winning term sheet it already has."""

    def __init__(self, deal: Deal, current: TermSheet):
        super().__init__(
            f"deal {deal.pk} already has a winning term sheet ({current.pk})",
            customer_message=f"A winning quote was already chosen for this deal ({current.placement.lender.name}, "
                             f"term sheet {current.pk}). A deal has only one winner.",
            details={"deal_id": deal.pk, "winning_term_sheet_id": current.pk},
        )


class WinnerNotQuoted(BusinessRuleViolation):
    """Only a quote on an open, quoted placement can win."""

    def __init__(self, term_sheet: TermSheet, placement: Placement):
        super().__init__(
            f"placement {placement.pk} of term sheet {term_sheet.pk} is {placement.status}, not quoted",
            customer_message=f"This quote's placement is {_label(placement.status)}, so the quote can't win. Only "
                             "a quote on an open, quoted placement can be chosen.",
            details={"term_sheet_id": term_sheet.pk, "placement_id": placement.pk, "status": placement.status},
        )


class QuoteExpired(BusinessRuleViolation):
    """The quote's `expires_on` is before today: it cannot be chosen as the winner."""

    def __init__(self, term_sheet: TermSheet):
        expires_on = term_sheet.expires_on.isoformat()
        super().__init__(
            f"term sheet {term_sheet.pk} expired on {expires_on}",
            customer_message=f"This quote expired on {expires_on}. Ask the lender to extend "
                             "or reissue it, record the new quote, then choose it.",
            details={"term_sheet_id": term_sheet.pk, "expires_on": expires_on},
        )


class ConcurrentWinner(Conflict):
    """The database's one-winner-per-deal rule caught a write that skipped the deal lock."""

    def __init__(self, deal: Deal):
        super().__init__("another winning term sheet was chosen for this deal at the same time",
                         details={"deal_id": deal.pk})
