"""Deal tools."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from lev import limits
from mcp_tools.errors import ToolFailure, validation_failure
from mcp_tools.registry import lev, tool
from mcp_tools.tools.common import (
    AssetType,
    BusinessPlan,
    Cursor,
    Date,
    Id,
    Limit,
    LoanType,
    Money,
    MoneyFilter,
    StateCode,
    Text,
    TransactionType,
    cursor_failure,
    decode_cursor,
    drop_none,
    page_result,
)

DealId = Id("Deal id (from list_deals or create_deal).")
Title = Text(limits.DEAL_TITLE_MAX, "Deal name.", required=True)
Description = Text(limits.DEAL_DESCRIPTION_MAX, "Free-text notes about the deal.")
PropertyName = Text(limits.PROPERTY_NAME_MAX, "Property name.", required=True)
Address = Text(limits.PROPERTY_ADDRESS_MAX, "Street address.")
City = Text(limits.PROPERTY_CITY_MAX, "City.")
Zip = Annotated[str, Field(pattern=limits.ZIP_PATTERN, description="5-digit ZIP code, or ZIP+4 (12345-6789).")]
Units = Annotated[int, Field(ge=0, le=limits.UNITS_MAX, description="Residential units / keys.")]
SquareFootage = Annotated[int, Field(ge=0, le=limits.SQUARE_FOOTAGE_MAX, description="Rentable square feet.")]
YearBuilt = Annotated[int, Field(ge=limits.YEAR_BUILT_MIN, le=limits.YEAR_BUILT_MAX, description="Year built.")]


class PropertyInput(BaseModel):
    """A property of a deal."""

    model_config = ConfigDict(extra="forbid")

    name: PropertyName
    address: Address | None = None
    city: City | None = None
    state: Annotated[StateCode | None, Field(description="2-letter US state code, e.g. TX.")] = None
    zip: Zip | None = None
    asset_type: AssetType | None = None
    units: Units | None = None
    square_footage: SquareFootage | None = None
    year_built: YearBuilt | None = None


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
    min_loan_amount: Annotated[MoneyFilter | None, Field(description="Smallest loan amount, US dollars, rounded "
                                                                     "to the cent.")] = None,
    max_loan_amount: Annotated[MoneyFilter | None, Field(description="Largest loan amount, US dollars, rounded "
                                                                     "to the cent; not below min_loan_amount.")] = None,
    archived: Annotated[bool, Field(description="true lists archived deals instead of active ones.")] = False,
    search: Annotated[Text(limits.SEARCH_TEXT_MAX) | None, Field(description="Words in the deal title.")] = None,
    limit: Limit = limits.PAGE_SIZE_DEFAULT,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """List the user's deals, newest first, one page at a time.

    Use it to find a deal id or to see the pipeline. All filters are optional and combine with
    AND; loan amounts are US dollars (a JSON number, rounded to the cent) and min_loan_amount may
    not exceed max_loan_amount. Returns {"deals": [compact deal], "total", "has_more",
    "next_cursor"}; pass next_cursor back to get the next page. No match is an empty list.
    """
    page, size = decode_cursor(cursor, limit)
    try:
        body = lev().get("/deals/", drop_none(
            loan_type=loan_type, transaction_type=transaction_type, business_plan=business_plan,
            min_loan_amount=min_loan_amount, max_loan_amount=max_loan_amount,
            archived="true" if archived else None, search=search, page=page, page_size=size,
        ))
    except ToolFailure as failure:
        # The only thing a list can miss is the page: the list got shorter since the cursor was made.
        if failure.code == "NOT_FOUND" and page > 1:
            raise cursor_failure("points past the last page (the list changed); omit cursor to start "
                                 "again from the first page") from None
        raise
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
    title: Title,
    loan_amount: Annotated[Money | None, Field(description=f"Requested loan, US dollars: greater than 0, "
                                                           f"at most {limits.MONEY_MAX}, rounded to the cent.")] = None,
    loan_type: LoanType | None = None,
    transaction_type: TransactionType | None = None,
    business_plan: BusinessPlan | None = None,
    description: Description | None = None,
    estimated_close_date: Annotated[Date | None, Field(description="Expected closing date, YYYY-MM-DD.")] = None,
    properties: Annotated[
        list[PropertyInput] | None,
        Field(max_length=limits.PROPERTIES_PER_CREATE_MAX,
              description=f"Properties to add (max {limits.PROPERTIES_PER_CREATE_MAX})."),
    ] = None,
    idempotency_key: Annotated[
        str | None,
        Field(pattern=limits.IDEMPOTENCY_KEY_PATTERN,
              description=f"Optional: 1 to {limits.IDEMPOTENCY_KEY_MAX} visible ASCII characters, no spaces. "
                          "Reuse the same key when repeating a create whose result you did not get: no "
                          "second deal is made."),
    ] = None,
) -> dict[str, Any]:
    """Create a deal (a financing request) in the user's account, with optional properties.

    loan_amount is the requested loan in US dollars, a JSON number (not a string), rounded to the
    cent. Dates are "YYYY-MM-DD" strings. Safe to repeat with the same idempotency_key. Returns
    {"deal": {...}} with the new id and its properties.
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
    title: Title | None = None,
    loan_amount: Annotated[Money | None, Field(description=f"Requested loan, US dollars: greater than 0, "
                                                           f"at most {limits.MONEY_MAX}, rounded to the cent.")] = None,
    loan_type: LoanType | None = None,
    transaction_type: TransactionType | None = None,
    business_plan: BusinessPlan | None = None,
    description: Description | None = None,
    estimated_close_date: Annotated[Date | None, Field(description="Expected closing date, YYYY-MM-DD.")] = None,
) -> dict[str, Any]:
    """Change some fields of a deal; fields you leave out (or pass as null) stay as they are.

    Pass at least one field. loan_amount is US dollars, a JSON number rounded to the cent; dates
    are "YYYY-MM-DD" strings. Archived deals cannot be changed (BUSINESS_RULE). Returns
    {"deal": {...}}.
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
    name: PropertyName,
    address: Address | None = None,
    city: City | None = None,
    state: Annotated[StateCode | None, Field(description="2-letter US state code, e.g. TX.")] = None,
    zip: Zip | None = None,
    asset_type: AssetType | None = None,
    units: Units | None = None,
    square_footage: SquareFootage | None = None,
    year_built: YearBuilt | None = None,
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
