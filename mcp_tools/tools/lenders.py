"""Lender tools: the directory, lender searches for a deal (ranked on a worker), and their results."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from pydantic import Field

from lev import limits
from lev.accounts.scopes import LENDERS_READ, SEARCHES_WRITE
from lev.errors import ErrorCode
from lev.vocabulary import LOAN_AMOUNT_RULE
from mcp_tools.errors import ToolFailure
from mcp_tools.registry import lev, tool
from mcp_tools.tools.common import (
    AssetType,
    Cursor,
    Id,
    LenderType,
    Limit,
    ListCursor,
    LoanAmount,
    LoanType,
    StateCode,
    Text,
    clip,
    cursor_at,
    cursor_failure,
    cut_nested,
    decode_cursor,
    decode_page_cursor,
    drop_none,
    encode_page_cursor,
    fit_budget,
    get_page,
    list_page_query,
    list_page_result,
    page_result,
    read_page,
)

LenderId = Id("Lender id (from search results or the directory).")
DealId = Id("Deal id (from list_deals or create_deal).")
SearchId = Id("Lender search id (from search_lenders_for_deal).")

NAME_MAX = 120


# --- directory -------------------------------------------------------------------------------------
def _directory_item(lender: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": lender["id"],
        "name": clip(lender["name"], NAME_MAX),
        "lender_types": lender.get("lender_types") or [],
        "city": lender.get("city") or "",
        "state": lender.get("state") or "",
        "program_count": lender.get("program_count", 0),
        "min_loan_amount": lender.get("min_loan"),
        "max_loan_amount": lender.get("max_loan"),
    }


DIRECTORY_STEPS = [
    lambda item: {**item, "name": clip(item["name"], 60), "city": clip(item["city"], 30)},
    lambda item: {k: v for k, v in item.items() if k != "city"},
]


@tool(title="Search the lender directory", scope=LENDERS_READ, read_only=True)
def search_lender_directory(
    query: Annotated[Text(limits.SEARCH_TEXT_MAX) | None,
                     Field(description="Words in the lender's name or city.")] = None,
    lender_type: LenderType | None = None,
    state: Annotated[StateCode | None, Field(description="Headquarters state, 2-letter code, e.g. TX (a full name "
                                                         "such as Texas is accepted too).")] = None,
    asset_type: Annotated[AssetType | None, Field(description="Keep lenders with an active program for it.")] = None,
    loan_amount: Annotated[LoanAmount | None, Field(description="US dollars, rounded to the cent, "
                                                                + LOAN_AMOUNT_RULE + ": keep lenders with an active "
                                                                "program whose loan size range includes it.")] = None,
    loan_type: Annotated[LoanType | None, Field(description="Keep lenders with an active program of it.")] = None,
    limit: Limit = limits.PAGE_SIZE_DEFAULT,
    cursor: ListCursor = None,
) -> dict[str, Any]:
    """Browse or filter the global lender directory, alphabetically, one page at a time.

    Use it to look lenders up by name, type or headquarters state, or to see who lends on an
    asset type, loan type or loan size. To rank lenders against a specific deal, use
    search_lenders_for_deal instead. All filters are optional and combine with AND;
    asset_type, loan_type and loan_amount must all be met by one active program.

    Returns {"lenders": [{id, name, lender_types, city, state (headquarters), program_count
    (active programs), min_loan_amount, max_loan_amount (US dollars, across active programs)}],
    "total", "has_more", "next_cursor"}. Pass next_cursor back, with the same filters, for the
    next page. total counts the matching lenders up to 1,000; past that it is 1,000 and
    "total_capped": true is added (page on to see them all). Use get_lender(lender_id) for a
    lender's programs. No match is an empty list.
    """
    page = list_page_query(cursor, limit)
    try:
        body = lev().get("/lenders/", drop_none(
            query=query, lender_type=lender_type, state=state, asset_type=asset_type,
            loan_amount=loan_amount, loan_type=loan_type, **page,
        ))
    except ToolFailure as failure:
        # Only a page-number cursor can miss its page: the list got shorter since it was made.
        if failure.code == ErrorCode.NOT_FOUND and "page" in page:
            raise cursor_failure("points past the last page (the list changed); omit cursor to start "
                                 "again from the first page") from None
        raise
    payload = list_page_result("lenders", body, [_directory_item(x) for x in body["results"]])
    return fit_budget(payload, "lenders", DIRECTORY_STEPS)


# Programs get_lender shows at most (the first page of list_lender_programs), fewer when the byte budget
# is reached first; and the characters of `about` shown (free text of any length in the directory).
PROGRAMS_SHOWN = limits.PAGE_SIZE_DEFAULT
ABOUT_MAX = 2000


@tool(title="Get a lender", scope=LENDERS_READ, read_only=True)
def get_lender(lender_id: LenderId) -> dict[str, Any]:
    """Get one lender of the directory with its lending programs (active ones first).

    Programs list loan types, loan size range (US dollars), states covered (empty = nationwide),
    asset types, max LTV (percent) and min DSCR. Returns {"lender": {..., "programs": [...],
    "programs_total"}}: at most the first 20 programs (fewer if the answer would be too large);
    when some are left out the answer has truncated: true and continue_with: {"tool":
    "list_lender_programs", "arguments": {...}, "remaining"}: call that tool with those arguments
    for the rest. An `about` text longer than 2000 characters is cut (compacted: true).
    """
    lender = lev().get(f"/lenders/{lender_id}/")
    programs = lender.get("programs") or []
    lender["programs"], lender["programs_total"] = programs[:PROGRAMS_SHOWN], len(programs)
    payload: dict[str, Any] = {"lender": lender}
    if len(lender.get("about") or "") > ABOUT_MAX:
        lender["about"] = clip(lender["about"], ABOUT_MAX)
        payload["compacted"] = True
    return cut_nested(payload, "lender", "programs", len(programs), lambda kept: {
        "tool": "list_lender_programs",
        "arguments": {"lender_id": lender_id, "cursor": cursor_at(kept, PROGRAMS_SHOWN)},
    })


@tool(title="List a lender's programs", scope=LENDERS_READ, read_only=True)
def list_lender_programs(lender_id: LenderId, limit: Limit = limits.PAGE_SIZE_DEFAULT,
                         cursor: Cursor = None) -> dict[str, Any]:
    """List a lender's lending programs, active first, one page at a time.

    Use it for a lender with more programs than get_lender shows (its continue_with gives the
    cursor to start from). Each program: id, title, status, loan_types, recourse_types,
    min_loan_amount and max_loan_amount (US dollars), capital_source_type, positions,
    sponsor_states (empty = nationwide), asset_types, max_ltv (percent), min_dscr. Returns
    {"programs": [...], "total", "has_more", "next_cursor"}; pass next_cursor back for the next
    page. A page that would be too large ends early (truncated: true); its next_cursor continues
    right after the last program returned, so nothing is skipped.
    """
    page, size, skip = decode_page_cursor(cursor, limit)
    body = get_page(f"/lenders/{lender_id}/programs/", {"page": page, "page_size": size}, page)
    return read_page(body, "programs", page, size, skip, body["results"])


# --- lender searches -------------------------------------------------------------------------------
def _start_message(body: dict[str, Any]) -> str:
    search_id, status = body["search_id"], body["status"]
    reused = "The deal is unchanged since this search started, so it is reused. " if body.get("reused") else ""
    if status == "completed":
        return (f"{reused}Search {search_id} is completed: {body.get('total_matches', 0)} lenders matched. "
                f"Call get_lender_search_results(search_id={search_id}) to read the ranked list.")
    if status == "failed":
        return f"{reused}Search {search_id} failed. Call get_lender_search_results(search_id={search_id})."
    if body.get("queue_status") == "not_queued":
        return (f"Search {search_id} was saved but could not be queued: the job queue is unreachable. It is "
                f"queued automatically when the queue is back; call get_lender_search_results(search_id="
                f"{search_id}) in about a minute (do not start another search, it would wait the same way).")
    seconds = max(1, round(body.get("poll_after_ms", 1000) / 1000))
    return (f"{reused}Ranking lenders for deal {body['deal_id']} (search {search_id}, {status}). "
            f"Call get_lender_search_results(search_id={search_id}) in about {seconds} s; "
            "repeat until status is completed.")


@tool(title="Find lenders for a deal", scope=SEARCHES_WRITE, idempotent=True)
def search_lenders_for_deal(deal_id: DealId) -> dict[str, Any]:
    """Start ranking the lender directory against a deal; returns at once with a search_id.

    Uses the deal as it is now: loan amount, loan type, business plan, every property's state
    and asset type (including properties just added with add_deal_property) and, when present,
    the financials (LTV, DSCR). The deal needs a loan amount and at least one property with a
    state and an asset type; otherwise this fails with BUSINESS_RULE and customerMessage says
    exactly what to add. Repeating the call is safe: a recent search of the unchanged deal is
    returned instead of starting a new one; after any change to the deal a new search starts.

    Returns {"search_id", "status" (pending, running, partial, completed, failed), "deal_id",
    "message", "poll_after_ms"}, plus "queue_status": "not_queued" when the job queue was
    unreachable: the search is kept and queued automatically later. Then call
    get_lender_search_results(search_id), waiting poll_after_ms between calls while the status
    is pending, running or partial.
    """
    # The key makes the create retryable inside the client on transient failures; the API
    # itself dedupes by reusing the deal's recent search.
    body = lev().post(f"/deals/{deal_id}/lender-searches/", {}, idempotency_key=f"mcp-{uuid.uuid4()}")
    return {
        "search_id": body["search_id"],
        "status": body["status"],
        "deal_id": body["deal_id"],
        "message": _start_message(body),
        "poll_after_ms": body["poll_after_ms"],
        # Only when the job could not be queued, so the usual answer keeps its shape.
        **({"queue_status": "not_queued"} if body.get("queue_status") == "not_queued" else {}),
    }


def _waiting(body: dict[str, Any]) -> dict[str, str]:
    """queue_status, message and hint for a pending search no worker has started (or that was
    never queued); nothing while the search is moving."""
    search_id, queue_status = body["search_id"], body.get("queue_status")
    if queue_status == "not_queued":
        return {
            "queue_status": queue_status,
            "message": f"Search {search_id} is pending: its ranking job could not be queued yet (the job queue "
                       "is unreachable).",
            "hint": "It is queued automatically when the queue is back. Poll again in about a minute; if it "
                    "stays pending for several minutes, tell the user lender ranking is delayed.",
        }
    if queue_status == "not_picked_up":
        return {
            "queue_status": queue_status,
            "message": f"Search {search_id} is pending: no ranking worker has picked it up after "
                       f"{body.get('pending_seconds', 0)} s.",
            "hint": "The job has not been picked up yet (workers busy or down); it is re-queued automatically. "
                    "Poll less often (every 15-30 s); if it stays pending for several minutes, tell the user "
                    "lender ranking is delayed. Starting another search would not help.",
        }
    return {}


def _coverage(body: dict[str, Any]) -> dict[str, Any]:
    """What the pages cover: `ranked` (ranks 1..ranked are stored) of `total` eligible lenders,
    said in a message when they differ; or that a superseded search's ranks were removed."""
    ranked = body.get("ranked_count", 0)
    if body.get("results_removed"):
        newer = body.get("superseded_by_search_id")
        read = (f"read search {newer} (get_lender_search_results(search_id={newer}))" if newer
                else "start a new one")
        return {
            "ranked": 0, "results_removed": True, "superseded_by_search_id": newer,
            "message": f"Search {body['search_id']} was replaced by a newer search of the deal, and its ranked "
                       f"list was removed after the retention period (it had {body.get('count', 0)} eligible "
                       "lenders).",
            "hint": f"This search has no pages any more: {read}; search_lenders_for_deal(deal_id="
                    f"{body['deal_id']}) returns the deal's current search.",
        }
    extra: dict[str, Any] = {"ranked": ranked}
    if body.get("count", 0) > ranked > 0:
        extra["message"] = (f"total counts every eligible lender ({body['count']:,}); pages cover only the best "
                            f"{ranked:,} (ranks 1-{ranked}), so has_more ends there.")
    return extra


