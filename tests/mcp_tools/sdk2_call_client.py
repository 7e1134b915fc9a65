"""The official MCP Python SDK 2.x client calling any tool as a person would through it: run in the 2.x
venv of test_sdk2_client.py (.tools/sdk2), e.g. by tests/deals/outreach/test_e2e.py.

    .tools/sdk2/bin/python tests/mcp_tools/sdk2_call_client.py URL API_KEY TOOL ARGUMENTS_JSON accept|decline

Connects in the client's default mode (2026-07-28) and declares elicitation by passing a callback: a tool
that asks for confirmation gets the person's answer (accept with confirm: true, or decline). Prints one
JSON object: the negotiated version, what the person was asked and the final result.
"""

from __future__ import annotations

import asyncio
import json
import sys

from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main(url: str, key: str, tool: str, arguments: dict, answer: str) -> dict:
    asked: list[dict] = []

    async def person(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append({"message": params.message})
        if answer == "accept":
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="decline")

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, Client(streamable_http_client(url, http_client=http), elicitation_callback=person) as client:
        result = await client.call_tool(tool, arguments)
        return {"protocol_version": client.protocol_version, "asked": asked,
                "isError": bool(result.is_error), "structuredContent": result.structured_content}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5])),
                     default=str))
