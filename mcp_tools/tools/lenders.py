"""Lender tools."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mcp_tools.registry import lev, tool

LenderId = Annotated[int, Field(ge=1, description="Lender id (from search results or the directory).")]


@tool(title="Get a lender", read_only=True)
def get_lender(lender_id: LenderId) -> dict[str, Any]:
    """Get one lender of the directory with its lending programs.

    Programs list loan types, loan size range (US dollars), states covered (empty = nationwide),
    asset types, max LTV (percent) and min DSCR. Returns {"lender": {...}}.
    """
    return {"lender": lev().get(f"/lenders/{lender_id}/")}
