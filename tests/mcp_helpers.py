"""Drive the real /mcp endpoint over HTTP with the official `mcp` client (streamable HTTP)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult


def _connection_reset(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return all(_connection_reset(inner) for inner in exc.exceptions)
    return isinstance(exc, httpx.ReadError | httpx.RemoteProtocolError)


class McpCaller:
    """Synchronous facade: one MCP session per call, like a stateless agent host."""

    def __init__(self, base_url: str, api_key: str | None):
        self.url = base_url.rstrip("/") + "/mcp"
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    async def _session(self, fn):
        # The suite's one live server is shared by hundreds of tests; a connection it resets before
        # the session is even initialised (seen once in a long CI run) is not what any test is
        # about, so that alone is tried once more. Nothing after `initialize` is ever repeated.
        for attempt in (1, 2):
            initialized = False
            try:
                async with (
                    httpx.AsyncClient(headers=self.headers, timeout=30) as http,
                    streamable_http_client(self.url, http_client=http) as (read, write, _),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    initialized = True
                    return await fn(session)
            except BaseException as exc:
                if initialized or attempt == 2 or not _connection_reset(exc):
                    raise
        raise AssertionError("unreachable")

    def list_tools(self):
        return asyncio.run(self._session(lambda s: s.list_tools())).tools

    def call_raw(self, name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        return asyncio.run(self._session(lambda s: s.call_tool(name, arguments or {})))

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> tuple[bool, dict[str, Any]]:
        """(isError, parsed JSON text content); also checks structuredContent matches the text."""
        result = self.call_raw(name, arguments)
        payload = json.loads(result.content[0].text)
        assert result.structuredContent == payload
        return bool(result.isError), payload

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        is_error, payload = self.call(name, arguments)
        assert not is_error, payload
        return payload

    def error(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        is_error, payload = self.call(name, arguments)
        assert is_error, payload
        return payload


def value_schema(prop: dict[str, Any], defs: dict[str, Any] | None = None) -> dict[str, Any]:
    """The schema of a property's non-null values, `$ref`s resolved: the non-null branch of
    pydantic's `anyOf: [X, {"type": "null"}]`, or X itself where tools/list writes it compactly with
    "null" among its types and enum values (mcp_tools/catalogue.py)."""
    defs = defs or {}
    for option in prop.get("anyOf", [prop]):
        if option.get("type") == "null":
            continue
        ref = option.get("$ref")
        if ref:
            return defs[ref.rsplit("/", 1)[-1]]
        if isinstance(option.get("type"), list):
            types = [t for t in option["type"] if t != "null"]
            option = {**option, "type": types[0] if len(types) == 1 else types}
            if "enum" in option:
                option["enum"] = [value for value in option["enum"] if value is not None]
        return option
    raise AssertionError(prop)
