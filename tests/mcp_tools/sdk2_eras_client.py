"""Run by test_modern_era.py in the `mcp` 2.x venv of test_sdk2_client.py (.tools/sdk2; not this
project's venv, pinned to 1.x): `python sdk2_eras_client.py URL KEY discover|initialize` prints what the
client negotiated and saw, as JSON."""

import asyncio
import json
import sys

import httpx2 as httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, key: str, how: str) -> None:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}) as http, \
            streamable_http_client(url, http_client=http) as streams, \
            ClientSession(streams[0], streams[1]) as session:
        if how == "discover":
            await session.discover()
        else:
            await session.initialize()
        tools = await session.list_tools()
        ok = await session.call_tool("list_deals", {})
        bad = await session.call_tool("list_deals", {"limit": "x"})
        print(json.dumps({"version": session._negotiated_version, "tools": [t.name for t in tools.tools],
                          "ok": ok.structured_content, "bad": bad.structured_content,
                          "bad_is_error": bad.is_error}))


asyncio.run(main(*sys.argv[1:4]))
