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
from lev.enums import OUTREACH_KINDS, QUOTE_TYPES, RATE_TYPES, RECOURSE_TYPES
from lev.errors import ErrorCode
from mcp_tools.addresses import at
from mcp_tools.registry import lev, tool
from mcp_tools.tools.common import (
    BasisPoints,
    Cursor,
    Date,
    Id,
    Limit,
    Money,
    Number,
    Percent,
    RateIndex,
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
Recourse = Annotated[Literal[RECOURSE_TYPES], BeforeValidator(_choice(RECOURSE_TYPES))]  # type: ignore[valid-type]

DealId = Id(None)
PlacementId = Id(None)
TermSheetId = Id(None)
SearchId = Id("A completed lender search of this deal.")
LenderIds = Annotated[
    list[Id(None)],
    Field(min_length=1, max_length=limits.PLACEMENTS_PER_CREATE_MAX, description="Lenders the user chose."),
]
Notes = Text(limits.PLACEMENT_NOTES_MAX, "Replaces the notes.")
ContactName = Text(limits.CONTACT_NAME_MAX)
DeclineReason = Text(limits.DECLINE_REASON_MAX)  # "" clears it (docs/placements.md)
ContactEmail = Annotated[str, Field(max_length=limits.EMAIL_MAX, pattern=limits.EMAIL_PATTERN)]


def _places(places: int):
    quantum = Decimal(1).scaleb(-places)

    def rounded(value: float) -> float:
        return float(Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP))

    return AfterValidator(rounded)


def _multiple(maximum: int, places: int) -> Any:
    return Annotated[Number(0, maximum), _places(places)]


# Percents refuse a fraction (0.75 for 75 %) with the value probably meant, as the API does.
MaxLtv = Percent(limits.LTV_PERCENT_MAX, limits.LTV_PERCENT_FLOOR, limits.LTV_PERCENT_COLUMN["decimal_places"])
FeePercent = Percent(limits.FEE_PERCENT_MAX, limits.FEE_PERCENT_FLOOR, limits.FEE_PERCENT_COLUMN["decimal_places"])


# --- shapes -------------------------------------------------------------------------------------------
PLACEMENT_KEYS = ("id", "deal_id", "lender_id", "lender_name", "status", "allowed_next_statuses",
                  "automatic_next_statuses", "program_id", "source_rank", "term_sheet_count", "contact_id",
                  "contact_name", "contact_email", "sent_at", "first_response_at", "decided_at", "notes",
                  "decline_reason")
TERM_SHEET_KEYS = ("id", "placement_id", "lender_id", "lender_name", "quote_type", "loan_amount", "rate_type",
                   "fixed_rate", "rate_index", "spread_bps", "term_months", "amortization_months",
                   "interest_only_months", "max_ltv", "min_dscr", "recourse", "origination_fee_percent",
                   "exit_fee_percent", "prepayment", "expires_on", "winning", "notes", "received_at")


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
    lambda item: {k: v for k, v in item.items() if k not in ("notes", "decline_reason", "contact_name",
                                                             "contact_email")},
    # What the next call needs: get_placement has the rest.
    lambda item: {k: item.get(k) for k in ("id", "lender_id", "lender_name", "status", "term_sheet_count")},
]
# Notes are never trimmed (no other tool reads them back): a page too large ends early instead.
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
                                       description=f"With search_id alone: the top N ranked (default "
                                                   f"{limits.PLACEMENT_TOP_N_DEFAULT}).")] = None,
    send: Annotated[bool, Field(description="true: the deal went to them now (status sent); else drafts.")] = False,
    notes: Notes | None = None,
    contact_ids: Annotated[list[Id(None)] | None, Field(
        max_length=limits.PLACEMENTS_PER_CREATE_MAX,
        description="Our lender contacts to send to (list_contacts), one per lender placed.")] = None,
) -> dict[str, Any]:
    """Place a deal with lenders, one placement each to track answers and quotes.
    Confirm the lender list with the user first; send=true only once the user says the deal went.

    Pass lender_ids, or search_id of a completed search (with top_n) for its best-ranked lenders.
    Safe to repeat: a lender already placed is in failed with CONFLICT and its placement_id;
    unknown ids with NOT_FOUND; the rest are placed. Returns {"placements", "failed", "message"}.
    """
    body = drop_none(lender_ids=lender_ids, search_id=search_id, top_n=top_n, send=True if send else None,
                     notes=notes, contact_ids=contact_ids)
    # One key per call: a local retry of this request never places twice (nor would a repeat).
    result = lev().post(at("/deals/{deal_id}/placements/", deal_id=deal_id), body,
                        idempotency_key=f"mcp-{uuid.uuid4()}")
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
    status: PlacementStatus | None = None,
    lender_id: Annotated[Id(None) | None, Field()] = None,
    limit: Limit = limits.PAGE_SIZE_DEFAULT,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """List the lenders a deal was placed with and where each stands, oldest first.

    status: draft (not sent yet), sent, reviewing, quoted (a term sheet recorded), declined,
    no_response, won, lost, archived; allowed_next_statuses: what update_placement may set. Returns
    {"placements", "total", "has_more", "next_cursor"}; a very large page is compacted.
    """
    page, size = decode_cursor(cursor, limit)
    body = get_page(at("/deals/{deal_id}/placements/", deal_id=deal_id),
                    drop_none(status=status, lender_id=lender_id, page=page, page_size=size), page)
    payload = page_result("placements", body, page, size, [_placement(p) for p in body["results"]])
    return fit_budget(payload, "placements", PLACEMENT_STEPS)


