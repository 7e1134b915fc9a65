"""A tool call's result: `ToolResult`, and the byte budget's last guard over it.

Every result is one text block holding the payload's JSON beside the payload as structuredContent;
`result()` writes it and holds it to `mcp_tools.budget` (an over-budget answer becomes an error, never a
cut one). `http_answer` is the HTTP response both protocol revisions send a JSON-RPC answer in.
"""

from __future__ import annotations

import logging
from typing import Any

from django.http import HttpResponse
from mcp.types import CallToolResult, TextContent

from lev.errors import ErrorCode
from mcp_tools import budget
from mcp_tools.errors import ToolFailure

logger = logging.getLogger(__name__)


class ToolResult:
    """A tool call's result: what the SDK's CallToolResult holds of it (Lev's results are one text block,
    the payload's JSON, beside the payload as structuredContent), built without pydantic's validation of
    each field and block, which the answer never needs. `text` is that JSON as `mcp_tools.budget` writes
    it; `content` is the block as the SDK's TextContent, and `as_sdk()` the whole CallToolResult, for the
    SDK's path (`mcp_tools.server.LevMCP.call_tool`)."""

    __slots__ = ("isError", "structuredContent", "text")

    def __init__(self, text: str, structured: dict[str, Any], is_error: bool):
        self.text, self.structuredContent, self.isError = text, structured, is_error

    @property
    def content(self) -> list[TextContent]:
        return [TextContent(type="text", text=self.text)]

    def as_sdk(self) -> CallToolResult:
        return CallToolResult(content=self.content, structuredContent=self.structuredContent, isError=self.isError)


def result(payload: dict[str, Any], *, is_error: bool, tool: str | None = None) -> ToolResult:
    """The result of a payload: its JSON as text content and the object as structuredContent.

    The final guard of the byte budget (`mcp_tools.budget`): tools fit their answers themselves, so an
    answer still over budget is a bug of the tool. It is never cut (cut JSON is no answer) and never
    sent whole: it becomes an INTERNAL_ERROR result naming the tool, logged as an error. An error
    payload over budget (thousands of bad arguments named) keeps its code and message and lists only
    the first named arguments."""
    text = budget.dumps(payload)
    size = budget.result_size(text, is_error=is_error)
    if size > budget.limit():
        payload = _shrunk_error(payload, size) if is_error else _oversize_error(tool, size)
        is_error = True
        text = budget.dumps(payload)
    return ToolResult(text, payload, is_error)


# What an over-budget error keeps: the first named arguments (names and messages shortened).
ERROR_FIELDS_KEPT = 20
# Characters kept of an over-budget error's message and hint (a message may name every bad argument).
ERROR_TEXT_KEPT = 1000
ERROR_NAME_KEPT = 200


def _oversize_error(tool: str | None, size: int) -> dict[str, Any]:
    logger.error("Tool %s answer of %d bytes is over the %d byte budget (LEV_MCP_MAX_RESPONSE_BYTES): "
                 "answered INTERNAL_ERROR", tool, size, budget.limit())
    return ToolFailure(
        ErrorCode.INTERNAL_ERROR,
        f"Internal error: the answer of {tool or 'this tool'} was too large to send.",
        hint="Ask for less (a smaller limit, fewer include items or narrower filters); the same call "
             "would fail again. Report the time of the call to Lev support.",
        details={"tool": tool},  # sizes and the budget stay in the log: no internals in answers
    ).as_dict()


def _shrunk_error(payload: dict[str, Any], size: int) -> dict[str, Any]:
    logger.warning("Error answer of %d bytes is over the %d byte budget: its details were shortened",
                   size, budget.limit())
    details = payload.get("details") if isinstance(payload.get("details"), dict) else {}
    fields = details.get("fields") if isinstance(details.get("fields"), dict) else {}
    kept = {str(name)[:ERROR_NAME_KEPT]: [str(m)[:ERROR_NAME_KEPT] for m in messages[:3]]
            if isinstance(messages, list) else messages
            for name, messages in list(fields.items())[:ERROR_FIELDS_KEPT]}
    shrunk = {key: (value[:ERROR_TEXT_KEPT] if isinstance(value, str) else value)
              for key, value in payload.items() if key != "details"}
    shrunk["details"] = {"fields": kept, "omitted_fields": len(fields) - len(kept), "truncated": True}
    return shrunk


def http_answer(body: str, challenge: str | None) -> HttpResponse:
    """A JSON-RPC answer's body as the HTTP response, 403 with the step-up challenge when there is one."""
    # The body as UTF-8 bytes, the encoding mcp_tools.budget counts (`dumps` escapes what UTF-8 cannot
    # carry), rather than text Django would encode in a charset it works out from the Content-Type.
    content = body.encode("utf-8")
    if challenge:
        # An OAuth client may ask the person for the missing scope and retry (the MCP specification's
        # step-up); one that does not still reads the FORBIDDEN tool result in the body.
        return HttpResponse(content, status=403, content_type="application/json",
                            headers={"WWW-Authenticate": challenge})
    return HttpResponse(content, content_type="application/json")