def _match_item(match: dict[str, Any]) -> dict[str, Any]:
    return {
        "rank": match["rank"],
        "lender_id": match["lender_id"],
        "lender_name": clip(match.get("lender_name") or "", NAME_MAX),
        "score": match["score"],
        "match_insights": list(match.get("match_insights") or []),
        "programs": list(match.get("programs") or []),
        "program_count": match.get("program_count", 0),
    }


MATCH_STEPS = [
    lambda item: {**item, "programs": item["programs"][:1]},
    lambda item: {**item, "programs": []},
    lambda item: {**item, "match_insights": item["match_insights"][:3]},
    lambda item: {**item, "lender_name": clip(item["lender_name"], 60), "match_insights": item["match_insights"][:1]},
]


def _failure(body: dict[str, Any]) -> ToolFailure:
    error = body.get("error") or {}
    code = error.get("code") or ErrorCode.INTERNAL_ERROR
    retry = " after retryAfterMs" if code in (ErrorCode.UPSTREAM_UNAVAILABLE, ErrorCode.RATE_LIMITED) else ""
    return ToolFailure(
        code,
        error.get("message") or f"Internal error: lender search {body['search_id']} failed.",
        hint=f"This search will not recover; start a new one{retry} with "
             f"search_lenders_for_deal(deal_id={body['deal_id']}) (a failed search is never reused).",
        details={"search_id": body["search_id"], "deal_id": body["deal_id"], "status": "failed"},
    )


