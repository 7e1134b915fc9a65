"""The official MCP Python SDK peer: MCPServer (mcp 2.x) with one tool, get_deal, served stateless with
JSON responses (streamable HTTP, no session, no initialize needed), no authentication.

    PEERS_DSN=postgresql://... uvicorn sdk_server:app --workers 2   (bench/peers/run.py starts it)
"""

from __future__ import annotations

from db import read_deal
from deal_row import NOT_FOUND, text
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

mcp = MCPServer("peers-sdk")


@mcp.tool()
async def get_deal(deal_id: int) -> CallToolResult:
    """Get one deal."""
    found = await read_deal(deal_id)
    if found is None:
        return CallToolResult(content=[TextContent(type="text", text=NOT_FOUND)], is_error=True)
    return CallToolResult(content=[TextContent(type="text", text=text(found))], structured_content=found)


app = mcp.streamable_http_app(json_response=True, stateless_http=True)
