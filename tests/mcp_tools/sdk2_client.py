"""The official MCP Python SDK 2.x client against a live /mcp: run in its own venv (the project pins
`mcp<2` for django-mcp-server), by tests/mcp_tools/test_sdk2_client.py.

    .tools/sdk2/bin/python tests/mcp_tools/sdk2_client.py URL API_KEY DEAL_ID

Connects in the client's default mode ("auto": it tries 2026-07-28 first and falls back to the
initialize handshake on a server that does not speak it), lists the tools and calls get_deal.
Prints one JSON object: the SDK version, the negotiated protocol version, the tool names and the
get_deal result (isError and structuredContent).
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main(url: str, key: str, deal_id: int) -> dict:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        tools = await client.list_tools()
        result = await client.call_tool("get_deal", {"deal_id": deal_id})
        return {
            "sdk": version("mcp"),
            "protocol_version": client.protocol_version,
            "server": client.server_info.name if client.server_info else None,
            "tools": sorted(tool.name for tool in tools.tools),
            "get_deal": {"isError": bool(result.is_error), "structuredContent": result.structured_content},
        }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))))
