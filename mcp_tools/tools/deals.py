"""Deal tools."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mcp_tools.errors import validation_failure
from mcp_tools.registry import lev, tool
from mcp_tools.tools.common import (
    AssetType,
    BusinessPlan,
    Cursor,
    Limit,
    LoanType,
    Money,
    StateCode,
    TransactionType,
    decode_cursor,
    drop_none,
    page_result,
)

DealId = Annotated[int, Field(ge=1, description="Deal id (from list_deals or create_deal).")]


class PropertyInput(BaseModel):
    """A property of a deal."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, Field(min_length=1, max_length=200, description="Property name.")]
    address: Annotated[str | None, Field(max_length=255, description="Street address.")] = None
    city: Annotated[str | None, Field(max_length=100)] = None
    state: Annotated[StateCode | None, Field(description="2-letter US state code, e.g. TX.")] = None
    zip: Annotated[str | None, Field(pattern=r"^\d{5}(-\d{4})?$", description="5-digit ZIP.")] = None
    asset_type: AssetType | None = None
    units: Annotated[int | None, Field(ge=0, description="Residential units / keys.")] = None
    square_footage: Annotated[int | None, Field(ge=0, description="Rentable square feet.")] = None
    year_built: Annotated[int | None, Field(ge=1700, le=2100)] = None


def _deal_summary(deal: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "title", "loan_amount", "loan_type", "transaction_type", "business_plan",
            "estimated_close_date", "archived", "property_count")
    return {k: deal[k] for k in keys if k in deal}


def _deal_body(*, estimated_close_date: dt.date | None, **fields: Any) -> dict[str, Any]:
    """The REST body for these deal fields: unset (None) ones left out, the date as YYYY-MM-DD."""
    return drop_none(estimated_close_date=estimated_close_date.isoformat() if estimated_close_date else None,
                     **fields)


