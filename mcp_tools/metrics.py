"""Metrics of the MCP layer. A spike of `transient` errors is an infrastructure problem, a spike of
`validation` errors a prompt or schema problem: tool calls are counted by tool, code and category."""

from __future__ import annotations

from prometheus_client import Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from lev.metrics import register_live_collector

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


def tool_label(name: str) -> str:
    """Only registered tool names become labels: a caller's made-up names must not grow the series."""
    from mcp_tools.registry import TOOLS

    return name if name in TOOLS else "unknown"


def record_tool_call(tool: str, payload: dict, *, is_error: bool, seconds: float) -> None:
    label = tool_label(tool)
    if is_error:
        TOOL_CALLS.labels(label, payload.get("code", "INTERNAL_ERROR"), payload.get("errorCategory", "internal")).inc()
    else:
        TOOL_CALLS.labels(label, "ok", "none").inc()
    TOOL_SECONDS.labels(label).observe(seconds)


class BreakerStateCollector(Collector):
    """The breaker's shared state at scrape time (one series per state, 1 for the current one)."""

    def collect(self):
        from mcp_tools.resilience import breaker_state

        current = breaker_state()
        family = GaugeMetricFamily("lev_mcp_circuit_breaker_state", "1 for the breaker's current state.",
                                   labels=["state"])
        for state in BREAKER_STATES:
            family.add_metric([state], 1.0 if state == current else 0.0)
        yield family


register_live_collector(BreakerStateCollector())
