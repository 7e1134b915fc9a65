"""Document tools: a deal's documents (offering memorandum, rent roll, T-12, photos, term sheets...) and
one document's versions with what was read from it (docs/documents.md). Read only: files are uploaded
through REST (POST /api/v1/deals/{id}/documents/) or the admin, and downloaded there, never through MCP.

In deals:read: a deal's documents are part of the account's deal records.
"""

from __future__ import annotations

from typing import Any, Literal

from lev import limits
from lev.accounts.scopes import DEALS_READ
from lev.enums import DOCUMENT_KINDS
from mcp_tools import budget
from mcp_tools.addresses import at
from mcp_tools.registry import lev, tool
from mcp_tools.tools.common import Cursor, Id, Limit, decode_page_cursor, drop_none, get_page, read_page

Kind = Literal[DOCUMENT_KINDS]  # type: ignore[valid-type]
VERSION_KEYS = ("number", "file_name", "size", "content_type", "source", "uploaded_by", "uploaded_at")
# What a version's `extracted` shows when the whole of it does not fit: its figures and layout, and the
# first problems (each names its row).
PROBLEMS_SHOWN = 20


def _version(item: dict[str, Any] | None) -> dict[str, Any] | None:
    if item is None:
        return None
    return {k: item[k] for k in VERSION_KEYS if item.get(k) is not None}


def _document(item: dict[str, Any]) -> dict[str, Any]:
    return {"id": item["id"], "deal_id": item["deal_id"], "kind": item["kind"], "name": item["name"],
            "versions_count": item["versions_count"], "current": _version(item["current"]),
            "updated_at": item["updated_at"]}


@tool(title="List a deal's documents", scope=DEALS_READ, read_only=True)
def list_deal_documents(deal_id: Id(None), kind: Kind | None = None, limit: Limit = limits.PAGE_SIZE_DEFAULT,
                        cursor: Cursor = None) -> dict[str, Any]:
    """List a deal's documents (OM, rent roll, T-12, photos, term sheets...), latest changed first, each
    with its current version (file name, size, type, who added it, when). get_deal_document gives a
    document's versions and the figures read from it. Returns {"documents", "total", "has_more",
    "next_cursor"}."""
    page, size, skip = decode_page_cursor(cursor, limit)
    body = get_page(at("/deals/{deal_id}/documents/", deal_id=deal_id),
                    {**drop_none(kind=kind), "page": page, "page_size": size}, page)
    return read_page(body, "documents", page, size, skip, [_document(d) for d in body["results"]])


@tool(title="Get a deal's document", scope=DEALS_READ, read_only=True)
def get_deal_document(document_id: Id(None)) -> dict[str, Any]:
    """One document of a deal with its versions, newest first (the latest 20), and for a rent roll or T-12 the figures
    read from it (`extracted`: figures, problems by row, layout; null when nothing was read)."""
    document = lev().get(at("/documents/{document_id}/", document_id=document_id))
    versions = [{**_version(v), "sha256": v["sha256"], "extracted": v.get("extracted")} for v in document["versions"]]
    answer = {"document": {**_document(document), "versions": versions}}
    if not budget.fits(answer):
        # The problems of a large sheet first (the figures stay), then the older versions' readings.
        for version in versions:
            extracted = version.get("extracted")
            if isinstance(extracted, dict) and len(extracted.get("problems") or ()) > PROBLEMS_SHOWN:
                version["extracted"] = {**extracted, "problems": extracted["problems"][:PROBLEMS_SHOWN],
                                        "problems_total": len(extracted["problems"])}
        answer["truncated"] = True
        for version in versions[1:]:
            if budget.fits(answer):
                break
            version["extracted"] = None
        while not budget.fits(answer) and len(versions) > 1:
            versions.pop()
    return answer
