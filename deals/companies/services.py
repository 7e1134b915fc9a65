"""Writes to companies and contacts. Keyword-only, atomic; callers pass validated data. A company or
contact named by id is looked up in the caller's account (another account's is NotFound, like a
missing one)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from deals.companies import selectors
from deals.companies.errors import ContactNotAtLender
from deals.companies.models import Company, Contact
from lenders.models import Lender
from lenders.selectors import visible
from lev.accounts.models import Account
from lev.errors import LenderNotFound, ValidationFailed
from lev.records import save_changes

COMPANY_FIELDS = ("kind", "name", "website", "location", "notes")
CONTACT_FIELDS = ("name", "title", "email", "phone", "notes")


def _text(data: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """The given fields, a null text written as empty."""
    return {name: ("" if data[name] is None else data[name]) for name in fields if name in data}


@transaction.atomic
def company_create(*, account: Account, data: dict[str, Any]) -> Company:
    return Company.objects.create(account=account, **_text(data, COMPANY_FIELDS))


@transaction.atomic
def company_update(*, company: Company, data: dict[str, Any]) -> Company:
    return save_changes(company, _text(data, COMPANY_FIELDS))


def lender_for_contacts(lender_id: int, *, account: Account) -> Lender:
    """A lender the account reads (the directory's, where every account may keep contacts, or its own),
    or LenderNotFound (another account's own lender, like a missing one)."""
    lender = Lender.objects.filter(visible(account.pk), pk=lender_id).first()
    if lender is None:
        raise LenderNotFound(lender_id)
    return lender


@transaction.atomic
def contact_create(*, account: Account, data: dict[str, Any], company: Company | None = None,
                   lender: Lender | None = None) -> Contact:
    """A person at the account's `company`, or at the directory `lender` (exactly one)."""
    if (company is None) == (lender is None):
        raise ValidationFailed({"non_field_errors": ["a contact is at a company or at a lender, not both"]})
    if company is not None and company.account_id != account.pk:
        raise ValueError("the company is another account's")  # callers look it up in the account
    return Contact.objects.create(account=account, company=company, lender=lender, **_text(data, CONTACT_FIELDS))


@transaction.atomic
def contact_update(*, contact: Contact, data: dict[str, Any]) -> Contact:
    return save_changes(contact, _text(data, CONTACT_FIELDS))


def company_of_account(*, account: Account, company_id: int | None) -> Company | None:
    """For a deal's sponsor or borrower: the account's company, None for null, or NotFound."""
    return None if company_id is None else selectors.company_get(account=account, company_id=company_id)


def lender_contact_for(*, account: Account, contact_id: int, lender_id: int) -> Contact:
    """For a placement: the account's contact at lender `lender_id`. Another account's contact is
    NotFound (like a missing one); the account's contact at a company or at another lender is
    ContactNotAtLender, saying where it is."""
    contact = selectors.contact_get(account=account, contact_id=contact_id)
    if contact.lender_id != lender_id:
        raise ContactNotAtLender(contact, lender_id)
    return contact
