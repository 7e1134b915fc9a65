"""Placement and term sheet tools: from a deal's ranked lenders to a winning quote.

The workflow an agent follows: search_lenders_for_deal → create_placements (the top N of the search,
or chosen lenders) → update_placement as lenders answer → add_term_sheet for each quote →
compare_term_sheets → select_winning_term_sheet. Every tool calls the REST API (`/deals/{id}/placements/`,
`/placements/{id}/`, `/term-sheets/{id}/`, …) through the call's LevClient, like the other tools.
Scopes (placements:read / placements:write) map onto the read-only and the writing tools of this module.
"""

from __future__ import annotations

import uuid
from decimal import ROUND_HALF_UP, Decimal
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field

from deals.placements.workflow import STATUSES, UPDATE_STATUSES
from lev import limits
from lev.accounts.scopes import PLACEMENTS_READ, PLACEMENTS_WRITE
from lev.enums import QUOTE_TYPES, RATE_INDEXES, RATE_TYPES, RECOURSE_TYPES
from lev.errors import ErrorCode
from mcp_tools.registry import lev, tool
from mcp_tools.tools.common import (
    Cursor,
    Date,
    Id,
    Limit,
    Money,
    Number,
    Text,
    _choice,
    clip,
    cursor_at,
    cut_nested,
    decode_cursor,
    decode_page_cursor,
    drop_none,
    fit_budget,
    get_page,
    page_result,
    read_page,
    shorten_to_fit,
)
from mcp_tools.tools.deals import InterestRate, require_change
from mcp_tools.tools.lenders import NAME_MAX

# The placement workflow's statuses, and those update_placement takes (deals.placements.workflow).
PlacementStatus = Annotated[Literal[STATUSES], BeforeValidator(_choice(STATUSES))]  # type: ignore[valid-type]
UpdateStatus = Annotated[Literal[UPDATE_STATUSES], BeforeValidator(_choice(UPDATE_STATUSES))]  # type: ignore[valid-type]
QuoteType = Annotated[Literal[QUOTE_TYPES], BeforeValidator(_choice(QUOTE_TYPES))]  # type: ignore[valid-type]
RateType = Annotated[Literal[RATE_TYPES], BeforeValidator(_choice(RATE_TYPES))]  # type: ignore[valid-type]
RateIndex = Annotated[Literal[RATE_INDEXES], BeforeValidator(_choice(RATE_INDEXES))]  # type: ignore[valid-type]
Recourse = Annotated[Literal[RECOURSE_TYPES], BeforeValidator(_choice(RECOURSE_TYPES))]  # type: ignore[valid-type]

DealId = Id("Deal id (from list_deals or create_deal).")
PlacementId = Id("Placement id (placements[].id from create_placements or list_placements).")
TermSheetId = Id("Term sheet id (term_sheet.id from add_term_sheet, or list_term_sheets / compare_term_sheets).")
SearchId = Id("A completed lender search of this deal (search_id from search_lenders_for_deal).")
LenderIds = Annotated[
    list[Id("A lender id.")],
    Field(min_length=1, max_length=limits.PLACEMENTS_PER_CREATE_MAX,
          description=f"Lenders to place the deal with, 1 to {limits.PLACEMENTS_PER_CREATE_MAX} (lender_id "
                      "from get_lender_search_results or search_lender_directory)."),
]
Notes = Text(limits.PLACEMENT_NOTES_MAX, "Free-text notes (replace the placement's notes).")
ContactName = Text(limits.CONTACT_NAME_MAX, "The lender contact's name.")
ContactEmail = Annotated[str, Field(max_length=limits.EMAIL_MAX, pattern=limits.EMAIL_PATTERN,
                                    description="The lender contact's email address.")]


def _places(places: int):
    quantum = Decimal(1).scaleb(-places)

    def rounded(value: float) -> float:
        return float(Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP))

    return AfterValidator(rounded)


def _percent(maximum: int, places: int) -> Any:
    return Annotated[Number(0, maximum), _places(places)]


# --- shapes -------------------------------------------------------------------------------------------
PLACEMENT_KEYS = ("id", "deal_id", "lender_id", "lender_name", "status", "allowed_next_statuses", "program_id",
                  "source_rank", "term_sheet_count", "contact_name", "contact_email", "sent_at",
                  "first_response_at", "decided_at", "notes")
