"""Lender tools: the directory, lender searches for a deal (ranked on a worker), their results, and the
market rates (index rates by date) floating quotes are priced over."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any, Literal

from django.utils import timezone
from pydantic import BeforeValidator, Field

from lenders.program_terms import TERM_FIELDS, WHOLE_NUMBERS
from lev import limits
from lev.accounts.scopes import DEALS_WRITE, LENDERS_READ, SEARCHES_WRITE
from lev.enums import ASSET_TYPES, LENDER_TYPES, POSITIONS, PROGRAM_LOAN_TYPES, RATE_TYPES, RECOURSE_TYPES, US_STATES
from lev.errors import ErrorCode
from lev.limits import LOAN_AMOUNT_MIN
from mcp_tools.addresses import at
from mcp_tools.errors import ToolFailure, validation_failure
from mcp_tools.registry import lev, tool
from mcp_tools.tools.common import (
    AssetType,
    BasisPoints,
    CapitalSource,
    Cursor,
    Date,
    Id,
    LenderType,
    Limit,
    ListCursor,
    LoanAmount,
    LoanType,
    MoneyFilter,
    Number,
    Percent,
    RateIndex,
    StateCode,
    Text,
    _choice,
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

LenderId = Id(None)
DealId = Id(None)
SearchId = Id("Lender search id.")

NAME_MAX = 120
# A program's percents: a fraction (0.75 for 75) refused with the value probably meant, as the API does.
ProgramLtv = Percent(limits.LTV_PERCENT_MAX, limits.LTV_PERCENT_FLOOR, limits.LTV_PERCENT_COLUMN["decimal_places"])
ProgramRate = Percent(limits.RATE_PERCENT_MAX, limits.RATE_PERCENT_FLOOR, limits.RATE_DECIMAL_PLACES)
ProgramDebtYield = Percent(limits.DEBT_YIELD_PERCENT_MAX, limits.DEBT_YIELD_PERCENT_FLOOR,
                           limits.LTV_PERCENT_COLUMN["decimal_places"])


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
        "own": bool(lender.get("own")),
    }


DIRECTORY_STEPS = [
    lambda item: {**item, "name": clip(item["name"], 60), "city": clip(item["city"], 30)},
    lambda item: {k: v for k, v in item.items() if k != "city"},
]


@tool(title="Search the lender directory", scope=LENDERS_READ, read_only=True)
def search_lender_directory(
    query: Annotated[Text(limits.SEARCH_TEXT_MAX) | None,
                     Field(description="Words in the name or city.")] = None,
    lender_type: LenderType | None = None,
    state: Annotated[StateCode | None, Field(description="Headquarters state: code (TX) or name (Texas).")] = None,
    asset_type: AssetType | None = None,
    loan_amount: Annotated[LoanAmount | None, Field(description=f"US dollars, rounded to the cent, at least "
                                                                f"{LOAN_AMOUNT_MIN}.")] = None,
    loan_type: LoanType | None = None,
    limit: Limit = limits.PAGE_SIZE_DEFAULT,
    cursor: ListCursor = None,
) -> dict[str, Any]:
    """Browse the lender directory alphabetically (to rank lenders for a deal, use
    search_lenders_for_deal). Filters combine with AND; asset_type, loan_type and loan_amount must
    all be met by one active program.

    Returns {"lenders", "total", "has_more", "next_cursor"}; pass next_cursor back with the same
    filters. total counts matches up to 1,000; past that it is 1,000 and "total_capped": true.
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


def _program_item(program: dict[str, Any]) -> dict[str, Any]:
    """A program as the API writes it, without the terms it does not state (null, or "" for rate_type
    and rate_index): most programs state few, and 20 programs of nulls cost an agent ~4 KB to read."""
    return {k: v for k, v in program.items() if k not in TERM_FIELDS or v not in (None, "")}


# Programs get_lender shows at most (the first page of list_lender_programs), fewer when the byte budget
# is reached first; and the characters of `about` shown (free text of any length in the directory).
PROGRAMS_SHOWN = limits.PAGE_SIZE_DEFAULT
ABOUT_MAX = 2000


@tool(title="Get a lender", scope=LENDERS_READ, read_only=True)
def get_lender(lender_id: LenderId) -> dict[str, Any]:
    """Get a lender with its programs, active first: at most the first 20 programs (then
    truncated: true and continue_with names the call for the rest). An `about` text longer than
    2000 characters is cut. Empty states = nationwide; max_ltv, rates, min_debt_yield percent;
    spreads bps. Terms (rate, term, amortization, IO) only when stated.
    """
    lender = lev().get(at("/lenders/{lender_id}/", lender_id=lender_id))
    programs = lender.get("programs") or []
    lender["programs"] = [_program_item(p) for p in programs[:PROGRAMS_SHOWN]]
    lender["programs_total"] = len(programs)
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
    """List a lender's programs, active first (more than get_lender shows). Returns {"programs",
    "total", "has_more", "next_cursor"}; pass next_cursor back for the next page. A page too large
    ends early (truncated: true); next_cursor skips nothing. Terms only when stated.
    """
    page, size, skip = decode_page_cursor(cursor, limit)
    body = get_page(at("/lenders/{lender_id}/programs/", lender_id=lender_id), {"page": page, "page_size": size}, page)
    return read_page(body, "programs", page, size, skip, [_program_item(p) for p in body["results"]])


