"""Deal tools."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from lev import limits
from lev.accounts.scopes import DEALS_READ, DEALS_WRITE
from lev.enums import DEAL_STATUSES
from lev.errors import ErrorCode
from lev.limits import LOAN_AMOUNT_MIN
from mcp_tools import budget
from mcp_tools.addresses import at
from mcp_tools.errors import ToolFailure, validation_failure
from mcp_tools.registry import lev, tool
from mcp_tools.tools.common import (
    AssetType,
    BusinessPlan,
    Cursor,
    Date,
    Id,
    Limit,
    ListCursor,
    LoanAmount,
    LoanType,
    Money,
    MoneyFilter,
    Percent,
    StateCode,
    SummaryDetail,
    Text,
    TransactionType,
    clip,
    cursor_at,
    cursor_failure,
    cut_nested,
    decode_page_cursor,
    drop_none,
    fit_budget,
    get_page,
    list_page_query,
    list_page_result,
    read_page,
)

DealId = Id(None)
# A deal's sponsor or borrower: one of the account's companies (list_companies).
CompanyId = Id(None)
Title = Text(limits.DEAL_TITLE_MAX, "Deal name.", required=True)
NewTitle = Text(limits.DEAL_TITLE_MAX, required=True)  # update_deal's: named already, in create_deal
Description = Text(limits.DEAL_DESCRIPTION_MAX, "Free-text notes.")
LOAN_AMOUNT_DESCRIPTION = (f"Requested loan, US dollars (18500000 for $18.5M), rounded to the cent, at least "
                           f"{LOAN_AMOUNT_MIN}.")
LOAN_TYPE_DESCRIPTION = ("permanent: stabilized; light_bridge: light work or lease-up; heavy_bridge: major renovation "
                         "or largely vacant.")
STATE_DESCRIPTION = "State code (TX) or name (Texas)."
PropertyName = Text(limits.PROPERTY_NAME_MAX, required=True)
Address = Text(limits.PROPERTY_ADDRESS_MAX)
City = Text(limits.PROPERTY_CITY_MAX)
Zip = Annotated[str, Field(pattern=limits.ZIP_PATTERN, description="12345 or 12345-6789.")]
Units = Annotated[int, Field(ge=0, le=limits.UNITS_MAX, description=None)]
SquareFootage = Annotated[int, Field(ge=0, le=limits.SQUARE_FOOTAGE_MAX, description=None)]
YearBuilt = Annotated[int, Field(ge=limits.YEAR_BUILT_MIN, le=limits.YEAR_BUILT_MAX, description=None)]


# A property of a deal (no docstring: pydantic would publish it in every schema that uses the model).
class PropertyInput(BaseModel):

    model_config = ConfigDict(extra="forbid")

    name: PropertyName
    address: Address | None = None
    city: City | None = None
    state: Annotated[StateCode | None, Field(description=STATE_DESCRIPTION)] = None
    zip: Zip | None = None
    asset_type: AssetType | None = None
    units: Units | None = None
    square_footage: SquareFootage | None = None
    year_built: YearBuilt | None = None


def _deal_summary(deal: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "title", "loan_amount", "loan_type", "transaction_type", "business_plan",
            "estimated_close_date", "archived", "property_count", "ready_for_search", "missing_for_search")
    summary = {k: deal[k] for k in keys if k in deal}
    if deal.get("stage"):
        summary["stage"] = deal["stage"]["name"]
    return summary


# A page of 100 deals with long (non-ASCII) titles and many incomplete properties would pass the
# byte budget: titles and the "missing" lists are shortened first, never the deals themselves.
DEAL_LIST_STEPS = [
    lambda d: {**d, "title": clip(d["title"], 80), "missing_for_search": [
        clip(m, 80) for m in d.get("missing_for_search", [])[:1]]},
    lambda d: {**d, "title": clip(d["title"], 40), "missing_for_search": []},
    # Both copies of a page of 100 count against the budget: keep what finds and picks a deal.
    lambda d: {k: d[k] for k in ("id", "title", "loan_amount", "loan_type", "stage", "property_count",
                                 "ready_for_search") if k in d},
]


def require_change(body: dict[str, Any], target: str, *, what: str = "field") -> None:
    """An update tool needs something to change (a rule over all its arguments, which the schema
    cannot state): a VALIDATION_ERROR that names the id it was given alone."""
    if not body:
        raise validation_failure({target: [f"was given without any {what} to change"]},
                                 message=f"Validation failed: pass at least one {what} to change")


# The deal fields update_deal can empty (null elsewhere means "unchanged").
CLEARABLE = ("sponsor_id", "borrower_id", "estimated_close_date")
Clearable = Literal[CLEARABLE]
DealStatus = Literal[DEAL_STATUSES]
GIVEN_AND_CLEARED = "a field is both given a value and named in clear"


def _deal_body(*, estimated_close_date: dt.date | None, **fields: Any) -> dict[str, Any]:
    """The REST body for these deal fields: unset (None) ones left out, the date as YYYY-MM-DD."""
    return drop_none(estimated_close_date=estimated_close_date.isoformat() if estimated_close_date else None,
                     **fields)


@tool(title="List deals", scope=DEALS_READ, read_only=True)
def list_deals(
    loan_type: LoanType | None = None,
    transaction_type: TransactionType | None = None,
    business_plan: BusinessPlan | None = None,
    min_loan_amount: Annotated[MoneyFilter | None, Field(description="US dollars, rounded to the cent.")] = None,
    max_loan_amount: Annotated[MoneyFilter | None, Field(description="US dollars, rounded to the cent.")] = None,
    status: Annotated[DealStatus | None, Field(description=(
        "Default active (unarchived, open stage); with stage alone, that stage's unarchived deals."))] = None,
    archived: bool = False,  # the older spelling of status archived (a status given decides)
    search: Annotated[Text(limits.SEARCH_TEXT_MAX) | None, Field(description="Words in the deal title.")] = None,
    stage: Annotated[Text(limits.STAGE_NAME_MAX) | None, Field(description="Stage name, key or id.")] = None,
    limit: Limit = limits.PAGE_SIZE_DEFAULT,
    cursor: ListCursor = None,
) -> dict[str, Any]:
    """List the user's deals, newest first: find a deal id, see which are ready for a lender search.

    Active by default; filters AND. Returns {"deals", "total", "has_more", "next_cursor"} (pass
    next_cursor back with the same filters); total counts up to 1,000, then "total_capped": true.
    Each deal: id, title, loan fields, stage, archived, property_count, ready_for_search,
    missing_for_search.
    """
    page = list_page_query(cursor, limit)
    try:
        body = lev().get("/deals/", drop_none(
            loan_type=loan_type, transaction_type=transaction_type, business_plan=business_plan,
            min_loan_amount=min_loan_amount, max_loan_amount=max_loan_amount,
            status=status, archived="true" if archived else None, search=search, stage=stage, **page,
        ))
    except ToolFailure as failure:
        # Only a page-number cursor can miss its page: the list got shorter since it was made.
        if failure.code == ErrorCode.NOT_FOUND and "page" in page:
            raise cursor_failure("points past the last page (the list changed); omit cursor to start "
                                 "again from the first page") from None
        raise
    payload = list_page_result("deals", body, [_deal_summary(d) for d in body["results"]])
    return fit_budget(payload, "deals", DEAL_LIST_STEPS)


# Properties get_deal shows at most (the first page of list_deal_properties); fewer when the byte budget
# is reached first. The rest: list_deal_properties with the cursor in continue_with.
PROPERTIES_SHOWN = limits.PAGE_SIZE_DEFAULT


def _with_properties(payload: dict[str, Any], deal_id: int, total: int) -> dict[str, Any]:
    """The deal's properties cut to what fits, saying how many there are and where the rest is."""
    payload["deal"]["property_count"] = total
    return cut_nested(payload, "deal", "properties", total, lambda kept: {
        "tool": "list_deal_properties",
        "arguments": {"deal_id": deal_id, "cursor": cursor_at(kept, PROPERTIES_SHOWN)},
    })


