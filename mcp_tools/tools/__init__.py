"""Importing this package registers every tool."""

from mcp_tools.tools import account, deals, lenders, placements  # noqa: F401