@tool(scope=PLACEMENTS_READ, title="Get a placement", read_only=True)
def get_placement(placement_id: PlacementId) -> dict[str, Any]:
    """Get one placement: status, allowed_next_statuses, contact, program and its term sheets
    (with their notes).
    At most the first 20 term sheets are shown (then truncated: true and continue_with names the
    call for the rest).
    """
    body = lev().get(at("/placements/{placement_id}/", placement_id=placement_id))
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
        description="sent, reviewing, declined, no_response, lost, archived. quoted: add_term_sheet; "
                    "won: select_winning_term_sheet.")] = None,
    notes: Notes | None = None,
    decline_reason: DeclineReason | None = None,
    contact_id: Id(None) | None = None,
    contact_name: ContactName | None = None,
    contact_email: ContactEmail | None = None,
    program_id: Id(None) | None = None,
) -> dict[str, Any]:
    """Record a lender's progress on a placement, or change its notes, contact or program. Only
    forward (allowed_next_statuses); declined, lost, archived are final: confirm with the user.
    """
    body = drop_none(status=status, notes=notes, decline_reason=decline_reason, contact_id=contact_id,
                     contact_name=contact_name, contact_email=contact_email, program_id=program_id)
    require_change(body, "placement_id")
    return {"placement": _placement(lev().patch(at("/placements/{placement_id}/", placement_id=placement_id), body))}


# --- term sheets ------------------------------------------------------------------------------------
@tool(scope=PLACEMENTS_WRITE, title="Record a term sheet", destructive=False, idempotent=False)
def add_term_sheet(
    placement_id: PlacementId,
    loan_amount: Annotated[Money, Field(description="US dollars, rounded to the cent.")],
    rate_type: Annotated[RateType, Field(description="fixed: pass fixed_rate; floating: rate_index, spread_bps.")],
    fixed_rate: Annotated[InterestRate | None, Field(
        description="Percent (6.125, not 0.06125), kept to 3 decimals.")] = None,
    rate_index: RateIndex | None = None,
    spread_bps: Annotated[BasisPoints(0, limits.SPREAD_BPS_MAX) | None, Field(
        description="275 means index + 2.75 %.")] = None,
    quote_type: Annotated[QuoteType | None, Field(description="Default term_sheet.")] = None,
    term_months: Annotated[int | None, Field(ge=1, le=limits.TERM_MONTHS_MAX)] = None,
    amortization_months: Annotated[int | None, Field(
        ge=1, le=limits.AMORTIZATION_MONTHS_MAX, description="None: interest-only.")] = None,
    interest_only_months: Annotated[int | None, Field(ge=0, le=limits.TERM_MONTHS_MAX)] = None,
    max_ltv: Annotated[MaxLtv | None, Field(
        description="Percent (75, not 0.75), kept to 2 decimals.")] = None,
    min_dscr: Annotated[_multiple(limits.DSCR_INPUT_MAX, 2) | None, Field(
        description="e.g. 1.25, kept to 2 decimals.")] = None,
    recourse: Recourse | None = None,
    origination_fee_percent: Annotated[FeePercent | None, Field(
        description="Percent of loan (1, not 0.01), kept to 3 decimals.")] = None,
    exit_fee_percent: Annotated[FeePercent | None, Field(
        description="Percent of loan, kept to 3 decimals.")] = None,
    prepayment: Annotated[Text(limits.PREPAYMENT_TEXT_MAX) | None, Field(
        description="e.g. yield maintenance.")] = None,
    expires_on: Date | None = None,
    notes: Annotated[Text(limits.TERM_SHEET_NOTES_MAX) | None, Field(description="Other terms.")] = None,
    quoted_on: Annotated[Date | None, Field(description="If not today.")] = None,
) -> dict[str, Any]:
    """Record a lender's quote on a sent, reviewing or quoted placement (send it with
    update_placement first); it becomes quoted. Each call adds one."""
    body = drop_none(
        loan_amount=loan_amount, rate_type=rate_type, fixed_rate=fixed_rate, rate_index=rate_index,
        spread_bps=spread_bps, quote_type=quote_type, term_months=term_months,
        amortization_months=amortization_months, interest_only_months=interest_only_months, max_ltv=max_ltv,
        min_dscr=min_dscr, recourse=recourse, origination_fee_percent=origination_fee_percent,
        exit_fee_percent=exit_fee_percent, prepayment=prepayment,
        expires_on=expires_on.isoformat() if expires_on else None, notes=notes,
        quoted_on=quoted_on.isoformat() if quoted_on else None,
    )
    # One key per call: a local retry of this request never records the quote twice.
    term_sheet = lev().post(at("/placements/{placement_id}/term-sheets/", placement_id=placement_id), body,
                            idempotency_key=f"mcp-{uuid.uuid4()}")
    return {"term_sheet": _term_sheet(term_sheet), "placement_status": "quoted"}