@tool(title="Get a deal", scope=DEALS_READ, read_only=True)
def get_deal(
    deal_id: DealId,
    include: Annotated[
        list[Literal["properties", "financials"]] | None,
        Field(description="Related data to include."),
    ] = None,
) -> dict[str, Any]:
    """Get one deal, optionally with its properties and financials (ltv, debt_yield, dscr: see
    get_deal_financials).

    include=["properties"] adds property_count and its first properties (up to 20, fewer if
    too large); then truncated: true and continue_with names the call for the rest.
    """
    wanted = list(dict.fromkeys(include or ()))
    # Properties come from their own paged list: a deal may have hundreds, and only a page is shown.
    rest = [part for part in wanted if part != "properties"]
    deal = lev().get(at("/deals/{deal_id}/", deal_id=deal_id), {"include": ",".join(rest)} if rest else None)
    if "properties" not in wanted:
        return {"deal": deal}
    page = lev().get(at("/deals/{deal_id}/properties/", deal_id=deal_id), {"page_size": PROPERTIES_SHOWN})
    deal["properties"] = page["results"]
    return _with_properties({"deal": deal}, deal_id, page["count"])


@tool(title="List a deal's properties", scope=DEALS_READ, read_only=True)
def list_deal_properties(deal_id: DealId, limit: Limit = limits.PAGE_SIZE_DEFAULT,
                         cursor: Cursor = None) -> dict[str, Any]:
    """List a deal's properties, oldest first (more than get_deal shows).

    Returns {"properties", "total", "has_more", "next_cursor"}; pass next_cursor back for the next
    page. A page too large ends early (truncated: true); next_cursor skips nothing.
    """
    page, size, skip = decode_page_cursor(cursor, limit)
    body = get_page(at("/deals/{deal_id}/properties/", deal_id=deal_id), {"page": page, "page_size": size}, page)
    return read_page(body, "properties", page, size, skip, body["results"])


