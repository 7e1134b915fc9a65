"""Writes to deals, API keys and accounts. Keyword-only, atomic; callers pass validated data."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from deals.companies.services import company_of_account
from deals.errors import DealArchived
from deals.models import Deal, DealFinancials, DealProperty, FigureSource
from deals.pipeline import services as pipeline
from lev.accounts.models import Account, Membership
from lev.errors import DealNotFound, NotFound
from lev.limits import AMORTIZATION_YEARS_DEFAULT

DEAL_FIELDS = (
    "title", "loan_amount", "loan_type", "transaction_type", "business_plan", "description",
    "estimated_close_date",
)
# The deal's companies: ids of the account's companies (another account's is NotFound, like a missing one).
COMPANY_FIELDS = ("sponsor", "borrower")
PROPERTY_FIELDS = (
    "name", "address", "city", "state", "zip", "asset_type", "units", "square_footage", "year_built",
)
FINANCIAL_FIELDS = (
    "purchase_price", "estimated_value", "in_place_noi", "stabilized_noi", "existing_debt", "cash_out",
    "interest_rate", "amortization_years", "interest_only_months",
)


def _check_not_archived(deal: Deal, action: str) -> None:
    if deal.archived:
        raise DealArchived(deal, action)


def _lock_deal(deal: Deal) -> Deal:
    """Lock the deal's row until the transaction ends and reload `deal` from it.

    Every write that bumps the version takes this lock first, so a check (archived?) and the bump
    act on the row as it is, and two writers take turns instead of one losing the other's bump.
    A lender search start locks the same row, so it always ranks the version it records.
    """
    try:
        deal.refresh_from_db(from_queryset=Deal.objects.select_for_update())
    except Deal.DoesNotExist:
        raise DealNotFound(deal.pk) from None
    return deal


def _bump_version(deal: Deal, **changes: Any) -> None:
    """Write `changes` and version + 1 in the database (never a version computed in Python)."""
    Deal.objects.filter(pk=deal.pk).update(**changes, version=F("version") + 1, updated_at=timezone.now())
    deal.refresh_from_db(fields=["version", "updated_at"])


def _owner(account_id: int, user_id: int | None):
    """The user of `user_id` when a member of the account (a deal's owner), else NOT_FOUND: a user of
    another account, or none, is "Member not found" alike (as another account's company is)."""
    if user_id is None:
        return None
    membership = Membership.objects.select_related("user").filter(account_id=account_id, user_id=user_id).first()
    if membership is None:
        raise NotFound("Member", user_id)
    return membership.user


@transaction.atomic
def deal_create(*, account: Account, user, data: dict[str, Any]) -> Deal:
    """A new deal in the account's first stage (recorded as its start), owned by `data["owner_id"]`
    (a member) or else by its creator."""
    properties = data.get("properties") or []
    companies = {name: company_of_account(account=account, company_id=data.get(f"{name}_id"))
                 for name in COMPANY_FIELDS}
    creator = user if getattr(user, "pk", None) else None
    owner = _owner(account.pk, data.get("owner_id")) or creator
    deal = Deal.objects.create(
        account=account,
        created_by=creator,
        owner=owner,
        **{name: data[name] for name in DEAL_FIELDS if name in data and data[name] is not None},
        **companies,
    )
    pipeline.record_start(deal=deal, user=creator)
    DealProperty.objects.bulk_create(
        [DealProperty(deal=deal, **{k: v for k, v in p.items() if v is not None}) for p in properties]
    )
    return deal


@transaction.atomic
def deal_update(*, deal: Deal, data: dict[str, Any]) -> Deal:
    """Change the given fields; bumps the version when anything changed. `deal` is reloaded."""
    _lock_deal(deal)
    _check_not_archived(deal, "updated")
    changes = {}
    for name in DEAL_FIELDS:
        if name not in data:
            continue
        value = data[name]
        if value is None and name in ("loan_type", "transaction_type"):
            value = "tbd"
        elif value is None and name in ("business_plan", "description"):
            value = ""
        if getattr(deal, name) != value:
            changes[name] = value
    # Looked up (another account's company is NotFound) before anything is written.
    companies = {name: company_of_account(account=deal.account, company_id=data[f"{name}_id"])
                 for name in COMPANY_FIELDS if f"{name}_id" in data}
    companies = {name: company for name, company in companies.items()
                 if getattr(deal, f"{name}_id") != (company.pk if company else None)}
    if changes:
        _bump_version(deal, **changes)
        for name, value in changes.items():
            setattr(deal, name, value)
    # Nor are the sponsor and borrower: a lender search of the deal stays current when they change.
    if companies:
        Deal.objects.filter(pk=deal.pk).update(**companies, updated_at=timezone.now())
        for name, company in companies.items():
            setattr(deal, name, company)
        deal.refresh_from_db(fields=["updated_at"])
    # Who runs the deal is not what a lender search ranks: a new owner leaves the version alone.
    if "owner_id" in data and data["owner_id"] != deal.owner_id:
        deal.owner = _owner(deal.account_id, data["owner_id"])
        Deal.objects.filter(pk=deal.pk).update(owner=deal.owner, updated_at=timezone.now())
        deal.refresh_from_db(fields=["updated_at"])
    return deal


@transaction.atomic
def deal_archive(*, deal: Deal) -> Deal:
    """Soft-delete. Archiving an archived deal changes nothing (safe to repeat). `deal` is reloaded."""
    _lock_deal(deal)
    if not deal.archived:
        now = timezone.now()
        _bump_version(deal, archived=True, archived_at=now)
        deal.archived, deal.archived_at = True, now
    return deal


@transaction.atomic
def deal_property_create(*, deal: Deal, data: dict[str, Any]) -> DealProperty:
    _lock_deal(deal)
    _check_not_archived(deal, "changed")
    prop = DealProperty.objects.create(
        deal=deal, **{k: data[k] for k in PROPERTY_FIELDS if data.get(k) is not None}
    )
    _bump_version(deal)
    return prop


@transaction.atomic
def deal_property_update(*, prop: DealProperty, data: dict[str, Any]) -> DealProperty:
    deal = _lock_deal(prop.deal)
    _check_not_archived(deal, "changed")
    changed = [k for k in PROPERTY_FIELDS if k in data]
    for name in changed:
        value = data[name]
        if value is None and name not in ("units", "square_footage", "year_built"):
            value = ""
        setattr(prop, name, value)
    if changed:
        prop.save(update_fields=[*changed, "updated_at"])
        _bump_version(deal)
    if "units" in changed:  # units set by hand no longer come from a rent roll (deals.documents.figures)
        FigureSource.objects.filter(deal=deal, field="units").delete()
    return prop


@transaction.atomic
def deal_property_delete(*, prop: DealProperty) -> None:
    """Remove a property from its deal (a property is part of the deal's description, not a record
    of its own to keep: nothing else refers to it). Changes the deal, so its version goes up and a
    lender search of the old description is not reused."""
    deal = _lock_deal(prop.deal)
    _check_not_archived(deal, "changed")
    prop.delete()
    _bump_version(deal)


@transaction.atomic
def deal_financials_update(*, deal: Deal, data: dict[str, Any]) -> DealFinancials:
    _lock_deal(deal)
    _check_not_archived(deal, "changed")
    financials, _ = DealFinancials.objects.select_for_update().get_or_create(deal=deal)
    changed = [k for k in FINANCIAL_FIELDS if k in data]
    for name in changed:
        value = data[name]
        if value is None and name == "amortization_years":  # null puts back the default
            value = AMORTIZATION_YEARS_DEFAULT
        elif value is None and name == "interest_only_months":  # null: no interest-only period
            value = 0
        setattr(financials, name, value)
    if changed:
        financials.save(update_fields=[*changed, "updated_at"])
        _bump_version(deal)
        # A figure set by hand no longer comes from its document (deals.documents.figures).
        FigureSource.objects.filter(deal=deal, field__in=changed).delete()
    financials.deal = deal
    return financials
