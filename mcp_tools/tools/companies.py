"""Company and contact tools: the account's sponsors, borrowers, brokers and others, the people at
them, and the account's own contacts at directory lenders (which placements are sent to).

In deals:read / deals:write: companies and contacts are part of the account's deal records (a deal
names its sponsor and borrower), so a credential that may change deals may keep them (docs/companies.md).
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from pydantic import Field

from lev import limits
from lev.accounts.scopes import DEALS_READ, DEALS_WRITE
from lev.enums import COMPANY_KINDS
from mcp_tools.addresses import Address, at
from mcp_tools.errors import validation_failure
from mcp_tools.registry import lev, tool
from mcp_tools.tools.common import (
    Cursor,
    Id,
    Limit,
    Text,
    clip,
    cursor_at,
    cut_nested,
    decode_page_cursor,
    drop_none,
    get_page,
    read_page,
)
from mcp_tools.tools.deals import require_change

CompanyId = Id(None)
ContactId = Id(None)
Kind = Literal[COMPANY_KINDS]  # type: ignore[valid-type]
CompanyName = Text(limits.COMPANY_NAME_MAX, required=True)
Website = Annotated[str, Field(max_length=limits.COMPANY_WEBSITE_MAX, pattern=limits.WEBSITE_PATTERN,
                               description="https://…")]
Location = Text(limits.COMPANY_LOCATION_MAX, "City, state or address.")
CompanyNotes = Text(limits.COMPANY_NOTES_MAX)
PersonName = Text(limits.CONTACT_NAME_MAX, required=True)
JobTitle = Text(limits.CONTACT_TITLE_MAX)
Email = Annotated[str, Field(max_length=limits.EMAIL_MAX, pattern=limits.EMAIL_PATTERN)]
Phone = Annotated[str, Field(max_length=limits.CONTACT_PHONE_MAX, pattern=limits.PHONE_PATTERN,
                             description="+1 212 555 0100 x12")]
ContactNotes = Text(limits.CONTACT_NOTES_MAX)
IdempotencyKey = Annotated[str | None, Field(pattern=limits.IDEMPOTENCY_KEY_PATTERN,
                                             description="Reuse to repeat a create safely.")]
NAME_SHOWN = 120
CLIPPED = ("name", "title", "company_name", "lender_name")
CONTACT_KEYS = ("id", "name", "title", "email", "phone", "company_id", "company_name", "lender_id", "lender_name",
                "notes")


def _company(item: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "kind", "name", "website", "location", "contact_count")
    return {k: item.get(k) for k in keys}


def _contact(item: dict[str, Any]) -> dict[str, Any]:
    return {k: item.get(k) for k in CONTACT_KEYS if item.get(k) is not None}


COMPANY_STEPS = [lambda c: {**c, "name": clip(c["name"], NAME_SHOWN), "website": clip(c.get("website"), 80),
                            "location": clip(c.get("location"), 80)}]
CONTACT_STEPS = [
    lambda c: {**c, "notes": clip(c.get("notes"), 200)},
    lambda c: {k: clip(v, NAME_SHOWN) if k in CLIPPED else v for k, v in c.items() if k != "notes"},
]
CONTACTS_SHOWN = limits.PAGE_SIZE_DEFAULT


def _where(company_id: int | None, lender_id: int | None) -> Address:
    """The contacts address of exactly one of a company or a lender."""
    if (company_id is None) == (lender_id is None):
        raise validation_failure({"company_id": ["pass company_id or lender_id (one of them)"]},
                                 message="Validation failed: pass company_id or lender_id (one of them)")
    if company_id is not None:
        return at("/companies/{company_id}/contacts/", company_id=company_id)
    return at("/lenders/{lender_id}/contacts/", lender_id=lender_id)


@tool(title="List companies", scope=DEALS_READ, read_only=True)
def list_companies(
    kind: Kind | None = None,
    search: Annotated[Text(limits.SEARCH_TEXT_MAX) | None, Field(description="Words in the name.")] = None,
    limit: Limit = limits.PAGE_SIZE_DEFAULT,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """List the account's companies (sponsors, borrowers, brokers, others) by name.
    Returns {"companies", "total", "has_more", "next_cursor"}."""
    page, size, skip = decode_page_cursor(cursor, limit)
    body = get_page("/companies/", drop_none(kind=kind, search=search, page=page, page_size=size), page)
    return read_page(body, "companies", page, size, skip, [_company(c) for c in body["results"]], COMPANY_STEPS)


@tool(title="Get a company", scope=DEALS_READ, read_only=True)
def get_company(company_id: CompanyId) -> dict[str, Any]:
    """Get a company with notes and its first contacts (the rest: list_contacts)."""
    company = lev().get(at("/companies/{company_id}/", company_id=company_id))
    page = lev().get(at("/companies/{company_id}/contacts/", company_id=company_id), {"page_size": CONTACTS_SHOWN})
    company["contacts"] = [CONTACT_STEPS[1](_contact(c)) for c in page["results"]]
    return cut_nested({"company": company}, "company", "contacts", page["count"], lambda kept: {
        "tool": "list_contacts", "arguments": {"company_id": company_id, "cursor": cursor_at(kept, CONTACTS_SHOWN)},
    })


@tool(title="Create a company", scope=DEALS_WRITE, destructive=False, idempotent=False)
def create_company(
    kind: Kind,
    name: CompanyName,
    website: Website | None = None,
    location: Location | None = None,
    notes: CompanyNotes | None = None,
    idempotency_key: IdempotencyKey = None,
) -> dict[str, Any]:
    """Add a sponsor, borrower (borrowing entity), broker or other company to the account.
    A deal names one as sponsor_id or borrower_id."""
    body = drop_none(kind=kind, name=name, website=website, location=location, notes=notes)
    return {"company": lev().post("/companies/", body, idempotency_key=idempotency_key or f"mcp-{uuid.uuid4()}")}


@tool(title="Update a company", scope=DEALS_WRITE, idempotent=True)
def update_company(
    company_id: CompanyId,
    kind: Kind | None = None,
    name: CompanyName | None = None,
    website: Website | None = None,
    location: Location | None = None,
    notes: Annotated[CompanyNotes | None, Field(description="Replaces the notes.")] = None,
) -> dict[str, Any]:
    """Change some fields of a company (at least one); those left out stay."""
    body = drop_none(kind=kind, name=name, website=website, location=location, notes=notes)
    require_change(body, "company_id")
    return {"company": lev().patch(at("/companies/{company_id}/", company_id=company_id), body)}


@tool(title="List contacts", scope=DEALS_READ, read_only=True)
def list_contacts(
    company_id: CompanyId | None = None,
    lender_id: Annotated[Id(None) | None, Field(description="The account's contacts at this lender.")] = None,
    limit: Limit = limits.PAGE_SIZE_DEFAULT,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """List the people at a company, or the account's contacts at a lender (pass one id).
    Returns {"contacts", "total", "has_more", "next_cursor"}."""
    path = _where(company_id, lender_id)
    page, size, skip = decode_page_cursor(cursor, limit)
    body = get_page(path, {"page": page, "page_size": size}, page)
    return read_page(body, "contacts", page, size, skip, [_contact(c) for c in body["results"]], CONTACT_STEPS)


@tool(title="Add a contact", scope=DEALS_WRITE, destructive=False, idempotent=False)
def add_contact(
    name: PersonName,
    company_id: CompanyId | None = None,
    lender_id: Annotated[Id(None) | None, Field(description="A directory lender.")] = None,
    title: JobTitle | None = None,
    email: Email | None = None,
    phone: Phone | None = None,
    notes: ContactNotes | None = None,
    idempotency_key: IdempotencyKey = None,
) -> dict[str, Any]:
    """Add a person at a company, or at a lender (one id): lender contacts are this account's only,
    and placements to that lender can be sent to them (contact_id)."""
    path = _where(company_id, lender_id)
    body = drop_none(name=name, title=title, email=email, phone=phone, notes=notes)
    return {"contact": _contact(lev().post(path, body, idempotency_key=idempotency_key or f"mcp-{uuid.uuid4()}"))}


@tool(title="Update a contact", scope=DEALS_WRITE, idempotent=True)
def update_contact(
    contact_id: ContactId,
    name: PersonName | None = None,
    title: JobTitle | None = None,
    email: Email | None = None,
    phone: Phone | None = None,
    notes: Annotated[ContactNotes | None, Field(description="Replaces the notes.")] = None,
) -> dict[str, Any]:
    """Change some fields of a contact (at least one); those left out stay."""
    body = drop_none(name=name, title=title, email=email, phone=phone, notes=notes)
    require_change(body, "contact_id")
    return {"contact": _contact(lev().patch(at("/contacts/{contact_id}/", contact_id=contact_id), body))}
