"""The refusals of companies and contacts: each class builds its own message, `customer_message` and
details, so a service raises it in one line. A well-formed contact id that names the wrong person is a
rule about the records (BUSINESS_RULE), not bad input; another account's contact is NotFound."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lev.errors import BusinessRuleViolation

if TYPE_CHECKING:
    from deals.companies.models import Contact


def _where(contact: Contact) -> str:
    return (f"at lender {contact.lender_id}" if contact.lender_id is not None
            else f"at company {contact.company_id}, not at a lender")


class ContactNotAtLender(BusinessRuleViolation):
    """A placement is sent to the account's contact at the placement's own lender."""

    def __init__(self, contact: Contact, lender_id: int):
        super().__init__(
            f"contact {contact.pk} is {_where(contact)}; the placement's lender is {lender_id}",
            customer_message="That person is not one of your contacts at this lender. Choose a contact at this "
                             "lender, or add one.",
            details={"contact_id": contact.pk, "lender_id": lender_id},
        )


class ContactNotPlaced(BusinessRuleViolation):
    """Placing with lenders names contacts at those lenders only."""

    def __init__(self, contact: Contact):
        where = _where(contact) + (", which this call does not place" if contact.lender_id is not None else "")
        super().__init__(
            f"contact {contact.pk} is {where}",
            customer_message="Each contact named must be one of your contacts at a lender this deal is being "
                             "placed with.",
            details={"contact_id": contact.pk},
        )
