"""Account tools: who the caller is, and what this connection may do."""

from __future__ import annotations

from typing import Any

from lev.accounts.scopes import ACCOUNT_READ
from mcp_tools import toolsets
from mcp_tools.registry import TOOLS, lev, tool


@tool(title="Who am I", scope=ACCOUNT_READ, read_only=True)
def get_account() -> dict[str, Any]:
    """Who you act as in Lev: the user, the account and role (viewer: read only), the credential
    (api_key or oauth; its name, scopes, expiry), the toolsets and read-only mode this connection
    chose, and the rate limits left (reads, writes: remaining, resets_in_seconds). Free: not counted
    against the limits. Use it to explain a FORBIDDEN or RATE_LIMITED, or before a long run of calls."""
    me = lev().get("/account/")
    selection = toolsets.current()
    granted = set(me["credential"]["scopes"])
    return {
        **me,
        "connection": {
            "toolsets": sorted(selection.names) if selection.names is not None else list(toolsets.toolsets()),
            "read_only": selection.read_only,
            # What tools/list shows this connection: its toolsets, read-only mode and the credential's scopes.
            "tools": sum(1 for spec in TOOLS.values() if spec.scope in granted and selection.allows(spec)),
        },
    }