# --- the account's own lenders and programs --------------------------------------------------------
ProgramLoanType = Annotated[Literal[PROGRAM_LOAN_TYPES],  # type: ignore[valid-type]
                            BeforeValidator(_choice(PROGRAM_LOAN_TYPES))]
Position = Annotated[Literal[POSITIONS], BeforeValidator(_choice(POSITIONS))]  # type: ignore[valid-type]
RateType = Annotated[Literal[RATE_TYPES], BeforeValidator(_choice(RATE_TYPES))]  # type: ignore[valid-type]
Recourse = Annotated[Literal[RECOURSE_TYPES], BeforeValidator(_choice(RECOURSE_TYPES))]  # type: ignore[valid-type]
IdempotencyKey = Annotated[str | None, Field(pattern=limits.IDEMPOTENCY_KEY_PATTERN,
                                             description="Reuse to repeat a create safely.")]
Website = Annotated[str, Field(max_length=limits.LENDER_WEBSITE_MAX, pattern=limits.WEBSITE_PATTERN)]


_CENTS = "USD, rounded to the cent."
_RATE = "Percent (6.25), kept to 3 decimals."


def _some(item: Any, values: tuple[str, ...], least: int | None = None) -> Any:
    return Annotated[list[item], Field(min_length=least, max_length=len(values))]


def _whole(name: str) -> Any:
    least, most = WHOLE_NUMBERS[name]
    if name.endswith("_bps"):  # 2.85 is refused with "did you mean 285?"
        return BasisPoints(least, most) | None
    return Annotated[int | None, Field(ge=least, le=most)]


@tool(title="Add a lender of your own", scope=DEALS_WRITE, destructive=False, idempotent=False)
def create_lender(
    name: Text(limits.LENDER_NAME_MAX, required=True),
    website: Website | None = None,
    city: Text(limits.LENDER_CITY_MAX) | None = None,
    state: StateCode | None = None,
    about: Text(limits.LENDER_ABOUT_MAX) | None = None,
    lender_types: _some(LenderType, LENDER_TYPES) | None = None,
    idempotency_key: IdempotencyKey = None,
) -> dict[str, Any]:
    """Add a lender the directory lacks, as the account's own (own: true): only this account sees it.
    Then add_lender_program so searches rank it. A directory lender's name is refused: add programs
    to that lender instead."""
    body = drop_none(name=name, website=website, city=city, state=state, about=about, lender_types=lender_types)
    lender = lev().post("/lenders/", body, idempotency_key=idempotency_key or f"mcp-{uuid.uuid4()}")
    lender.pop("programs", None)
    return {"lender": lender}


