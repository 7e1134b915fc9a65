"""Pipeline tools: the stages with their deals, moving a deal, a deal's stage history."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from lev import limits
from lev.accounts.scopes import DEALS_READ, DEALS_WRITE
from mcp_tools.addresses import at
from mcp_tools.registry import lev, tool
from mcp_tools.tools.common import Cursor, Id, Limit, Text, decode_page_cursor, drop_none, get_page, read_page

StageText = Text(limits.STAGE_NAME_MAX, required=True)


@tool(title="Get the pipeline", scope=DEALS_READ, read_only=True)
def get_pipeline() -> dict[str, Any]:
    """The account's deal stages in order, each with deal_count and loan_total (USD) of its deals
    that are not archived, and the totals of the active deals: the open stages' (never a closed or
    dead stage's). A deal with a winning quote adds the winner's loan amount, else the amount asked.
    list_deals(stage=...) lists a stage's deals."""
    body = lev().get("/pipeline/stages/")
    stages = [{k: s[k] for k in ("id", "key", "name", "kind", "deal_count", "loan_total")} for s in body["results"]]
    return {"stages": stages, "deal_count": body["deal_count"], "loan_total": body["loan_total"]}


@tool(title="Move a deal to a stage", scope=DEALS_WRITE, idempotent=True)
def move_deal_stage(
    deal_id: Id(None),
    stage: Annotated[StageText, Field(description="Stage name, key or id, as get_pipeline lists them.")],
    reason: Annotated[Text(limits.STAGE_REASON_MAX) | None, Field(description="Why, kept in the history.")] = None,
) -> dict[str, Any]:
    """Move a deal to a stage of its pipeline, in any direction; recorded with who, when and why.
    Its current stage: changed false. Searches and winners move deals forward by themselves."""
    body = lev().post(at("/deals/{deal_id}/stage/", deal_id=deal_id), drop_none(stage=stage, reason=reason))
    return {"deal_id": body["deal_id"], "stage": body["stage"], "changed": body["changed"], "change": body["change"]}


@tool(title="Get a deal's stage history", scope=DEALS_READ, read_only=True)
def get_deal_stage_history(deal_id: Id(None), limit: Limit = limits.PAGE_SIZE_DEFAULT,
                           cursor: Cursor = None) -> dict[str, Any]:
    """A deal's stage changes, oldest first: from, to, by, at, automatic, reason.

    Returns {"changes", "total", "has_more", "next_cursor"}; pass next_cursor back for more.
    """
    page, size, skip = decode_page_cursor(cursor, limit)
    body = get_page(at("/deals/{deal_id}/stage-changes/", deal_id=deal_id), {"page": page, "page_size": size}, page)
    return read_page(body, "changes", page, size, skip, body["results"])
