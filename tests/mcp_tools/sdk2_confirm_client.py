"""The official MCP Python SDK 2.x client answering a confirmation (issue 21): run in the 2.x venv of
test_sdk2_client.py (.tools/sdk2) by tests/mcp_tools/test_confirmations.py.

    .tools/sdk2/bin/python tests/mcp_tools/sdk2_confirm_client.py URL API_KEY DEAL_ID accept|decline

Connects in the client's default mode (2026-07-28), declares elicitation by passing a callback, and
calls archive_deal: the server answers `input_required` with a form, the SDK calls the callback (the
"person", who accepts or declines) and retries the call with the answer and the server's state.
Prints one JSON object: the negotiated version, what the person was asked and the final result.
"""

from __future__ import annotations

import asyncio
import json
import sys

from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main(url: str, key: str, deal_id: int, answer: str) -> dict:
    asked: list[dict] = []

    async def person(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append({"message": params.message,
                      "schema": getattr(params, "requested_schema", None)})
        if answer == "accept":
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="decline")

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, Client(streamable_http_client(url, http_client=http), elicitation_callback=person) as client:
        result = await client.call_tool("archive_deal", {"deal_id": deal_id})
        return {"protocol_version": client.protocol_version, "asked": asked,
                "isError": bool(result.is_error), "structuredContent": result.structured_content}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])), default=str))