@tool(title="Add a lender program of your own", scope=DEALS_WRITE, destructive=False, idempotent=False)
def add_lender_program(
    lender_id: LenderId,
    title: Text(limits.PROGRAM_TITLE_MAX, required=True),
    loan_types: _some(ProgramLoanType, PROGRAM_LOAN_TYPES, 1),
    asset_types: _some(AssetType, ASSET_TYPES, 1),
    min_loan_amount: Annotated[MoneyFilter | None, Field(description=_CENTS)] = None,
    max_loan_amount: Annotated[MoneyFilter | None, Field(description=_CENTS)] = None,
    sponsor_states: Annotated[_some(StateCode, US_STATES) | None, Field(description="Empty: nationwide.")] = None,
    positions: Annotated[_some(Position, POSITIONS, 1) | None, Field(description="Default senior.")] = None,
    recourse_types: _some(Recourse, RECOURSE_TYPES) | None = None,
    capital_source_type: CapitalSource | None = None,
    max_ltv: Annotated[ProgramLtv | None, Field(description="Percent (75), kept to 2 decimals.")] = None,
    min_dscr: Annotated[Number(float(limits.PROGRAM_MIN_DSCR_LEAST), limits.DSCR_INPUT_MAX) | None, Field(
        description="e.g. 1.25, kept to 2 decimals.")] = None,
    rate_type: RateType | None = None,
    rate_index: RateIndex | None = None,
    spread_min_bps: _whole("spread_min_bps") = None,
    spread_max_bps: _whole("spread_max_bps") = None,
    fixed_rate_min: Annotated[ProgramRate | None, Field(description=_RATE)] = None,
    fixed_rate_max: Annotated[ProgramRate | None, Field(description=_RATE)] = None,
    term_months_min: _whole("term_months_min") = None,
    term_months_max: _whole("term_months_max") = None,
    amortization_years: _whole("amortization_years") = None,
    interest_only_months: _whole("interest_only_months") = None,
    min_debt_yield: Annotated[ProgramDebtYield | None, Field(description="Percent, kept to 2 decimals.")] = None,
    idempotency_key: IdempotencyKey = None,
) -> dict[str, Any]:
    """Add the account's own program (own: true) to its own lender or a directory lender; only this
    account's searches rank it. Spreads in bps (275). Each min at most its max; a spread needs
    rate_index; a fixed rate_type takes no spread, a floating one no fixed rate."""
    body = drop_none(
        title=title, loan_types=loan_types, asset_types=asset_types, min_loan_amount=min_loan_amount,
        max_loan_amount=max_loan_amount, sponsor_states=sponsor_states, positions=positions,
        recourse_types=recourse_types, capital_source_type=capital_source_type, max_ltv=max_ltv, min_dscr=min_dscr,
        rate_type=rate_type, rate_index=rate_index, spread_min_bps=spread_min_bps, spread_max_bps=spread_max_bps,
        fixed_rate_min=fixed_rate_min, fixed_rate_max=fixed_rate_max, term_months_min=term_months_min,
        term_months_max=term_months_max, amortization_years=amortization_years,
        interest_only_months=interest_only_months, min_debt_yield=min_debt_yield)
    program = lev().post(at("/lenders/{lender_id}/programs/", lender_id=lender_id), body,
                         idempotency_key=idempotency_key or f"mcp-{uuid.uuid4()}")
    return {"program": _program_item(program), "lender_id": lender_id}


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
    """Start ranking the lender directory against a deal as it is now; returns a search_id at once.

    The deal needs a loan amount and a property with state and asset type (else BUSINESS_RULE
    says what to add). Safe to repeat: an unchanged deal's recent search is returned. Then call
    get_lender_search_results, waiting poll_after_ms while pending, running or partial.
    queue_status "not_queued": the job queue is down; the search is kept and queued later.
    """
    # The key makes the create retryable inside the client on transient failures; the API
    # itself dedupes by reusing the deal's recent search.
    body = lev().post(at("/deals/{deal_id}/lender-searches/", deal_id=deal_id), {},
                      idempotency_key=f"mcp-{uuid.uuid4()}")
    return {
        "search_id": body["search_id"],
        "status": body["status"],
        "deal_id": body["deal_id"],
        "message": _start_message(body),
        "poll_after_ms": body["poll_after_ms"],
        # Only when the job could not be queued, so the usual answer keeps its shape.
        **({"queue_status": "not_queued"} if body.get("queue_status") == "not_queued" else {}),
    }


@tool(title="List a deal's lender searches", scope=LENDERS_READ, read_only=True)
def list_lender_searches(deal_id: DealId, limit: Limit = limits.PAGE_SIZE_DEFAULT,
                         cursor: Cursor = None) -> dict[str, Any]:
    """List a deal's lender searches, newest first: each one's search_id, status, total_matches, when
    it ran and whether the deal changed since (deal_changed). Read one's ranked lenders with
    get_lender_search_results(search_id). Returns {"searches", "total", "has_more", "next_cursor"}.
    """
    page, size, skip = decode_page_cursor(cursor, limit)
    body = get_page(at("/deals/{deal_id}/lender-searches/", deal_id=deal_id), {"page": page, "page_size": size}, page)
    items = [{key: search.get(key) for key in ("search_id", "status", "total_matches", "deal_changed",
                                               "results_removed", "created_at", "finished_at")}
             for search in body["results"]]
    return read_page(body, "searches", page, size, skip, items)


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


SIZING_KEPT = ("max_loan", "binding", "shortfall", "rate", "rate_source", "amortization_years",
               "interest_only_months", "dscr_basis", "missing", "summary")


def _match_item(match: dict[str, Any]) -> dict[str, Any]:
    sized = match.get("sizing")
    return {
        "rank": match["rank"],
        "lender_id": match["lender_id"],
        "lender_name": clip(match.get("lender_name") or "", NAME_MAX),
        # Only on the account's own lenders (the directory's are most): said where it is true.
        **({"own_lender": True} if match.get("lender_own") else {}),
        "score": match["score"],
        "score_parts": match.get("score_parts"),
        "sizing": None if not sized else {key: sized.get(key) for key in SIZING_KEPT},
        "capital_source": match.get("capital_source") or "",
        "outside_box": bool(match.get("outside_box")),
        "match_insights": list(match.get("match_insights") or []),
        "programs": list(match.get("programs") or []),
        "program_count": match.get("program_count", 0),
    }