@tool(title="Get lender search results", scope=LENDERS_READ, read_only=True)
def get_lender_search_results(search_id: SearchId, limit: Limit = limits.PAGE_SIZE_DEFAULT,
                              cursor: Cursor = None) -> dict[str, Any]:
    """Get the status of a lender search and one page of its ranked lenders, best first.

    status: pending or running — no results yet, call again after poll_after_ms (a pending
    search no worker has picked up yet says so in message and hint, queue_status
    not_picked_up or not_queued); partial — the
    top ranks are final and readable, more are being written; completed — all results ready;
    failed — returned as an error (isError) with code and message; start a new search.
    A completed search with no matching lender is a success with an empty list.

    Each result: rank (1 = best), lender_id, lender_name, score (0-100: fit of the lender's best
    program to the deal plus its recent activity in the deal's markets), match_insights (short
    reasons: asset type, geography, loan size, leverage (the deal's LTV against the program's
    max), coverage (DSCR against its min), capital source, activity), programs (up
    to 3 matching programs, best first: id, title, loan_types, min/max_loan_amount in US dollars,
    max_ltv percent, min_dscr), program_count (all matching programs). Use get_lender(lender_id)
    for full detail.

    Returns {"search_id", "deal_id", "status", "progress" (percent), "results", "total",
    "ranked", "has_more", "next_cursor", "poll_after_ms", "deal_changed"}. total counts EVERY
    eligible lender; pages cover only the best `ranked` of them (ranks 1..ranked, a server
    setting, 1,000 by default), so has_more ends at rank `ranked` even when total is larger (a
    message says so). Follow next_cursor while has_more; if a page comes back empty while status
    is partial, call again with the same cursor after poll_after_ms. A search replaced by a
    newer one of the same deal loses its pages after a retention period: results_removed true,
    superseded_by_search_id names the search to read instead. deal_changed true means the deal
    was edited after the search started: call search_lenders_for_deal again for a fresh ranking.
    Very large pages may be trimmed of program/insight detail (compacted: true); use a smaller
    limit to get it all.
    """
    page, size = decode_cursor(cursor, limit)
    body = lev().get(f"/lender-searches/{search_id}/", {"page": page, "page_size": size})
    if body["status"] == "failed":
        raise _failure(body)
    items = [_match_item(m) for m in body["results"]]
    paged = page_result("results", body, page, size, items)
    if body["status"] == "partial" and not body.get("page_ready", True):
        # This page is not written yet: point the cursor back at it so the agent asks again.
        paged["has_more"], paged["next_cursor"] = True, encode_page_cursor(page, size)
    payload = {
        "search_id": body["search_id"],
        "deal_id": body["deal_id"],
        "status": body["status"],
        "progress": body["progress"],
        **paged,
        "poll_after_ms": body["poll_after_ms"],
        "deal_changed": bool(body.get("deal_changed")),
        **_coverage(body),
        **_waiting(body),
    }
    return fit_budget(payload, "results", MATCH_STEPS)
