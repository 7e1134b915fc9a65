"""The FastMCP peer (fastmcp 4.x) with one tool, get_deal, served stateless with JSON responses
(streamable HTTP, no session, no initialize needed), no authentication.

    PEERS_DSN=postgresql://... uvicorn fastmcp_server:app --workers 2   (bench/peers/run.py starts it)
"""

from __future__ import annotations

from db import read_deal
from deal_row import NOT_FOUND, text
from fastmcp import FastMCP
from fastmcp.tools import ToolResult

mcp = FastMCP("peers-fastmcp")


@mcp.tool
async def get_deal(deal_id: int) -> ToolResult:
    """Get one deal."""
    found = await read_deal(deal_id)
    if found is None:
        return ToolResult(content=NOT_FOUND, is_error=True)
    return ToolResult(content=text(found), structured_content=found)


app = mcp.http_app(path="/mcp", json_response=True, stateless_http=True)