# Not idempotent by itself: only a repeated idempotency_key makes a repeat harmless.
@tool(title="Create a deal", scope=DEALS_WRITE, destructive=False, idempotent=False)
def create_deal(
    title: Title,
    loan_amount: Annotated[LoanAmount | None, Field(description=LOAN_AMOUNT_DESCRIPTION)] = None,
    loan_type: Annotated[LoanType | None, Field(description=LOAN_TYPE_DESCRIPTION)] = None,
    transaction_type: TransactionType | None = None,
    business_plan: BusinessPlan | None = None,
    description: Description | None = None,
    estimated_close_date: Annotated[Date | None, Field(description="YYYY-MM-DD.")] = None,
    sponsor_id: CompanyId | None = None,
    borrower_id: CompanyId | None = None,
    properties: Annotated[
        list[PropertyInput] | None,
        Field(max_length=limits.PROPERTIES_PER_CREATE_MAX),
    ] = None,
    idempotency_key: Annotated[
        str | None,
        Field(pattern=limits.IDEMPOTENCY_KEY_PATTERN,
              description="Reuse to repeat a create safely."),
    ] = None,
) -> dict[str, Any]:
    """Create a deal, with optional properties.

    loan_amount: at least 100000: less is refused, naming the amount likely meant.
    sponsor_id, borrower_id: company ids. Returns {"deal"} (too many properties:
    truncated: true and continue_with).
    """
    body = _deal_body(
        title=title, loan_amount=loan_amount, loan_type=loan_type, transaction_type=transaction_type,
        business_plan=business_plan, description=description, estimated_close_date=estimated_close_date,
        sponsor_id=sponsor_id, borrower_id=borrower_id,
        properties=[p.model_dump(exclude_none=True) for p in properties] if properties else None,
    )
    key = idempotency_key or f"mcp-{uuid.uuid4()}"
    deal = lev().post("/deals/", body, idempotency_key=key)
    return _with_properties({"deal": deal}, deal["id"], len(deal.get("properties") or []))


