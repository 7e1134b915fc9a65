"""Metrics of the MCP layer: the series only (who records them imports this module, never the
reverse). A spike of `transient` errors is an infrastructure problem, a spike of `validation`
errors a prompt or schema problem: tool calls are counted by tool, code and category."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

TOOL_CALLS = Counter(
    "lev_mcp_tool_calls", "MCP tool calls by tool and outcome (code 'ok' for success).",
    ["tool", "code", "error_category"],
)
TOOL_SECONDS = Histogram(
    "lev_mcp_tool_call_seconds", "Time to answer an MCP tool call.", ["tool"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
BACKEND_RETRIES = Counter(
    "lev_mcp_backend_retries", "Backend requests that were retried, by how the call ended "
    "(recovered: a retry succeeded; exhausted: every attempt failed).", ["outcome"],
)
BREAKER_TRANSITIONS = Counter(
    "lev_mcp_breaker_transitions", "Circuit breaker state changes seen by this process.", ["state"],
)

BREAKER_STATES = ("closed", "half_open", "open")