MATCH_STEPS = [
    lambda item: {**item, "programs": item["programs"][:1]},
    lambda item: {**item, "sizing": item["sizing"] and {"max_loan": item["sizing"]["max_loan"],
                                                        "shortfall": item["sizing"]["shortfall"],
                                                        "summary": item["sizing"]["summary"]}},
    lambda item: {**item, "programs": []},
    lambda item: {**item, "match_insights": item["match_insights"][:3]},
    lambda item: {**item, "lender_name": clip(item["lender_name"], 60), "match_insights": item["match_insights"][:1]},
    # Last: the first insight is the sizing's own sentence (clipped); sizing and score parts are left out
    # (a smaller page shows them).
    lambda item: {**{k: v for k, v in item.items() if k not in ("sizing", "score_parts")},
                  "lender_name": clip(item["lender_name"], 40),
                  "match_insights": [clip(text, 48) for text in item["match_insights"]]},
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
                              cursor: Cursor = None, capital_source: CapitalSource | None = None) -> dict[str, Any]:
    """Get a lender search's status and a page of its ranked lenders, best first.

    status: pending or running (call again after poll_after_ms; message and hint say when no
    worker picked it up), partial (top ranks readable), completed (no match: an empty list), or
    failed (an error: start a new search). Each result: rank, lender_id, lender_name, score 0-100
    (the predicted chance of a quote covering the ask: stated programs, the account's own outcomes,
    sizing; score_parts shows each), sizing (max_loan, binding constraint, shortfall, summary),
    capital_source, outside_box (quotes such deals beyond its stated programs), match_insights, up
    to 3 matching programs; get_lender(lender_id) has full detail. by_capital_source: the kinds of
    capital ranked and the best of each; capital_source filters to one kind. total counts every
    eligible lender; pages cover the best `ranked`. Follow next_cursor while has_more (an empty
    partial page: retry after poll_after_ms). deal_changed true: search again. results_removed:
    read superseded_by_search_id instead.
    """
    page, size = decode_cursor(cursor, limit)
    query: dict[str, Any] = {"page": page, "page_size": size}
    if capital_source is not None:
        query["capital_source"] = capital_source
    body = lev().get(at("/lender-searches/{search_id}/", search_id=search_id), query)
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
        "by_capital_source": [{"capital_source": kind["capital_source"], "lenders": kind["lenders"],
                               "best_rank": kind["best_rank"], "best_lender_id": kind["best_lender_id"],
                               "best_lender_name": clip(kind["best_lender_name"], 60)}
                              for kind in body.get("by_capital_source") or []],
        **_coverage(body),
        **_waiting(body),
    }
    return fit_budget(payload, "results", MATCH_STEPS)


# --- market rates --------------------------------------------------------------------------------
HISTORY_NEEDS_INDEX = "index is required with history_days (one index's history at a time)"


@tool(title="Get market rates", scope=LENDERS_READ, read_only=True)
def get_market_rates(
    index: RateIndex | None = None,
    as_of: Annotated[Date | None, Field(description="YYYY-MM-DD; default today.")] = None,
    history_days: Annotated[int | None, Field(
        ge=1, le=limits.MARKET_RATE_HISTORY_DAYS_MAX,
        description="With index: that index's rates dated in the N days up to as_of, newest first.")] = None,
) -> dict[str, Any]:
    """Index rates (SOFR, Term SOFR, Prime, Treasuries; percent per year) floating quotes are priced
    over. Each index's rate as of a date is its latest rate dated on or before it (compare_term_sheets
    uses each quote's date). Returns {"as_of", "rates": [{index, name, rate, date, days_old}]}
    (rate null: none that early), or with index and history_days {"index", "history": [{date, rate}]}.
    """
    if history_days is not None and index is None:
        raise validation_failure({"index": [HISTORY_NEEDS_INDEX.removeprefix("index ")]})
    if history_days is None:
        body = lev().get("/market-rates/", drop_none(index=index, as_of=as_of.isoformat() if as_of else None))
        rates = [{k: r.get(k) for k in ("index", "name", "rate", "date", "days_old")} for r in body["results"]]
        return {"as_of": body["as_of"], "rates": rates}
    until = as_of or timezone.localdate()
    since = until - dt.timedelta(days=min(history_days - 1, (until - dt.date.min).days))
    body = lev().get(at("/market-rates/{index}/history/", index=index), {
        "since": since.isoformat(), "until": until.isoformat(), "page_size": limits.PAGE_SIZE_MAX})
    history = [{"date": r["date"], "rate": r["rate"]} for r in body["results"]]
    return {"index": index, "since": since.isoformat(), "until": until.isoformat(), "history": history,
            "total": body["count"], "has_more": body["count"] > len(history)}