TERM_SHEET_KEYS = ("id", "placement_id", "lender_id", "lender_name", "quote_type", "loan_amount", "rate_type",
                   "fixed_rate", "rate_index", "spread_bps", "term_months", "amortization_months",
                   "interest_only_months", "max_ltv", "min_dscr", "recourse", "origination_fee_percent",
                   "exit_fee_percent", "prepayment", "expires_on", "winning", "received_at")


def _placement(item: dict[str, Any]) -> dict[str, Any]:
    out = {k: item.get(k) for k in PLACEMENT_KEYS}
    out["lender_name"] = clip(out["lender_name"] or "", NAME_MAX)
    return out


def _term_sheet(item: dict[str, Any]) -> dict[str, Any]:
    out = {k: item.get(k) for k in TERM_SHEET_KEYS}
    out["lender_name"] = clip(out["lender_name"] or "", NAME_MAX)
    return out


# Term sheets get_placement shows at most (the first page of list_term_sheets for the placement).
TERM_SHEETS_SHOWN = limits.PAGE_SIZE_DEFAULT

PLACEMENT_STEPS = [
    lambda item: {**item, "notes": clip(item.get("notes") or "", 200)},
    lambda item: {k: v for k, v in item.items() if k not in ("notes", "contact_name", "contact_email")},
    # What the next call needs: get_placement has the rest.
    lambda item: {k: item.get(k) for k in ("id", "lender_id", "lender_name", "status", "term_sheet_count")},
]
TERM_SHEET_STEPS = [
    lambda item: {**item, "prepayment": clip(item.get("prepayment") or "", 80)},
    lambda item: {k: v for k, v in item.items() if k not in ("prepayment", "received_at")},
]


# --- placements -------------------------------------------------------------------------------------
def _created_message(body: dict[str, Any], send: bool) -> str:
    deal_id, made, failed = body["deal_id"], body["created"], body["failed"]
    parts = [f"Placed deal {deal_id} with {made} lender(s)" + (" (sent)." if send else " (draft).")]
    conflicts = [f["lender_id"] for f in failed if f["code"] == ErrorCode.CONFLICT]
    unknown = [f["lender_id"] for f in failed if f["code"] == ErrorCode.NOT_FOUND]
    if conflicts:
        parts.append(f"Already placed (open placement kept): lenders {', '.join(map(str, conflicts))}.")
    if unknown:
        parts.append(f"No such lender: {', '.join(map(str, unknown))}.")
    if made and not send:
        parts.append('When the deal has gone to them, call update_placement(placement_id, status="sent").')
    if made:
        parts.append("Record each lender's quote with add_term_sheet(placement_id, …).")
    return " ".join(parts)


@tool(scope=PLACEMENTS_WRITE, title="Place a deal with lenders", destructive=False, idempotent=True)
def create_placements(
    deal_id: DealId,
    lender_ids: LenderIds | None = None,
    search_id: SearchId | None = None,
    top_n: Annotated[int | None, Field(ge=1, le=limits.PLACEMENTS_PER_CREATE_MAX,
                                       description=f"With search_id and no lender_ids: place the top N ranked "
                                                   f"lenders (default {limits.PLACEMENT_TOP_N_DEFAULT}).")] = None,
    send: Annotated[bool, Field(description="true: record that the deal was sent to these lenders now (status sent, "
                                            "their response time starts). Default false: draft placements.")] = False,
    notes: Notes | None = None,
) -> dict[str, Any]:
    """Place a deal with several lenders in one call: one placement per lender, tracking that
    lender's answer and quotes. Confirm the lender list with the user first, and only pass
    send=true once the user says the deal went (or may go) to them.

    Pass lender_ids (lenders the user chose), or search_id of a completed search_lenders_for_deal
    run (optionally with top_n, default 5) to place its best-ranked lenders; with both, the given
    lenders are placed and keep their rank in that search. The archived deal, a search of another
    deal or one not completed are BUSINESS_RULE errors (relay customerMessage).

    Safe to repeat: a lender that already has an open placement on the deal is not placed twice;
    it is listed in failed with code CONFLICT and its placement_id. Unknown lender ids are listed
    in failed with NOT_FOUND; the others are still placed. Returns {"deal_id", "created",
    "placements": [{id, lender_id, lender_name, status, allowed_next_statuses, …}], "failed":
    [{lender_id, code, message, placement_id?}], "message"}. Use placements[].id with
    update_placement and add_term_sheet. A very large answer is trimmed of detail (compacted:
    true); get_placement has it all.
    """
    body = drop_none(lender_ids=lender_ids, search_id=search_id, top_n=top_n, send=True if send else None,
                     notes=notes)
    # One key per call: a local retry of this request never places twice (nor would a repeat).
    result = lev().post(f"/deals/{deal_id}/placements/", body, idempotency_key=f"mcp-{uuid.uuid4()}")
    payload = {
        "deal_id": result["deal_id"],
        "created": result["created"],
        "placements": [_placement(p) for p in result["placements"]],
        "failed": result["failed"],
        "message": _created_message(result, send),
    }
    return fit_budget(payload, "placements", PLACEMENT_STEPS)