@tool(title="Update a deal", scope=DEALS_WRITE, idempotent=True)
def update_deal(
    deal_id: DealId,
    title: NewTitle | None = None,
    # Described in full once, in create_deal (the catalogue's bytes).
    loan_amount: Annotated[LoanAmount | None, Field(description=f"USD, at least {LOAN_AMOUNT_MIN}, rounded "
                                                                "to the cent.")] = None,
    loan_type: LoanType | None = None,
    transaction_type: TransactionType | None = None,
    business_plan: BusinessPlan | None = None,
    description: Description | None = None,
    estimated_close_date: Date | None = None,
    sponsor_id: CompanyId | None = None,
    borrower_id: CompanyId | None = None,
    clear: list[Clearable] | None = None,
) -> dict[str, Any]:
    """Change fields of a deal: null or left out stays; clear empties the fields it names.
    loan_amount: at least 100000."""
    body = _deal_body(
        title=title, loan_amount=loan_amount, loan_type=loan_type, transaction_type=transaction_type,
        business_plan=business_plan, description=description, estimated_close_date=estimated_close_date,
        sponsor_id=sponsor_id, borrower_id=borrower_id,
    )
    for name in sorted(set(clear or ())):  # a name listed twice is cleared once
        if name in body:
            raise validation_failure({"clear": [f"names {name}, which is also given a value"]},
                                     message=f"Validation failed: {GIVEN_AND_CLEARED} ({name})")
        body[name] = None
    require_change(body, "deal_id")
    return {"deal": lev().patch(at("/deals/{deal_id}/", deal_id=deal_id), body)}


@tool(title="Archive a deal", scope=DEALS_WRITE, destructive=True, idempotent=True)
def archive_deal(deal_id: DealId) -> dict[str, Any]:
    """Archive a deal for good: it cannot be changed or restored. Confirm with the user first."""
    return {"deal": lev().post(at("/deals/{deal_id}/archive/", deal_id=deal_id))}


@tool(title="Add a property to a deal", scope=DEALS_WRITE, destructive=False, idempotent=False)
def add_deal_property(
    deal_id: DealId,
    name: PropertyName,
    address: Address | None = None,
    city: City | None = None,
    state: StateCode | None = None,
    zip: Zip | None = None,
    asset_type: AssetType | None = None,
    units: Units | None = None,
    square_footage: SquareFootage | None = None,
    year_built: YearBuilt | None = None,
) -> dict[str, Any]:
    """Lender searches match its state (TX or Texas) and asset type."""
    # The docstring says what the title ("Add a property to a deal") does not, and carries the state's
    # description (STATE_DESCRIPTION elsewhere) so the tool fits its catalogue budget (issue 21).
    body = drop_none(name=name, address=address, city=city, state=state, zip=zip, asset_type=asset_type,
                     units=units, square_footage=square_footage, year_built=year_built)
    # One key per call: local retries of this request never add the property twice.
    return {"property": lev().post(at("/deals/{deal_id}/properties/", deal_id=deal_id), body,
                                   idempotency_key=f"mcp-{uuid.uuid4()}")}


# --- properties, one by one -----------------------------------------------------------------------
PropertyId = Id(None)


@tool(title="Change a property of a deal", scope=DEALS_WRITE, idempotent=True)
def update_deal_property(
    deal_id: DealId,
    property_id: PropertyId,
    name: PropertyName | None = None,
    address: Address | None = None,
    city: City | None = None,
    state: Annotated[StateCode | None, Field(description=STATE_DESCRIPTION)] = None,
    zip: Zip | None = None,
    asset_type: AssetType | None = None,
    units: Units | None = None,
    square_footage: SquareFootage | None = None,
    year_built: YearBuilt | None = None,
) -> dict[str, Any]:
    """Correct a property of a deal (at least one field); fields left out or null stay as they are."""
    body = drop_none(name=name, address=address, city=city, state=state, zip=zip, asset_type=asset_type,
                     units=units, square_footage=square_footage, year_built=year_built)
    require_change(body, "property_id")
    return {"property": lev().patch(
        at("/deals/{deal_id}/properties/{property_id}/", deal_id=deal_id, property_id=property_id), body)}


