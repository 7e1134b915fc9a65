"""Importing this package registers every tool."""

from mcp_tools.tools import account, companies, deals, documents, lenders, notes, pipeline, placements  # noqa: F401