@tool(scope=PLACEMENTS_READ, title="List a deal's placements", read_only=True)
def list_placements(
    deal_id: DealId,
    status: Annotated[PlacementStatus | None, Field(description="Only placements in this status.")] = None,
    lender_id: Annotated[Id("Only this lender's placements.") | None, Field()] = None,
    limit: Limit = limits.PAGE_SIZE_DEFAULT,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """List the lenders a deal was placed with and where each stands, oldest first.

    status: draft (not sent yet), sent, reviewing (the lender is looking), quoted (a term sheet
    was recorded), declined, no_response, won, lost, archived. allowed_next_statuses says what
    each placement can become next. Returns {"placements": [{id, lender_id, lender_name, status,
    allowed_next_statuses, term_sheet_count, sent_at, first_response_at, …}], "total",
    "has_more", "next_cursor"}. No placement is an empty list. A very large page is trimmed of
    detail (compacted: true); use a smaller limit or get_placement.
    """
    page, size = decode_cursor(cursor, limit)
    body = get_page(f"/deals/{deal_id}/placements/",
                    drop_none(status=status, lender_id=lender_id, page=page, page_size=size), page)
    payload = page_result("placements", body, page, size, [_placement(p) for p in body["results"]])
    return fit_budget(payload, "placements", PLACEMENT_STEPS)


@tool(scope=PLACEMENTS_READ, title="Get a placement", read_only=True)
def get_placement(placement_id: PlacementId) -> dict[str, Any]:
    """Get one placement with its term sheets (quotes).

    Returns {"placement": {id, deal_id, lender_id, lender_name, status, allowed_next_statuses,
    contact, program, timestamps, "term_sheets": [{id, loan_amount, rate_type, fixed_rate or
    rate_index + spread_bps, …}]}}. Another account's placement is NOT_FOUND. At most the first
    20 term sheets are shown (fewer if the answer would be too large), with term_sheet_count;
    when some are left out the answer has truncated: true and continue_with: {"tool":
    "list_term_sheets", "arguments": {...}, "remaining"} for the rest.
    """
    body = lev().get(f"/placements/{placement_id}/")
    placement = _placement(body)
    term_sheets = [_term_sheet(t) for t in body.get("term_sheets") or []]
    placement["term_sheets"] = term_sheets[:TERM_SHEETS_SHOWN]
    # The rest in list_term_sheets' order (by id), the deal's quotes of this placement.
    return cut_nested({"placement": placement}, "placement", "term_sheets", len(term_sheets), lambda kept: {
        "tool": "list_term_sheets",
        "arguments": {"deal_id": placement["deal_id"], "placement_id": placement_id,
                      "cursor": cursor_at(kept, TERM_SHEETS_SHOWN)},
    })


@tool(scope=PLACEMENTS_WRITE, title="Update a placement", destructive=True, idempotent=True)
def update_placement(
    placement_id: PlacementId,
    status: Annotated[UpdateStatus | None, Field(
        description="The lender's progress: sent (the deal went out), reviewing, declined, no_response, "
                    "lost, archived. quoted comes from add_term_sheet, won from "
                    "select_winning_term_sheet.")] = None,
    notes: Notes | None = None,
    contact_name: ContactName | None = None,
    contact_email: ContactEmail | None = None,
    program_id: Annotated[Id("A program of this lender (get_lender lists them).") | None, Field()] = None,
) -> dict[str, Any]:
    """Record a lender's progress on a placement, or change its notes, contact or program.

    Pass at least one field. Status moves only forward (allowed_next_statuses of the placement
    lists the moves): draft → sent → reviewing → declined | no_response. Declined, lost and
    archived are final: confirm with the user before setting them, and before marking a placement
    sent (it records that the deal went to the lender). Asking for the status the placement
    already has changes nothing. An illegal move is a BUSINESS_RULE error whose customerMessage
    names the allowed next statuses. Returns {"placement": {...}}.
    """
    body = drop_none(status=status, notes=notes, contact_name=contact_name, contact_email=contact_email,
                     program_id=program_id)
    require_change(body, "placement_id")
    return {"placement": _placement(lev().patch(f"/placements/{placement_id}/", body))}


# --- term sheets ------------------------------------------------------------------------------------
@tool(scope=PLACEMENTS_WRITE, title="Record a term sheet", destructive=False, idempotent=False)
def add_term_sheet(
    placement_id: PlacementId,
    loan_amount: Annotated[Money, Field(description=f"Quoted loan, US dollars: greater than 0, at most "
                                                    f"{limits.MONEY_MAX}, rounded to the cent.")],
    rate_type: Annotated[RateType, Field(description="fixed (pass fixed_rate) or floating (pass rate_index and "
                                                     "spread_bps).")],
    fixed_rate: Annotated[InterestRate | None, Field(description=f"Fixed quotes: percent per year (6.125 means "
                                                                 f"6.125 %), 0 to {limits.RATE_PERCENT_MAX}, kept to "
                                                                 "3 decimals.")] = None,
    rate_index: Annotated[RateIndex | None, Field(description="Floating quotes: the base rate index.")] = None,
    spread_bps: Annotated[int | None, Field(ge=0, le=limits.SPREAD_BPS_MAX,
                                            description="Floating quotes: basis points over the index (275 means "
                                                        "index + 2.75 %).")] = None,
    quote_type: Annotated[QuoteType | None, Field(description="indicative, soft_quote, term_sheet (default) or "
                                                              "commitment.")] = None,
    term_months: Annotated[int | None, Field(ge=1, le=limits.TERM_MONTHS_MAX,
                                             description="Loan term in months.")] = None,
    amortization_months: Annotated[int | None, Field(
        ge=1, le=limits.AMORTIZATION_MONTHS_MAX,
        description="Amortization in months (360 = 30 years); leave out for interest-only for the whole term.")] = None,
    interest_only_months: Annotated[int | None, Field(ge=0, le=limits.TERM_MONTHS_MAX,
                                                      description="Interest-only months at the start.")] = None,
    max_ltv: Annotated[_percent(limits.LTV_PERCENT_MAX, 2) | None, Field(
        description="The lender's maximum loan-to-value, percent (75 means 75 %), kept to 2 decimals.")] = None,
    min_dscr: Annotated[_percent(limits.DSCR_INPUT_MAX, 2) | None, Field(
        description="The lender's minimum debt service coverage ratio, e.g. 1.25, kept to 2 decimals.")] = None,
    recourse: Annotated[Recourse | None, Field(description="full, partial or non_recourse.")] = None,
    origination_fee_percent: Annotated[_percent(limits.FEE_PERCENT_MAX, 3) | None, Field(
        description="Origination fee, percent of the loan (1 means 1 %), kept to 3 decimals.")] = None,
    exit_fee_percent: Annotated[_percent(limits.FEE_PERCENT_MAX, 3) | None, Field(
        description="Exit fee, percent of the loan, kept to 3 decimals.")] = None,
    prepayment: Annotated[Text(limits.PREPAYMENT_TEXT_MAX) | None, Field(
        description="Prepayment terms, e.g. 'yield maintenance' or '3-2-1 step-down'.")] = None,
    expires_on: Annotated[Date | None, Field(description="When the quote expires, YYYY-MM-DD.")] = None,
    notes: Annotated[Text(limits.TERM_SHEET_NOTES_MAX) | None, Field(description="Other terms.")] = None,
) -> dict[str, Any]:
    """Record a lender's quote (term sheet) on a placement; the placement becomes quoted.

    The placement must be sent, reviewing or quoted (otherwise BUSINESS_RULE; mark it sent first
    with update_placement). Percentages are percent (6.125 means 6.125 %), amounts US dollars,
    periods months. A fixed quote takes fixed_rate; a floating quote takes rate_index and
    spread_bps (compare_term_sheets adds the index's current rate). Each call records one more
    quote. Returns {"term_sheet": {id, …}, "placement_status"}; pass term_sheet.id to
    select_winning_term_sheet once the user picks it, and compare quotes with compare_term_sheets.
    """
    body = drop_none(
        loan_amount=loan_amount, rate_type=rate_type, fixed_rate=fixed_rate, rate_index=rate_index,
        spread_bps=spread_bps, quote_type=quote_type, term_months=term_months,
        amortization_months=amortization_months, interest_only_months=interest_only_months, max_ltv=max_ltv,
        min_dscr=min_dscr, recourse=recourse, origination_fee_percent=origination_fee_percent,
        exit_fee_percent=exit_fee_percent, prepayment=prepayment,
        expires_on=expires_on.isoformat() if expires_on else None, notes=notes,
    )
    # One key per call: a local retry of this request never records the quote twice.
    term_sheet = lev().post(f"/placements/{placement_id}/term-sheets/", body, idempotency_key=f"mcp-{uuid.uuid4()}")
    return {"term_sheet": _term_sheet(term_sheet), "placement_status": "quoted"}


@tool(scope=PLACEMENTS_READ, title="List a deal's term sheets", read_only=True)
def list_term_sheets(
    deal_id: DealId,
    placement_id: Annotated[Id("Only this placement's term sheets.") | None, Field()] = None,
    limit: Limit = limits.PAGE_SIZE_DEFAULT,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """List the quotes (term sheets) recorded for a deal, oldest first, as the lenders gave them.

    To see them side by side on one basis (all-in rate, proceeds, fees, DSCR), use
    compare_term_sheets instead. Returns {"term_sheets": [{id, placement_id, lender_id,
    lender_name, quote_type, loan_amount, rate_type, fixed_rate, rate_index, spread_bps, …,
    winning}], "total", "has_more", "next_cursor"}. No quote yet is an empty list. A very large
    page is trimmed of prepayment detail (compacted: true), then ends early (truncated: true)
    with a next_cursor that continues right after the last quote returned.
    """
    page, size, skip = decode_page_cursor(cursor, limit)
    body = get_page(f"/deals/{deal_id}/term-sheets/",
                    drop_none(placement_id=placement_id, page=page, page_size=size), page)
    return read_page(body, "term_sheets", page, size, skip, [_term_sheet(t) for t in body["results"]],
                     TERM_SHEET_STEPS)


COMPARISON_KEYS = ("rank", "term_sheet_id", "placement_id", "lender_id", "lender_name", "quote_type", "winning",
                   "rate_type", "rate_index", "base_rate", "spread_bps", "all_in_rate", "all_in_cost", "proceeds",
                   "net_proceeds", "total_fees", "origination_fee", "exit_fee", "ltv", "annual_debt_service",
                   "interest_only_debt_service", "dscr", "term_months", "amortization_months",
                   "interest_only_months", "recourse", "expires_on", "expired", "notes")
COMPARISON_STEPS = [
    lambda item: {k: v for k, v in item.items()
                  if k not in ("origination_fee", "exit_fee", "interest_only_debt_service")},
    lambda item: {**item, "notes": item["notes"][:3]},
    # The figures a choice is made on, and the id to choose with.
    lambda item: {**{k: item.get(k) for k in ("rank", "term_sheet_id", "lender_id", "lender_name", "all_in_rate",
                                               "all_in_cost", "proceeds", "total_fees", "ltv", "dscr",
                                               "annual_debt_service", "recourse", "expired")},
                  "lender_name": clip(item.get("lender_name") or "", 40), "notes": item["notes"][:2]},
]


@tool(scope=PLACEMENTS_READ, title="Compare a deal's term sheets", read_only=True)
def compare_term_sheets(
    deal_id: DealId,
    limit: Annotated[int, Field(ge=1, le=limits.PAGE_SIZE_MAX,
                                description=f"Return the best N quotes (default {limits.PAGE_SIZE_DEFAULT}, "
                                            f"max {limits.PAGE_SIZE_MAX}).")] = limits.PAGE_SIZE_DEFAULT,
) -> dict[str, Any]:
    """Compare a deal's quotes on one basis, best first, to help the user pick a winner.

    Per quote: all_in_rate (fixed rate, or the index's current base rate + spread; percent per
    year), all_in_cost (all-in rate plus fees spread over the term), proceeds and net_proceeds,
    fees in US dollars, ltv (percent of the deal's value), annual_debt_service (US dollars per
    year) and the dscr it implies from the deal's NOI, plus short notes ("highest proceeds",
    "lowest all-in cost", "full recourse", "expired …"). Best first means: valid, priced quotes
    covering the requested loan, then lowest all-in cost, then highest proceeds. A figure that
    cannot be computed is null, and "unavailable" says why (e.g. no NOI on the deal, no current
    base rate). Quotes of declined or archived placements are left out. Returns {"deal_id",
    "best_term_sheet_id", "count" (quotes compared), "quotes": [the best `limit`, each with its
    term_sheet_id for select_winning_term_sheet], "has_more", "base_rates", "unavailable", …}.
    A very large answer is trimmed of detail (compacted: true), then keeps only the best quotes
    that fit (truncated: true, has_more: true).
    """
    body = lev().get(f"/deals/{deal_id}/term-sheets/comparison/", {"limit": limit})
    quotes = body.get("quotes") or []
    payload = {
        "deal_id": body["deal_id"],
        "requested_loan_amount": body.get("requested_loan_amount"),
        "value": body.get("value"),
        "noi": body.get("noi"),
        "best_term_sheet_id": body.get("best_term_sheet_id"),
        "count": body.get("count", len(quotes)),
        "order": body.get("order"),
        "base_rates": body.get("base_rates") or [],
        "unavailable": body.get("unavailable") or [],
        "quotes": [{**{k: q.get(k) for k in COMPARISON_KEYS},
                    "lender_name": clip(q.get("lender_name") or "", NAME_MAX)} for q in quotes],
        "has_more": body.get("count", len(quotes)) > len(quotes),
    }
    # Best first: past the last trim step, the worst of the page are left out (has_more, truncated).
    return shorten_to_fit(fit_budget(payload, "quotes", COMPARISON_STEPS), "quotes", None)


@tool(scope=PLACEMENTS_WRITE, title="Choose the winning term sheet", destructive=True, idempotent=True)
def select_winning_term_sheet(term_sheet_id: TermSheetId) -> dict[str, Any]:
    """Choose a quote as the deal's winner. Confirm with the user first: it cannot be undone.

    The quote's placement becomes won and every other open placement of the deal becomes lost,
    at once; a deal has one winner (a second choice is a BUSINESS_RULE error naming the current
    winner). The quote must be on a quoted placement and not expired. Choosing the current winner
    again changes nothing. Returns {"term_sheet": {...}, "placement_id", "lost_placement_ids",
    "changed", "message"}.
    """
    body = lev().post(f"/term-sheets/{term_sheet_id}/select-winner/", idempotency_key=f"mcp-{uuid.uuid4()}")
    lost = body.get("lost_placement_ids") or []
    message = (f"Term sheet {term_sheet_id} won: placement {body['placement_id']} is won and {len(lost)} other "
               "placement(s) are lost." if body.get("changed") else
               f"Term sheet {term_sheet_id} had already won; nothing changed.")
    return {"term_sheet": _term_sheet(body["term_sheet"]), "placement_id": body["placement_id"],
            "lost_placement_ids": lost, "changed": body.get("changed", False), "message": message}


@tool(scope=PLACEMENTS_WRITE, title="Remove a term sheet", destructive=True, idempotent=True)
def remove_term_sheet(term_sheet_id: TermSheetId) -> dict[str, Any]:
    """Remove a quote recorded by mistake (or withdrawn by the lender). Confirm with the user first.

    It is kept on record but no longer listed or compared; the winning quote cannot be removed
    (BUSINESS_RULE). Removing it again answers NOT_FOUND. Returns {"removed": {"term_sheet_id"}}.
    """
    lev().delete(f"/term-sheets/{term_sheet_id}/")
    return {"removed": {"term_sheet_id": term_sheet_id}}
