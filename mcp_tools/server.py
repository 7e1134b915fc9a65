"""The MCP server: Lev's tools on django-mcp-server (`mcp_tools.adapters.sdk.SdkServer`), and where each
request goes.

`LevMCP` holds the catalogue (each tool's schema, built once from its function by the SDK's public
`Tool.from_function`, compacted by `mcp_tools.catalogue`) and hands a request to its revision's dispatcher:
`mcp_tools.protocol_2025_11_25.answer` (`handle_fast`, falling back to the SDK for what it does not answer)
or `mcp_tools.protocol_2026_07_28.answer` (`handle_modern`). A tool call on any path goes through
`mcp_tools.calls`; its result is `mcp_tools.results`'.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpResponse
from mcp.server.fastmcp.tools import Tool
from mcp.shared.exceptions import McpError
from mcp.types import INVALID_PARAMS, CallToolResult, ErrorData, ListToolsResult
from mcp.types import Tool as WireTool
from mcp_server.djangomcp import django_request_ctx

import lev
from mcp_tools import calls, catalogue, confirmations, protocol_2025_11_25, protocol_2026_07_28
from mcp_tools.adapters.sdk import SdkServer
from mcp_tools.registry import TOOLS
from mcp_tools.results import ToolResult
from mcp_tools.toolsets import EVERYTHING, Selection

INSTRUCTIONS = (
    "Lev: commercial real estate deals and a lender directory. Deals belong to the user's account. "
    "Amounts are US dollars. Every failed call returns a JSON error with errorCategory, isRetryable, "
    "code and message: fix arguments on validation errors, relay customerMessage on business errors, "
    "wait retryAfterMs before retrying transient ones, never retry in a tight loop."
)

# MCP specification 2025-11-25, "Resources", error handling: a resource that does not exist.
RESOURCE_NOT_FOUND = -32002
# How much of a URI or name an error echoes back.
URI_ECHO_MAX = 200


def _tool_of(spec: Any) -> Tool:
    tool = Tool.from_function(spec.fn, name=spec.name, title=spec.annotations.title, description=spec.fn.__doc__,
                              annotations=spec.annotations, structured_output=False)
    # Unknown arguments are refused (mcp_tools.calls): the schema says so too.
    tool.parameters["additionalProperties"] = False
    # What tools/list publishes, on every path: compacted.
    catalogue.compact_tool(tool)
    return tool


class LevMCP(SdkServer):
    def __init__(self) -> None:
        # serverInfo names Lev's version (as /health does), not the `mcp` library's.
        super().__init__(name="lev", instructions=INSTRUCTIONS, version=lev.__version__)
        # By name: the same catalogue is always the same bytes, on every path.
        self.tools_by_name: dict[str, Tool] = {spec.name: _tool_of(spec) for spec in sorted(
            TOOLS.values(), key=lambda spec: spec.name)}

    # --- what the SDK's handlers call (the SDK's path: initialize-based requests handle_fast declines) ---
    async def list_tools(self) -> list[WireTool]:
        return [WireTool(name=t.name, title=t.title, description=t.description, inputSchema=t.parameters,
                         outputSchema=t.output_schema, annotations=t.annotations, icons=t.icons, _meta=t.meta)
                for t in self.tools_by_name.values()]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:  # type: ignore[override]
        request = django_request_ctx.get(None)
        result = await sync_to_async(self.call_tool_sync, thread_sensitive=True)(name, arguments, request)
        return result.as_sdk()  # (an InputRequired comes back only for a 2026-07-28 request: never here)

    async def read_resource(self, uri: Any) -> Any:
        """A URI that names no resource of this server is the MCP specification's "Resource not
        found" (-32002, the URI in `data`), not an exception's text with code 0."""
        text = str(uri)
        known = any(str(resource.uri) == text for resource in await self.list_resources())
        if not known and not await self.list_resource_templates():
            raise McpError(ErrorData(code=RESOURCE_NOT_FOUND, message="Resource not found",
                                     data={"uri": text[:URI_ECHO_MAX]}))
        return await super().read_resource(uri)

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """An unknown prompt name is invalid params (-32602), as the specification's prompts say."""
        if not any(prompt.name == name for prompt in await self.list_prompts()):
            raise McpError(ErrorData(code=INVALID_PARAMS, message="Invalid params: name is not a prompt of this server "
                                                                  "(prompts/list lists them)",
                                     data={"name": name[:URI_ECHO_MAX]}))
        return await super().get_prompt(name, arguments)

    # --- Lev's own answers ---
    def call_tool_sync(self, name: str, arguments: dict[str, Any] | None,
                       request: Any) -> ToolResult | confirmations.InputRequired:
        """One tool call (`mcp_tools.calls.call`): both revisions' paths and the SDK's come here."""
        return calls.call(self.tools_by_name, name, arguments, request)

    def handle_fast(self, request: Any) -> HttpResponse | None:
        """`request.data`'s message answered by its revision's dispatcher; None for what the SDK answers."""
        return protocol_2025_11_25.answer(self, request)

    def handle_modern(self, request: Any, message: dict[str, Any]) -> HttpResponse:
        return protocol_2026_07_28.answer(self, request, message)

    @functools.cached_property
    def tools_list_result(self) -> dict[str, Any]:
        """tools/list never changes while the process runs: build it once."""
        listed = ListToolsResult(tools=[
            WireTool(name=t.name, title=t.title, description=t.description, inputSchema=t.parameters,
                     outputSchema=t.output_schema, annotations=t.annotations)
            for t in self.tools_by_name.values()
        ])
        return listed.model_dump(by_alias=True, mode="json", exclude_none=True)

    def tools_list_for(self, granted: frozenset[str] | None, selection: Selection = EVERYTHING) -> dict[str, Any]:
        """tools/list as a credential sees it on this connection: only the tools its scopes let it call
        (all of them when the caller is not an authenticated request of the endpoint) in the toolsets
        the request selected (mcp_tools.toolsets). One cached answer per scope set and selection."""
        if granted is None and selection == EVERYTHING:
            return self.tools_list_result
        key = (granted, selection)
        cached = self.tools_by_scopes.get(key)
        if cached is None:
            tools = [t for t in self.tools_list_result["tools"]
                     if (spec := TOOLS.get(t["name"])) is not None and (granted is None or spec.scope in granted)
                     and selection.allows(spec)]
            cached = self.tools_by_scopes[key] = {**self.tools_list_result, "tools": tools}
        return cached

    @functools.cached_property
    def tools_by_scopes(self) -> dict[tuple[frozenset[str] | None, Selection], dict[str, Any]]:
        return {}

    @functools.cached_property
    def server_info(self) -> dict[str, str]:
        """The name and version initialize answers in `serverInfo` (2026-07-28 puts them in `_meta`)."""
        options = self.initialization_options()
        return {"name": options.server_name, "version": options.server_version}

    @functools.cached_property
    def discover_result(self) -> dict[str, Any]:
        """server/discover: the versions, capabilities and instructions, the same for every caller."""
        capabilities = self.initialization_options().capabilities.model_dump(by_alias=True, mode="json",
                                                                             exclude_none=True)
        return protocol_2026_07_28.discover(capabilities, INSTRUCTIONS, self.server_info)


_server: LevMCP | None = None
_server_built = threading.Lock()


def get_server() -> LevMCP:
    """The one server of this process. Building it is the costly part of a first call (pydantic makes
    a model for each tool's arguments), and a fresh process's first calls come in together (runserver
    starts a thread per request): they wait for the one build under the lock instead of each making
    its own, which at 70 at once cost seconds of CPU and kept SQLite writers past their busy timeout."""
    global _server
    if _server is None:
        with _server_built:
            if _server is None:
                _server = LevMCP()
    return _server