@tool(title="List deals", read_only=True)
def list_deals(
    loan_type: LoanType | None = None,
    transaction_type: TransactionType | None = None,
    business_plan: BusinessPlan | None = None,
    min_loan_amount: Annotated[float | None, Field(ge=0, description="US dollars.")] = None,
    max_loan_amount: Annotated[float | None, Field(ge=0, description="US dollars.")] = None,
    archived: Annotated[bool, Field(description="true lists archived deals instead of active ones.")] = False,
    search: Annotated[str | None, Field(max_length=200, description="Words in the deal title.")] = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """List the user's deals, newest first, one page at a time.

    Use it to find a deal id or to see the pipeline. All filters are optional and combine with
    AND; loan amounts are US dollars. Returns {"deals": [compact deal], "total", "has_more",
    "next_cursor"}; pass next_cursor back to get the next page. No match is an empty list.
    """
    page, size = decode_cursor(cursor, limit)
    body = lev().get("/deals/", drop_none(
        loan_type=loan_type, transaction_type=transaction_type, business_plan=business_plan,
        min_loan_amount=min_loan_amount, max_loan_amount=max_loan_amount,
        archived="true" if archived else None, search=search, page=page, page_size=size,
    ))
    return page_result("deals", body, page, size, [_deal_summary(d) for d in body["results"]])


@tool(title="Get a deal", read_only=True)
def get_deal(
    deal_id: DealId,
    include: Annotated[
        list[Literal["properties", "financials"]] | None,
        Field(description="Related data to include: properties, financials (LTV/DSCR derived)."),
    ] = None,
) -> dict[str, Any]:
    """Get one deal by id, optionally with its properties and financials.

    Amounts are US dollars; ltv is percent. A deal that does not exist (or belongs to another
    account) is a NOT_FOUND error.
    """
    query = {"include": ",".join(dict.fromkeys(include))} if include else None
    return {"deal": lev().get(f"/deals/{deal_id}/", query)}


# Not idempotent by itself: only a repeated idempotency_key makes a repeat harmless.
@tool(title="Create a deal", destructive=False, idempotent=False)
def create_deal(
    title: Annotated[str, Field(min_length=1, max_length=200, description="Deal name.")],
    loan_amount: Money | None = None,
    loan_type: LoanType | None = None,
    transaction_type: TransactionType | None = None,
    business_plan: BusinessPlan | None = None,
    description: Annotated[str | None, Field(max_length=5000)] = None,
    estimated_close_date: Annotated[dt.date | None, Field(description="YYYY-MM-DD.")] = None,
    properties: Annotated[
        list[PropertyInput] | None, Field(max_length=50, description="Properties to add (max 50).")
    ] = None,
    idempotency_key: Annotated[
        str | None,
        Field(max_length=255, description="Optional. Reuse the same key when repeating a create whose "
                                          "result you did not get: no second deal is made."),
    ] = None,
) -> dict[str, Any]:
    """Create a deal (a financing request) in the user's account, with optional properties.

    loan_amount is the requested loan in US dollars. Safe to repeat with the same
    idempotency_key. Returns {"deal": {...}} with the new id and its properties.
    """
    body = _deal_body(
        title=title, loan_amount=loan_amount, loan_type=loan_type, transaction_type=transaction_type,
        business_plan=business_plan, description=description, estimated_close_date=estimated_close_date,
        properties=[p.model_dump(exclude_none=True) for p in properties] if properties else None,
    )
    key = idempotency_key or f"mcp-{uuid.uuid4()}"
    return {"deal": lev().post("/deals/", body, idempotency_key=key)}


@tool(title="Update a deal", idempotent=True)
def update_deal(
    deal_id: DealId,
    title: Annotated[str | None, Field(min_length=1, max_length=200)] = None,
    loan_amount: Money | None = None,
    loan_type: LoanType | None = None,
    transaction_type: TransactionType | None = None,
    business_plan: BusinessPlan | None = None,
    description: Annotated[str | None, Field(max_length=5000)] = None,
    estimated_close_date: Annotated[dt.date | None, Field(description="YYYY-MM-DD.")] = None,
) -> dict[str, Any]:
    """Change some fields of a deal; fields you leave out stay as they are.

    Archived deals cannot be changed (BUSINESS_RULE). Returns {"deal": {...}}.
    """
    body = _deal_body(
        title=title, loan_amount=loan_amount, loan_type=loan_type, transaction_type=transaction_type,
        business_plan=business_plan, description=description, estimated_close_date=estimated_close_date,
    )
    if not body:
        raise validation_failure({"deal_id": ["was given without any field to change"]},
                                 message="Validation failed: pass at least one field to change")
    return {"deal": lev().patch(f"/deals/{deal_id}/", body)}


@tool(title="Archive a deal", destructive=True, idempotent=True)
def archive_deal(deal_id: DealId) -> dict[str, Any]:
    """Archive (soft-delete) a deal: it leaves the active list and can no longer be changed.

    Archiving an archived deal changes nothing. Returns {"deal": {...}} with archived=true.
    """
    return {"deal": lev().post(f"/deals/{deal_id}/archive/")}


@tool(title="Add a property to a deal", destructive=False, idempotent=False)
def add_deal_property(
    deal_id: DealId,
    name: Annotated[str, Field(min_length=1, max_length=200, description="Property name.")],
    address: Annotated[str | None, Field(max_length=255)] = None,
    city: Annotated[str | None, Field(max_length=100)] = None,
    state: Annotated[StateCode | None, Field(description="2-letter US state code, e.g. TX.")] = None,
    zip: Annotated[str | None, Field(pattern=r"^\d{5}(-\d{4})?$", description="5-digit ZIP.")] = None,
    asset_type: AssetType | None = None,
    units: Annotated[int | None, Field(ge=0)] = None,
    square_footage: Annotated[int | None, Field(ge=0)] = None,
    year_built: Annotated[int | None, Field(ge=1700, le=2100)] = None,
) -> dict[str, Any]:
    """Add a property (the real estate behind the loan) to a deal.

    Lender searches use the deal's properties (state and asset type), so add them before
    search_lenders_for_deal. Each call adds one property. Returns {"property": {...}}.
    """
    body = drop_none(name=name, address=address, city=city, state=state, zip=zip, asset_type=asset_type,
                     units=units, square_footage=square_footage, year_built=year_built)
    # One key per call: local retries of this request never add the property twice.
    return {"property": lev().post(f"/deals/{deal_id}/properties/", body,
                                   idempotency_key=f"mcp-{uuid.uuid4()}")}
