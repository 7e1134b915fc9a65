"""What every /mcp answer must be, as checks that return what is wrong (an empty list when nothing).

The fuzz tests do not stop at the first bad answer: they collect every violation of a run (one
example input per distinct failure) and fail at the end with the whole list, so one run shows
everything that is broken, in a bounded time (no shrinking).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from lev.errors import UPSTREAM_MESSAGE
from mcp_tools.errors import CATEGORY, RETRYABLE

# The message prefixes of the reference (ARCHITECTURE.md, "The error contract").
MESSAGE_PREFIX = {
    "VALIDATION_ERROR": re.compile(r"^Validation failed: "),
    "NOT_FOUND": re.compile(r"^[A-Z][A-Za-z ]* not found(: |$)"),
    "CONFLICT": re.compile(r"^Conflict: "),
    "BUSINESS_RULE": re.compile(r"^Not allowed: "),
    "AUTH_ERROR": re.compile(r"^Unauthorized: "),
    "FORBIDDEN": re.compile(r"^Forbidden: "),
    "RATE_LIMITED": re.compile(r"^Rate limit exceeded: "),
    "UPSTREAM_UNAVAILABLE": re.compile("^" + re.escape(UPSTREAM_MESSAGE) + "$"),
    "INTERNAL_ERROR": re.compile(r"^Internal error: "),
}

# Internals that must never reach a client: tracebacks, SQL and driver errors, file paths, pydantic's
# own error text, Python object reprs. A pattern that also occurs in what was sent is not counted
# (an error may quote the caller's input back).
LEAKS = {
    "traceback": re.compile(r"Traceback \(most recent call last\)|File \"[^\"]+\", line \d+"),
    "sql": re.compile(r"\b(SELECT .+ FROM|INSERT INTO|UPDATE \S+ SET|DELETE FROM)\b|psycopg|sqlite3|"
                      r"violates .+ constraint|DETAIL: |\b(Integrity|Data|Operational|Programming)Error\b"),
    "path": re.compile(r"(^|[\s\"'(])/(?:work|usr|home|opt|tmp|var|srv|app)/\S*|site-packages|\w+\.py\b"),
    "pydantic": re.compile(r"input_value=|input_type=|errors\.pydantic\.dev|For further information visit"),
    "python": re.compile(r"<[\w.]+ object at 0x[0-9a-f]+>|\b\w+(Error|Exception)\(|RecursionError"),
}

# JSON-RPC's own codes, and MCP's "Resource not found" (-32002, specification 2025-11-25). Never the
# SDK's code 0 (what it answers for any exception a handler raises).
# MCP 2026-07-28 adds -32020 (HeaderMismatch) and -32022 (UnsupportedProtocolVersion).
JSONRPC_CODES = {-32700, -32600, -32601, -32602, -32603, -32002, -32020, -32022}
# The backend is healthy during a fuzz run and the rate limits are generous: any of these is a bug
# (a 500 inside the API shows up as one of them today).
NEVER_WHILE_HEALTHY = {"INTERNAL_ERROR", "UPSTREAM_UNAVAILABLE", "RATE_LIMITED"}


def leaks(text: str, sent: str) -> list[str]:
    return [name for name, pattern in LEAKS.items() if pattern.search(text) and not pattern.search(sent)]


def contract_violations(payload: Any) -> list[str]:
    """Problems with one tool error object (the JSON in an isError result)."""
    if not isinstance(payload, dict):
        return ["tool error is not a JSON object"]
    problems = [f"missing {key}" for key in ("errorCategory", "isRetryable", "code", "message") if key not in payload]
    if problems:
        return problems
    code = payload["code"]
    if code not in CATEGORY:
        return [f"unknown code {code!r}"]
    if payload["errorCategory"] != CATEGORY[code]:
        problems.append(f"errorCategory {payload['errorCategory']!r} for {code}")
    if payload["isRetryable"] is not (code in RETRYABLE):
        problems.append(f"isRetryable {payload['isRetryable']!r} for {code}")
    if code in RETRYABLE:
        value = payload.get("retryAfterMs")
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            problems.append(f"retryable {code} without a retryAfterMs")
    elif "retryAfterMs" in payload:
        problems.append(f"retryAfterMs on non-retryable {code}")
    if not isinstance(payload["message"], str) or not MESSAGE_PREFIX[code].search(payload["message"]):
        problems.append(f"{code} message {str(payload['message'])[:80]!r} lacks its prefix")
    return problems


@dataclass
class Outcome:
    """One /mcp exchange, as the fuzz tests judge it."""

    status: int
    body: Any = None  # parsed JSON, or None when the body is not JSON
    text: str = ""
    problems: list[str] = field(default_factory=list)
    tool_payload: dict[str, Any] | None = None  # the tool's JSON (result or error), when it ran
    is_error: bool = False
    rpc_error: dict[str, Any] | None = None

    @property
    def code(self) -> str | None:
        return self.tool_payload.get("code") if self.is_error and self.tool_payload else None


def judge(status: int, text: str, sent: str, *, well_formed: bool, request_id: Any = None) -> Outcome:
    """Check one HTTP answer from /mcp. `well_formed`: the request was a valid JSON-RPC request
    (then it must get HTTP 200); otherwise any 4xx with a JSON-RPC error body is acceptable."""
    outcome = Outcome(status=status, text=text)
    problems = outcome.problems
    if status == 202 and not text.strip() and not well_formed:
        return outcome  # a notification (no id) is accepted with no body, as the transport says
    try:
        outcome.body = json.loads(text)
    except ValueError:
        problems.append(f"HTTP {status} with a body that is not JSON: {text[:60]!r}")
        return outcome
    body = outcome.body
    for leak in leaks(text, sent):
        problems.append(f"response leaks {leak}")
    if status >= 500:
        code = body.get("code") if isinstance(body, dict) else None
        problems.append(f"HTTP {status} ({code or 'no code'})")
        return outcome
    if well_formed and status != 200:
        problems.append(f"HTTP {status} for a well-formed JSON-RPC request")
    if not isinstance(body, dict):
        problems.append("response is not a JSON object")
        return outcome
    if "error" in body:
        error = body["error"]
        outcome.rpc_error = error if isinstance(error, dict) else {}
        if body.get("jsonrpc") != "2.0":
            problems.append("error body is not JSON-RPC")
        elif not isinstance(error, dict) or error.get("code") not in JSONRPC_CODES:
            problems.append(f"JSON-RPC error code {error.get('code') if isinstance(error, dict) else error!r}")
        if request_id is not None and body.get("id") != request_id:
            problems.append(f"JSON-RPC error id {body.get('id')!r}, request id {request_id!r}")
        return outcome
    if "result" not in body:
        if body.get("jsonrpc") != "2.0":
            problems.append(f"HTTP {status} answered with a non-JSON-RPC body (code {body.get('code')})")
        return outcome
    result = body["result"]
    if request_id is not None and body.get("id") != request_id:
        problems.append(f"result id {body.get('id')!r}, request id {request_id!r}")
    if isinstance(result, dict) and "content" in result:
        _judge_tool_result(result, outcome, sent)
    return outcome


def _judge_tool_result(result: dict[str, Any], outcome: Outcome, sent: str) -> None:
    problems = outcome.problems
    try:
        text = result["content"][0]["text"]
        payload = json.loads(text)
    except (KeyError, IndexError, TypeError, ValueError):
        problems.append("tool result without JSON text content")
        return
    outcome.tool_payload = payload if isinstance(payload, dict) else {"_": payload}
    outcome.is_error = bool(result.get("isError"))
    if result.get("structuredContent") != payload:
        problems.append("structuredContent differs from the text content")
    if outcome.is_error:
        problems.extend(contract_violations(payload))
        code = payload.get("code") if isinstance(payload, dict) else None
        if code in NEVER_WHILE_HEALTHY:
            problems.append(f"{code} while the backend is healthy")