@tool(title="Remove a property from a deal", scope=DEALS_WRITE, destructive=True, idempotent=True)
def remove_deal_property(deal_id: DealId, property_id: PropertyId) -> dict[str, Any]:
    """Remove a property from a deal for good. Confirm with the user first."""
    lev().delete(at("/deals/{deal_id}/properties/{property_id}/", deal_id=deal_id, property_id=property_id))
    return {"removed": {"deal_id": deal_id, "property_id": property_id}}


# --- financials ---------------------------------------------------------------------------------
AmountOrZero = MoneyFilter  # 0 or more US dollars, rounded to the cent
_cents = "rounded to the cent."
_CENTS = "USD, rounded to the cent."
# Percent per year to the 3 decimals the API stores (6.2555 -> 6.256); 0.0725 is refused: did you mean 7.25?
InterestRate = Percent(limits.INTEREST_RATE_MAX, limits.RATE_PERCENT_FLOOR, limits.RATE_DECIMAL_PLACES)
AmortizationYears = Annotated[
    int, Field(ge=limits.AMORTIZATION_YEARS_MIN, le=limits.AMORTIZATION_YEARS_MAX),
]
InterestOnlyMonths = Annotated[int, Field(ge=0, le=limits.INTEREST_ONLY_MONTHS_MAX)]


@tool(title="Get a deal's financials", scope=DEALS_READ, read_only=True)
def get_deal_financials(deal_id: DealId) -> dict[str, Any]:
    """Get a deal's financials (USD, NOI per year, percents) with ltv, debt_yield (NOI/loan) and
    dscr: NOI over the debt service lenders underwrite (dscr_basis), shown beside
    dscr_interest_only and dscr_amortizing; null when unknown."""
    return {"financials": lev().get(at("/deals/{deal_id}/financials/", deal_id=deal_id))}


@tool(title="Set a deal's financials", scope=DEALS_WRITE, idempotent=True)
def update_deal_financials(
    deal_id: DealId,
    purchase_price: Annotated[Money | None, Field(description=_CENTS)] = None,
    estimated_value: Annotated[Money | None, Field(description=f"As-is or stabilized, {_cents}")] = None,
    in_place_noi: Annotated[AmountOrZero | None, Field(description=f"Per year now, {_cents}")] = None,
    stabilized_noi: Annotated[AmountOrZero | None, Field(description=f"Per year, stabilized, {_cents}")] = None,
    existing_debt: Annotated[AmountOrZero | None, Field(description=_CENTS)] = None,
    cash_out: Annotated[AmountOrZero | None, Field(description=f"At closing, {_cents}")] = None,
    interest_rate: Annotated[InterestRate | None, Field(description="Percent (6.25, not 0.0625), kept to 3 "
                                                                    "decimals.")] = None,
    amortization_years: Annotated[AmortizationYears | None, Field(
        description=f"Default {limits.AMORTIZATION_YEARS_DEFAULT}.")] = None,
    interest_only_months: InterestOnlyMonths | None = None,
) -> dict[str, Any]:
    """Set some of a deal's financials (at least one; USD; null or left out: kept). Searches
    rank LTV with a value, DSCR with NOI and interest_rate.
    """
    body = drop_none(purchase_price=purchase_price, estimated_value=estimated_value, in_place_noi=in_place_noi,
                     stabilized_noi=stabilized_noi, existing_debt=existing_debt, cash_out=cash_out,
                     interest_rate=interest_rate, amortization_years=amortization_years,
                     interest_only_months=interest_only_months)
    require_change(body, "deal_id", what="figure")
    return {"financials": lev().patch(at("/deals/{deal_id}/financials/", deal_id=deal_id), body)}


# --- summary ------------------------------------------------------------------------------------
@tool(title="Summarize a deal", scope=DEALS_READ, read_only=True)
def summarize_deal(
    deal_id: DealId,
    detail: Annotated[SummaryDetail, Field(
        description="brief: a few lines; standard: each section's lead items; memo: the fullest.")] = "standard",
) -> dict[str, Any]:
    """A deal summary for a credit committee: property, financials (LTV, DSCR, debt yield), stage,
    parties, lender search, placements, quotes compared, next steps. Every figure in text cites
    sources [n]: record, field, value, API path. Parts a scope (placements:read, lenders:read)
    keeps out are named in left_out."""
    return {"summary": lev().get(at("/deals/{deal_id}/summary/", deal_id=deal_id), {"detail": detail})}


