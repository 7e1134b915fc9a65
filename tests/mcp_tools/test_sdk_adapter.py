"""mcp_tools/adapters/sdk.py is the one place that touches django-mcp-server's and the mcp SDK's insides.
It was read against the versions in WRITTEN_FOR: another installed version fails here first, loudly, so an
upgrade starts by re-reading the adapter (and docs/architecture.md's list of adapters)."""

from __future__ import annotations

import asyncio
from importlib.metadata import version

import lev
from mcp_tools.adapters.sdk import WRITTEN_FOR
from mcp_tools.registry import TOOLS
from mcp_tools.server import get_server


def test_the_installed_libraries_are_the_versions_the_adapter_was_written_against():
    installed = {name: version(name) for name in WRITTEN_FOR}
    assert installed == WRITTEN_FOR, (
        f"mcp_tools/adapters/sdk.py was written against {WRITTEN_FOR}, {installed} is installed: re-read what "
        "it touches (the low-level server's version, request_handlers, create_initialization_options) in the "
        "new versions, then update WRITTEN_FOR")


def test_what_the_adapter_touches_does_what_it_is_used_for():
    server = get_server()
    assert server.server_info == {"name": "lev", "version": lev.__version__}
    assert {"tools/call", "tools/list", "ping", "initialize", "resources/read", "prompts/get"} <= set(
        server.request_models)
    capabilities = server.initialization_options().capabilities
    assert capabilities.tools is not None and capabilities.resources is not None


def test_the_sdks_tools_list_is_the_catalogue():
    listed = asyncio.run(get_server().list_tools())
    assert [tool.name for tool in listed] == sorted(TOOLS)
    assert all(tool.inputSchema["additionalProperties"] is False for tool in listed)
