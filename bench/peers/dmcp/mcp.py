"""The django-mcp-server peer's one tool (the library finds `mcp` modules of installed apps): the deal
read with the same SQL as the other peers (bench/peers/deal_row.py), through Django's connection."""

from django.db import connection
from mcp.types import CallToolResult, TextContent
from mcp_server import MCPToolset

from bench.peers.deal_row import NOT_FOUND, SQL, payload, text


class DealTools(MCPToolset):
    def get_deal(self, deal_id: int) -> CallToolResult:
        """Get one deal."""
        with connection.cursor() as cursor:
            cursor.execute(SQL, [deal_id])
            row = cursor.fetchone()
        if row is None:
            return CallToolResult(content=[TextContent(type="text", text=NOT_FOUND)], isError=True)
        found = payload(row)
        return CallToolResult(content=[TextContent(type="text", text=text(found))], structuredContent=found)
