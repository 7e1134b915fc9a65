"""Importing this package registers every tool."""

from mcp_tools.tools import account, companies, deals, lenders, pipeline, placements  # noqa: F401
