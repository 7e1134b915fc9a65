"""Reads of companies and contacts, always scoped to one account: another account's company or
contact is NotFound, exactly like a missing one."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, QuerySet

from deals.companies.models import Company, Contact
from lev.accounts.models import Account
from lev.errors import NotFound
from lev.limits import MAX_ID


@dataclass(frozen=True)
class CompanyFilters:
    kind: str | None = None
    search: str | None = None


def company_list(*, account: Account, filters: CompanyFilters) -> QuerySet[Company]:
    """The account's companies by name (then id), each with its contact count."""
    qs = Company.objects.filter(account=account)
    if filters.kind:
        qs = qs.filter(kind=filters.kind)
    if filters.search:
        qs = qs.filter(name__icontains=filters.search)
    return qs.annotate(contact_count=Count("contacts")).order_by("name", "id")


def company_get(*, account: Account, company_id: int) -> Company:
    if not 0 < company_id <= MAX_ID:
        raise NotFound("Company", company_id)
    found = list(Company.objects.filter(account=account, pk=company_id)
                 .annotate(contact_count=Count("contacts")).order_by()[:1])
    if not found:
        raise NotFound("Company", company_id)
    return found[0]


def contact_list(*, account: Account, company: Company | None = None, lender_id: int | None = None,
                 search: str | None = None) -> QuerySet[Contact]:
    """The account's contacts at a company or at a lender, by name (then id)."""
    qs = Contact.objects.filter(account=account).select_related("company", "lender")
    if company is not None:
        qs = qs.filter(company=company)
    if lender_id is not None:
        qs = qs.filter(lender_id=lender_id)
    if search:
        qs = qs.filter(name__icontains=search)
    return qs.order_by("name", "id")


def contact_get(*, account: Account, contact_id: int) -> Contact:
    if not 0 < contact_id <= MAX_ID:
        raise NotFound("Contact", contact_id)
    found = list(Contact.objects.filter(account=account, pk=contact_id).select_related("company", "lender")
                 .order_by()[:1])
    if not found:
        raise NotFound("Contact", contact_id)
    return found[0]
