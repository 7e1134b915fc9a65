"""Tool registry, kept apart from the MCP transport library.

Tools are plain functions: typed arguments in, a JSON-able dict out, `ToolFailure` raised on
failure. They reach the backend through `lev()`, the LevClient of the current tool call. The
server module registers them with whatever MCP transport is in use.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.types import ToolAnnotations

from lev.errors import ErrorCode
from mcp_tools.client import LevClient
from mcp_tools.metrics import TOOL_CALLS, TOOL_SECONDS

_client: contextvars.ContextVar[LevClient] = contextvars.ContextVar("lev_client")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    fn: Callable[..., dict[str, Any]]
    annotations: ToolAnnotations
    # The scope (lev.accounts.scopes) a credential needs to see and call the tool; None is a tool no credential
    # may call (tests/oauth/test_scopes.py fails while any tool has none).
    scope: str | None = None


TOOLS: dict[str, ToolSpec] = {}


def tool(*, title: str, scope: str | None = None, read_only: bool = False, destructive: bool = False,
         idempotent: bool = False):
    """Register a tool. `scope` is the one scope (lev.accounts.scopes) it needs: a tool without one is hidden
    from every credential. Annotations are hints to clients, so set them truthfully."""

    def register(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        annotations = ToolAnnotations(
            title=title,
            readOnlyHint=read_only,
            destructiveHint=False if read_only else destructive,
            idempotentHint=True if read_only else idempotent,
            openWorldHint=False,
        )
        TOOLS[fn.__name__] = ToolSpec(fn.__name__, fn, annotations, scope)
        return fn

    return register


def lev() -> LevClient:
    """The backend client of the tool call being served."""
    return _client.get()


def bind_client(client: LevClient) -> contextvars.Token:
    return _client.set(client)


def unbind_client(token: contextvars.Token) -> None:
    _client.reset(token)


def tool_label(name: str) -> str:
    """Only registered tool names become labels: a caller's made-up names must not grow the series."""
    return name if name in TOOLS else "unknown"


def record_tool_call(tool: str, payload: dict, *, is_error: bool, seconds: float, outcome: str = "ok") -> None:
    """Count a call by tool, code and category: an error by its code, a success as `outcome` ("ok",
    or "input_required" for a 2026-07-28 call answered with a question to the person)."""
    label = tool_label(tool)
    if is_error:
        code, category = payload.get("code", ErrorCode.INTERNAL_ERROR), payload.get("errorCategory", "internal")
        _calls(label, str(code), str(category)).inc()
    else:
        _calls(label, outcome, "none").inc()
    _seconds(label).observe(seconds)


# The series of one set of labels, looked up once: prometheus_client's labels() checks and converts the
# values and takes the metric's lock on every call, twice a tool call. The labels are bounded:
# registered tool names (tool_label), the error codes and categories, the outcomes.
@functools.lru_cache(maxsize=4096)
def _calls(tool: str, code: str, category: str):
    return TOOL_CALLS.labels(tool, code, category)


@functools.lru_cache(maxsize=1024)
def _seconds(tool: str):
    return TOOL_SECONDS.labels(tool)