# --- History imports (deals.history.jobs; uploaded through POST /api/v1/history-imports/) ---------------
ImportId = Id(None)
IMPORT_NOT_FOUND_HINT = ("Check import_id: list_imports lists the account's history imports (newest first); do "
                         "not retry with the same id.")
IMPORT_PROBLEMS_SHOWN = 20


def _import_item(job: dict[str, Any]) -> dict[str, Any]:
    item = {k: job[k] for k in ("id", "status", "dry_run", "file_name", "progress", "created_at", "finished_at")}
    if job.get("message"):
        item["message"] = job["message"]
    return item


def _import(job: dict[str, Any], shown: int = IMPORT_PROBLEMS_SHOWN, text: int = 300) -> dict[str, Any]:
    """The job as get_import answers it: `shown` problems, names and plan lines at most, each text clipped
    to `text` characters (both lowered until the answer fits the byte budget)."""
    summary = dict(job.get("summary") or {})
    unresolved = summary.pop("unresolved", [])
    new_lenders = summary.get("new_lenders") or []
    summary["new_lenders"] = [clip(name, text) for name in new_lenders[:shown]]
    result = {**_import_item(job), "file_name": clip(job["file_name"], text), "summary": summary,
              "problems": [{**p, "column": clip(p["column"], 40), "message": clip(p["message"], text)}
                           for p in job.get("problems", [])[:shown]],
              "problems_total": summary.get("problems_total", len(job.get("problems", []))),
              "names_to_map": [{**n, "name": clip(n["name"], text), "candidates": [
                  {**c, "name": clip(c["name"], text)} for c in n.get("candidates", [])]} for n in unresolved[:shown]],
              "names_to_map_total": len(unresolved), "report_url": job["links"]["report"]}
    if job.get("message"):
        result["message"] = clip(job["message"], text)
    if job.get("plan"):
        result["plan"] = [clip(line, text) for line in job["plan"][:shown]]
    if unresolved:
        result["next_step"] = (f"Map each name to a lender id (a candidate's, or one from search_lender_directory) and "
                               f"POST {job['links']['apply']} with mapping {{name: lender_id}}.")
    return result


@tool(title="Get a history import", scope=DEALS_READ, read_only=True)
def get_import(import_id: ImportId) -> dict[str, Any]:
    """A history import (past deals, placements and quotes from a CSV/XLSX uploaded to the REST API):
    status (queued, running, done, refused, failed), progress, summary, the first problems, lender
    names to map (with candidates) and the refused rows' report URL (CSV)."""
    try:
        job = lev().get(at("/history-imports/{import_id}/", import_id=import_id))
    except ToolFailure as failure:
        if failure.code == ErrorCode.NOT_FOUND:
            failure.hint = IMPORT_NOT_FOUND_HINT
        raise
    for shown, text in ((IMPORT_PROBLEMS_SHOWN, 300), (10, 120), (5, 60), (3, 40)):
        payload = {"import": _import(job, shown, text)}
        if budget.fits(payload):
            break
    if shown < IMPORT_PROBLEMS_SHOWN:
        payload["truncated"] = True  # the report (report_url) and GET links.self have them all
    return payload


@tool(title="List history imports", scope=DEALS_READ, read_only=True)
def list_imports(limit: Limit = limits.PAGE_SIZE_DEFAULT, cursor: Cursor = None) -> dict[str, Any]:
    """The account's history imports, newest first: id, status, preview or not, file name, progress.
    Returns {"imports", "total", "has_more", "next_cursor"}; get_import(import_id) has the details."""
    page, size, skip = decode_page_cursor(cursor, limit)
    body = get_page("/history-imports/", {"page": page, "page_size": size}, page)
    return read_page(body, "imports", page, size, skip, [_import_item(j) for j in body["results"]])
