"""Note and timeline tools: notes (a note, call, email or meeting) on a deal, placement, company or
contact, and a deal's timeline of what happened to it (docs/notes.md).

In deals:read / deals:write: notes are part of the account's deal records, as companies are.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from pydantic import Field

from lev import limits
from lev.accounts.scopes import DEALS_READ, DEALS_WRITE
from lev.enums import NOTE_KINDS
from lev.errors import ErrorCode
from mcp_tools import budget
from mcp_tools.addresses import at
from mcp_tools.errors import ToolFailure, validation_failure
from mcp_tools.registry import lev, tool
from mcp_tools.tools.common import (
    Cursor,
    Id,
    Limit,
    ListCursor,
    Text,
    clip,
    cursor_failure,
    decode_page_cursor,
    drop_none,
    fit_budget,
    get_page,
    list_page_query,
    list_page_result,
    read_page,
)

Kind = Literal[NOTE_KINDS]  # type: ignore[valid-type]
Body = Text(limits.NOTE_BODY_MAX, required=True)
IdempotencyKey = Annotated[str | None, Field(pattern=limits.IDEMPOTENCY_KEY_PATTERN,
                                             description="Reuse to repeat a write safely.")]
TARGETS = ("deal_id", "placement_id", "company_id", "contact_id")
ONE_TARGET = "pass one of deal_id, placement_id, company_id or contact_id"
NOTE_KEYS = ("id", "kind", "body", *TARGETS, "author", "created_at")
NOTE_STEPS = [lambda n: {**n, "body": clip(n["body"], 500)}, lambda n: {**n, "body": clip(n["body"], 100)}]
ENTRY_STEPS = [lambda e: {**e, "text": clip(e["text"], 100)}]


def _note(item: dict[str, Any]) -> dict[str, Any]:
    return {k: item.get(k) for k in NOTE_KEYS if item.get(k) is not None}


def _entry(item: dict[str, Any]) -> dict[str, Any]:
    return {k: item[k] for k in ("at", "kind", "actor", "text", "refs")}


@tool(title="Add a note", scope=DEALS_WRITE, destructive=False, idempotent=False)
def add_note(
    body: Body,
    kind: Kind = "note",
    deal_id: Annotated[Id(None) | None, Field(description="One target id of four.")] = None,
    placement_id: Id(None) | None = None,
    company_id: Id(None) | None = None,
    contact_id: Id(None) | None = None,
    idempotency_key: IdempotencyKey = None,
) -> dict[str, Any]:
    """Write a note, or log a call, email or meeting, on one deal, placement, company or contact
    (pass one id). A placement's notes show on its deal's timeline. The answer shortens the body."""
    given = drop_none(deal_id=deal_id, placement_id=placement_id, company_id=company_id, contact_id=contact_id)
    if len(given) != 1:
        raise validation_failure({"deal_id": [ONE_TARGET]}, message=f"Validation failed: {ONE_TARGET}")
    note = lev().post("/notes/", {**given, "kind": kind, "body": body},
                      idempotency_key=idempotency_key or f"mcp-{uuid.uuid4()}")
    return {"note": NOTE_STEPS[0](_note(note))}


@tool(title="List notes", scope=DEALS_READ, read_only=True)
def list_notes(
    deal_id: Annotated[Id(None) | None, Field(description="With its placements' notes.")] = None,
    placement_id: Id(None) | None = None,
    company_id: Id(None) | None = None,
    contact_id: Id(None) | None = None,
    kind: Kind | None = None,
    limit: Limit = limits.PAGE_SIZE_DEFAULT,
    cursor: ListCursor = None,
) -> dict[str, Any]:
    """List the account's notes, newest first, by target or kind.
    Returns {"notes", "total", "has_more", "next_cursor"}."""
    query = drop_none(deal_id=deal_id, placement_id=placement_id, company_id=company_id, contact_id=contact_id,
                      kind=kind)
    page = list_page_query(cursor, limit)
    payload = _notes_page(query, page)
    if not budget.fits(payload) and len(payload["notes"]) > 1 and "page" not in page:
        # Still too large with each body clipped: ask for as many as fit, so the API's own cursor
        # continues right after the last one returned.
        notes, kept = payload["notes"], 1
        while kept < len(notes) and budget.fits({**payload, "notes": notes[: kept + 1], "truncated": True}):
            kept += 1
        payload = {**_notes_page(query, {**page, "page_size": kept}), "truncated": True}
        # The shorter page's own cursor and counts are not the long page's: it may still be a few bytes
        # over (seen: 16 bytes over a 12,000-byte budget), so one fewer until it fits.
        while not budget.fits(payload) and kept > 1:
            kept -= 1
            payload = {**_notes_page(query, {**page, "page_size": kept}), "truncated": True}
    return payload


def _notes_page(query: dict[str, Any], page: dict[str, Any]) -> dict[str, Any]:
    try:
        body = lev().get("/notes/", {**query, **page})
    except ToolFailure as failure:
        # Only a page-number cursor can miss its page: the list got shorter since it was made.
        if failure.code == ErrorCode.NOT_FOUND and "page" in page and (failure.details or {}).get(
                "resource") == "resource":
            raise cursor_failure("points past the last page (the list changed); omit cursor to start "
                                 "again from the first page") from None
        raise
    return fit_budget(list_page_result("notes", body, [_note(n) for n in body["results"]]), "notes", NOTE_STEPS)


@tool(title="Get a deal's timeline", scope=DEALS_READ, read_only=True)
def get_deal_timeline(deal_id: Id(None), limit: Limit = limits.PAGE_SIZE_DEFAULT,
                      cursor: Cursor = None) -> dict[str, Any]:
    """What happened to a deal, oldest first: stage moves, searches, placements sent and their
    status, quotes, the winner, notes. Each entry: at, kind, actor ("Lev": automatic), text, refs (ids).
    Returns {"entries", "total", "has_more", "next_cursor"}."""
    page, size, skip = decode_page_cursor(cursor, limit)
    body = get_page(at("/deals/{deal_id}/timeline/", deal_id=deal_id), {"page": page, "page_size": size}, page)
    return read_page(body, "entries", page, size, skip, [_entry(e) for e in body["results"]], ENTRY_STEPS)
