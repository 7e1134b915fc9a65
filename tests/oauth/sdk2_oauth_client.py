"""The official MCP Python SDK 2.x client over OAuth (its OAuthClientProvider) against a live /mcp: run in
the 2.x venv (.tools/sdk2; the project pins `mcp<2`), by tests/oauth/test_sdk2_oauth_e2e.py.

    .tools/sdk2/bin/python tests/oauth/sdk2_oauth_client.py URL auto|legacy DEAL_ID [CLIENT_METADATA_URL]

`auto` is the client's default mode (server/discover first, 2026-07-28), `legacy` the initialize
handshake. Without CLIENT_METADATA_URL the client registers by Dynamic Client Registration.

The browser part of the flow is the test's (tests/oauth/test_sdk_e2e.py's Person signs in and posts the
consent form), so this script talks to it over its stdio, one JSON object a line:
  stdout {"authorize": URL}            the SDK's redirect handler: please open this
  stdin  {"code": ..., "state": ...}   the redirect's parameters, for the SDK's callback handler
  stdout {"result": {...}}             at the end: SDK version, negotiated version, tools, get_deal
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version

from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientMetadata

CALLBACK = "http://127.0.0.1:8765/callback"


def say(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


class MemoryStorage:
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


async def redirect_handler(authorization_url: str) -> None:
    say({"authorize": authorization_url})


async def callback_handler() -> AuthorizationCodeResult:
    line = await asyncio.to_thread(sys.stdin.readline)
    return AuthorizationCodeResult(**json.loads(line))


async def main(url: str, mode: str, deal_id: int, metadata_url: str | None) -> dict:
    auth = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="Acme Agent 2", redirect_uris=[CALLBACK], grant_types=["authorization_code", "refresh_token"],
            response_types=["code"], token_endpoint_auth_method="none"),
        storage=MemoryStorage(), redirect_handler=redirect_handler, callback_handler=callback_handler,
        client_metadata_url=metadata_url,
    )
    http = create_mcp_http_client(auth=auth)
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        tools = await client.list_tools()
        result = await client.call_tool("get_deal", {"deal_id": deal_id})
        return {
            "sdk": version("mcp"),
            "protocol_version": client.protocol_version,
            "tools": sorted(tool.name for tool in tools.tools),
            "get_deal": {"isError": bool(result.is_error), "structuredContent": result.structured_content},
            "scope": auth.context.current_tokens.scope if auth.context.current_tokens else None,
        }


if __name__ == "__main__":
    args = sys.argv[1:]
    say({"result": asyncio.run(main(args[0], args[1], int(args[2]), args[3] if len(args) > 3 else None))})
