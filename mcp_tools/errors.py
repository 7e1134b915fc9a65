"""The MCP error contract: one JSON object for every tool failure (see ARCHITECTURE.md).

`ToolFailure` carries a contract object; tools raise it (or the backend client does) and the
server wrapper turns it into a `CallToolResult` with `isError: true`. Mapping from the REST API
goes by the body's `code` when present and by HTTP status otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from lev.errors import UPSTREAM_MESSAGE, ApplicationError, ErrorCode, validation_message
from lev.limits import LOAN_AMOUNT_MIN
from lev.outages import OUTAGE_STATUSES

CATEGORY = {
    ErrorCode.VALIDATION_ERROR: "validation",
    ErrorCode.NOT_FOUND: "validation",
    ErrorCode.CONFLICT: "business",
    ErrorCode.BUSINESS_RULE: "business",
    ErrorCode.AUTH_ERROR: "permission",
    ErrorCode.FORBIDDEN: "permission",
    ErrorCode.RATE_LIMITED: "transient",
    ErrorCode.UPSTREAM_UNAVAILABLE: "transient",
    ErrorCode.INTERNAL_ERROR: "internal",
}
RETRYABLE = {ErrorCode.RATE_LIMITED, ErrorCode.UPSTREAM_UNAVAILABLE}
DEFAULT_RETRY_AFTER_MS = {ErrorCode.RATE_LIMITED: 1000, ErrorCode.UPSTREAM_UNAVAILABLE: 2000}

HINTS = {
    ErrorCode.VALIDATION_ERROR: "Fix the named argument and call the tool again.",
    ErrorCode.NOT_FOUND: "Check the id (list_deals or search_lender_directory finds valid ids); do not retry "
                         "with the same id.",
    ErrorCode.CONFLICT: "Do not repeat the call unchanged; use a new idempotency key or read the current state.",
    ErrorCode.BUSINESS_RULE: "Relay customerMessage to the user; retrying will not help.",
    ErrorCode.AUTH_ERROR: "Ask the user to sign in again or provide a valid Lev API key.",
    ErrorCode.FORBIDDEN: "The user lacks access; ask them or an account owner.",
    ErrorCode.RATE_LIMITED: "Wait retryAfterMs, then retry with jitter; do not retry in a tight loop.",
    ErrorCode.UPSTREAM_UNAVAILABLE: "Wait retryAfterMs and retry; if every tool fails, Lev is down (see /health).",
    ErrorCode.INTERNAL_ERROR: "Report the time of the call to Lev support; retrying will not help.",
}

# NOT_FOUND by what was not found (the API's details.resource): the tool that lists valid ids of it.
# Every tool named here exists (tests/mcp_tools/test_hint_tools.py walks every hint that names one).
_NOT_AGAIN = "; do not retry with the same id."
NOT_FOUND_HINTS = {
    "deal": "Check the deal id (list_deals lists the account's deals)" + _NOT_AGAIN,
    "property": "Check the property id (list_deal_properties(deal_id) lists a deal's properties)" + _NOT_AGAIN,
    "lender": "Check the lender id (search_lender_directory finds lenders)" + _NOT_AGAIN,
    "lender_program": "Check the program id (list_lender_programs(lender_id) lists a lender's programs)" + _NOT_AGAIN,
    "lender_search": "Check the search id (list_lender_searches(deal_id) lists a deal's searches; "
                     "search_lenders_for_deal starts one)" + _NOT_AGAIN,
    "placement": "Check the placement id (list_placements(deal_id) lists a deal's placements)" + _NOT_AGAIN,
    "term_sheet": "Check the term sheet id (list_term_sheets(deal_id) lists a deal's quotes)" + _NOT_AGAIN,
    "company": "Check the company id (list_companies lists the account's companies)" + _NOT_AGAIN,
    "contact": "Check the contact id (list_contacts(company_id or lender_id) lists contacts)" + _NOT_AGAIN,
    "note": "Check the note id (list_notes(deal_id) lists a deal's notes)" + _NOT_AGAIN,
    "document": "Check the document id (list_deal_documents(deal_id) lists a deal's documents)" + _NOT_AGAIN,
    "stage": "Check the stage (get_pipeline lists the account's stages)" + _NOT_AGAIN,
}

STATUS_CODES = {
    400: ErrorCode.VALIDATION_ERROR, 422: ErrorCode.VALIDATION_ERROR, 401: ErrorCode.AUTH_ERROR,
    403: ErrorCode.FORBIDDEN, 404: ErrorCode.NOT_FOUND, 409: ErrorCode.CONFLICT, 429: ErrorCode.RATE_LIMITED,
}

FIELD_HINTS = {
    "loan_amount": f"Pass loan_amount as a JSON number of US dollars, at least {LOAN_AMOUNT_MIN}, e.g. 18500000 "
                   "for $18.5M.",
    "state": "Pass state as a 2-letter US state code, e.g. TX (or the state's full name, e.g. Texas).",
    "estimated_close_date": "Pass estimated_close_date as YYYY-MM-DD.",
    "cursor": "Pass back next_cursor from the previous page unchanged, or omit it for the first page.",
}


@dataclass
class ToolFailure(Exception):
    code: ErrorCode | str  # a code the contract does not have becomes INTERNAL_ERROR
    message: str
    hint: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    retry_after_ms: int | None = None
    customer_message: str | None = None

    def __post_init__(self) -> None:
        super().__init__(self.message)
        self.code = ErrorCode(self.code) if self.code in CATEGORY else ErrorCode.INTERNAL_ERROR

    def as_dict(self) -> dict[str, Any]:
        code = ErrorCode(self.code)
        body: dict[str, Any] = {
            "errorCategory": CATEGORY[code],
            "isRetryable": code in RETRYABLE,
            "code": code.value,  # the plain str, as in the API's body
            "message": self.message,
        }
        if code in RETRYABLE:
            body["retryAfterMs"] = int(self.retry_after_ms or DEFAULT_RETRY_AFTER_MS[code])
        if self.customer_message:
            body["customerMessage"] = self.customer_message
        hint = self.hint or _field_hint(self.details) or self._not_found_hint() or HINTS.get(code)
        if hint:
            body["hint"] = hint
        if self.details:
            body["details"] = self.details
        return body


    def _not_found_hint(self) -> str | None:
        if self.code != ErrorCode.NOT_FOUND:
            return None
        return NOT_FOUND_HINTS.get(str((self.details or {}).get("resource", "")))


def _field_hint(details: dict[str, Any]) -> str | None:
    for name in (details.get("fields") or {}):
        if name.split(".")[-1] in FIELD_HINTS:
            return FIELD_HINTS[name.split(".")[-1]]
    return None


def validation_failure(fields: dict[str, list[str]], message: str | None = None) -> ToolFailure:
    return ToolFailure(ErrorCode.VALIDATION_ERROR, message or validation_message(fields), details={"fields": fields})


def upstream_unavailable(retry_after_ms: int | None = None) -> ToolFailure:
    return ToolFailure(ErrorCode.UPSTREAM_UNAVAILABLE, UPSTREAM_MESSAGE, retry_after_ms=retry_after_ms)


def internal_error() -> ToolFailure:
    return ToolFailure(ErrorCode.INTERNAL_ERROR, "Internal error: the tool failed unexpectedly.")


def retry_after_ms_from(headers: dict[str, str] | Any) -> int | None:
    value = headers.get("Retry-After") if headers is not None else None
    if not value:
        return None
    try:
        return max(0, math.ceil(float(value) * 1000))
    except ValueError:
        return None


def from_api_response(status: int, body: Any, headers: Any = None) -> ToolFailure:
    """Map a failed REST response onto the contract: by `code` in the body, else by status."""
    body = body if isinstance(body, dict) else {}
    details = dict(body["details"]) if isinstance(body.get("details"), dict) else {}
    code = body.get("code")
    if status >= 500:
        # The status decides, whatever the body says (a proxy's 502 page has no code): 502/503/504
        # are outages the agent should retry; any other 5xx is a bug that a retry would repeat.
        # Neither shows the agent the backend's own text.
        if status in OUTAGE_STATUSES:
            return upstream_unavailable(retry_after_ms_from(headers))
        return internal_error()
    # The API's error body always carries `code` (its own codes include a few the contract has not,
    # e.g. METHOD_NOT_ALLOWED: mapped by status, its message kept). A body without one is not the
    # API's (a proxy's page, another server): the status decides, and none of its text reaches the
    # agent (it was not written for one and may hold internals).
    ours = isinstance(code, str) and bool(code)
    if not ours:
        details = {}
    if code not in CATEGORY:
        code = STATUS_CODES.get(status, ErrorCode.VALIDATION_ERROR)
    message = body.get("message") if ours and isinstance(body.get("message"), str) else None
    if not message:
        message = {
            ErrorCode.VALIDATION_ERROR: "Validation failed: the request was rejected",
            ErrorCode.NOT_FOUND: "Resource not found",
            ErrorCode.CONFLICT: "Conflict: the request conflicts with the current state",
            ErrorCode.AUTH_ERROR: "Unauthorized: your session has expired. Please sign in again.",
            ErrorCode.FORBIDDEN: "Forbidden: you do not have permission to do this.",
            ErrorCode.RATE_LIMITED: "Rate limit exceeded: back off with jitter; do not retry in a tight loop.",
        }.get(code, f"Request failed with status {status}")
    customer_message = details.pop("customer_message", None) if details else None
    return ToolFailure(
        code,
        message,
        details=details,
        customer_message=customer_message,
        retry_after_ms=retry_after_ms_from(headers) if code == ErrorCode.RATE_LIMITED else None,
    )


def from_application_error(error: ApplicationError) -> ToolFailure:
    """The same mapping, straight from an error class (used by the contract's table test)."""
    headers = error.headers()
    return from_api_response(error.http_status, error.as_body(), headers)