@tool(scope=PLACEMENTS_READ, title="List a deal's term sheets", read_only=True)
def list_term_sheets(
    deal_id: DealId,
    placement_id: Annotated[Id(None) | None, Field()] = None,
    limit: Limit = limits.PAGE_SIZE_DEFAULT,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """List a deal's quotes (term sheets) as the lenders gave them, with notes, oldest first; to
    compare them on one basis use compare_term_sheets. Returns {"term_sheets", "total", "has_more",
    "next_cursor"}; a page too large ends early (truncated: true), next_cursor skips nothing.
    """
    page, size, skip = decode_page_cursor(cursor, limit)
    body = get_page(at("/deals/{deal_id}/term-sheets/", deal_id=deal_id),
                    drop_none(placement_id=placement_id, page=page, page_size=size), page)
    return read_page(body, "term_sheets", page, size, skip, [_term_sheet(t) for t in body["results"]],
                     TERM_SHEET_STEPS)


COMPARISON_KEYS = ("rank", "term_sheet_id", "placement_id", "lender_id", "lender_name", "quote_type", "winning",
                   "rate_type", "rate_index", "base_rate", "base_rate_as_of", "spread_bps", "all_in_rate",
                   "all_in_cost", "proceeds", "net_proceeds", "total_fees", "origination_fee", "exit_fee", "ltv",
                   "debt_yield", "annual_debt_service", "interest_only_debt_service", "dscr", "dscr_basis",
                   "dscr_interest_only", "dscr_amortizing", "term_months", "amortization_months",
                   "interest_only_months", "recourse", "quoted_on", "expires_on", "expired", "group", "sound",
                   "best_in_group", "notes")
COMPARISON_STEPS = [
    lambda item: {k: v for k, v in item.items()
                  if k not in ("origination_fee", "exit_fee", "interest_only_debt_service", "quoted_on")},
    lambda item: {**item, "notes": item["notes"][:3]},
    # The figures a choice is made on, and the id to choose with.
    lambda item: {**{k: item.get(k) for k in ("rank", "term_sheet_id", "lender_id", "lender_name", "all_in_rate",
                                               "all_in_cost", "proceeds", "total_fees", "ltv", "debt_yield",
                                               "dscr", "dscr_basis", "annual_debt_service", "recourse",
                                               "expired")},
                  "lender_name": clip(item.get("lender_name") or "", 40), "notes": item["notes"][:2]},
]


@tool(scope=PLACEMENTS_READ, title="Compare a deal's term sheets", read_only=True)
def compare_term_sheets(
    deal_id: DealId,
    limit: Annotated[int, Field(ge=1, le=limits.PAGE_SIZE_MAX,
                                description="The best N quotes.")] = limits.PAGE_SIZE_DEFAULT,
) -> dict[str, Any]:
    """Compare a deal's quotes on one basis to help the user pick a winner.

    Per quote: all_in_rate, all_in_cost (fees over the term), proceeds, fees, ltv, debt_yield, dscr
    (dscr_basis), its comparable group and notes. The result's "order" and "best_rule" state the
    rules; unlike quotes get no best_term_sheet_id but "trade_offs" in words. Null figures:
    "unavailable" says why.
    """
    body = lev().get(at("/deals/{deal_id}/term-sheets/comparison/", deal_id=deal_id), {"limit": limit})
    quotes = body.get("quotes") or []
    payload = {
        "deal_id": body["deal_id"],
        "requested_loan_amount": body.get("requested_loan_amount"),
        "value": body.get("value"),
        "noi": body.get("noi"),
        "best_term_sheet_id": body.get("best_term_sheet_id"),
        "trade_offs": body.get("trade_offs") or [],
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
    Its placement becomes won, every other open one lost; a deal has one winner.
    """
    body = lev().post(at("/term-sheets/{term_sheet_id}/select-winner/", term_sheet_id=term_sheet_id),
                      idempotency_key=f"mcp-{uuid.uuid4()}")
    lost = body.get("lost_placement_ids") or []
    message = (f"Term sheet {term_sheet_id} won: placement {body['placement_id']} is won and {len(lost)} other "
               "placement(s) are lost." if body.get("changed") else
               f"Term sheet {term_sheet_id} had already won; nothing changed.")
    return {"term_sheet": _term_sheet(body["term_sheet"]), "placement_id": body["placement_id"],
            "lost_placement_ids": lost, "changed": body.get("changed", False), "message": message}


@tool(scope=PLACEMENTS_WRITE, title="Remove a term sheet", destructive=True, idempotent=True)
def remove_term_sheet(term_sheet_id: TermSheetId) -> dict[str, Any]:
    """Remove a quote recorded by mistake or withdrawn. Confirm with the user first."""
    lev().delete(at("/term-sheets/{term_sheet_id}/", term_sheet_id=term_sheet_id))
    return {"removed": {"term_sheet_id": term_sheet_id}}


# --- outreach: the deal emailed to its lenders (deals.outreach, docs/outreach.md) ---------------------
OutreachKind = Annotated[Literal[OUTREACH_KINDS], BeforeValidator(_choice(OUTREACH_KINDS))]  # type: ignore[valid-type]
OutreachPlacementIds = Annotated[list[Id(None)], Field(min_length=1, max_length=limits.OUTREACH_PLACEMENTS_MAX)]
OutreachDocumentIds = Annotated[list[Id(None)], Field(max_length=limits.OUTREACH_DOCUMENTS_MAX,
                                                      description="The deal's documents to share.")]
EMAIL_KEYS = ("placement_id", "lender_name", "to_address", "status", "attempts", "next_attempt_at", "last_error")


def outreach_body(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The REST body of a send (the confirmation previews the same body)."""
    return drop_none(placement_ids=kwargs.get("placement_ids"), all_drafts=kwargs.get("all_drafts") or None,
                     document_ids=kwargs.get("document_ids"), kind=kwargs.get("kind"))


@tool(scope=PLACEMENTS_WRITE, title="Email placements to lenders", destructive=True, idempotent=False)
def send_placements_email(deal_id: DealId, placement_ids: OutreachPlacementIds | None = None,
                          all_drafts: bool = False, document_ids: OutreachDocumentIds | None = None,
                          kind: OutreachKind = "teaser") -> dict[str, Any]:
    """Email the deal to lenders: each placement's contact gets the teaser (or follow_up: to those not
    answering) with a personal deal package link sharing document_ids. Real email, cannot be unsent:
    confirm the lenders and documents with the user first. Progress: get_outreach_progress."""
    body = outreach_body({"placement_ids": placement_ids, "all_drafts": all_drafts, "document_ids": document_ids,
                          "kind": kind})
    answer = lev().post(at("/deals/{deal_id}/outreach/", deal_id=deal_id), body, idempotency_key=f"mcp-{uuid.uuid4()}")
    return shorten_to_fit(answer, "skipped", None)


@tool(scope=PLACEMENTS_READ, title="Get an outreach send's progress", read_only=True)
def get_outreach_progress(send_id: Id(None)) -> dict[str, Any]:
    """A send's status and its emails by status (sent, retrying, refused...), each email's last error."""
    body = lev().get(at("/outreach/{send_id}/", send_id=send_id))
    emails = [{k: e.get(k) for k in EMAIL_KEYS} for e in body.get("emails") or []]
    for email in emails:
        email["lender_name"] = clip(email["lender_name"] or "", NAME_MAX)
    payload = {k: body.get(k) for k in ("id", "deal_id", "kind", "status", "total", "counts")}
    return shorten_to_fit({**payload, "emails": emails}, "emails", None)
