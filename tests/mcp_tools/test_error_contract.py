"""The contract's single source of truth: every application error class, raised inside the API,
checked as the REST body and as the MCP tool result it becomes (through the real in-process
transport, the API view and the DRF exception handler)."""

from __future__ import annotations

import json

import pytest
from django.test import RequestFactory

from deals.placements.services import RATE_TERMS_MESSAGE
from lev import errors
from mcp_tools.errors import from_application_error
from mcp_tools.registry import TOOLS
from mcp_tools.server import run_tool

pytestmark = pytest.mark.django_db

UPSTREAM = "Upstream service is temporarily unavailable. Please retry in a few seconds."

# error raised in the API -> (HTTP status, REST code, REST message, MCP code, category, retryable, MCP message)
TABLE = [
    (errors.ValidationFailed({"loan_amount": ["must be greater than 0"]}), 400, "VALIDATION_ERROR",
     "Validation failed: loan_amount must be greater than 0", "VALIDATION_ERROR", "validation", False,
     "Validation failed: loan_amount must be greater than 0"),
    (errors.DealNotFound(101), 404, "NOT_FOUND", "Deal not found: 101", "NOT_FOUND", "validation", False,
     "Deal not found: 101"),
    (errors.NotFound("Property", 3), 404, "NOT_FOUND", "Property not found: 3", "NOT_FOUND", "validation", False,
     "Property not found: 3"),
    (errors.LenderNotFound(7), 404, "NOT_FOUND", "Lender not found: 7", "NOT_FOUND", "validation", False,
     "Lender not found: 7"),
    (errors.Conflict("this Idempotency-Key was already used with a different request"), 409, "CONFLICT",
     "Conflict: this Idempotency-Key was already used with a different request", "CONFLICT", "business", False,
     "Conflict: this Idempotency-Key was already used with a different request"),
    (errors.BusinessRuleViolation("deal 5 is archived", customer_message="This deal is archived."), 409,
     "BUSINESS_RULE", "Not allowed: deal 5 is archived", "BUSINESS_RULE", "business", False,
     "Not allowed: deal 5 is archived"),
    # Placements and term sheets (issue #13): the errors their services raise.
    (errors.NotFound("Placement", 12), 404, "NOT_FOUND", "Placement not found: 12", "NOT_FOUND", "validation", False,
     "Placement not found: 12"),
    (errors.NotFound("Term sheet", 4), 404, "NOT_FOUND", "Term sheet not found: 4", "NOT_FOUND", "validation", False,
     "Term sheet not found: 4"),
    (errors.NotFound("Lender program", 3), 404, "NOT_FOUND", "Lender program not found: 3", "NOT_FOUND", "validation",
     False, "Lender program not found: 3"),
    (errors.ValidationFailed({"fixed_rate": ["is required for a fixed rate_type"]}, message=RATE_TERMS_MESSAGE), 400,
     "VALIDATION_ERROR", RATE_TERMS_MESSAGE, "VALIDATION_ERROR", "validation", False, RATE_TERMS_MESSAGE),
    (errors.BusinessRuleViolation("placement 5 cannot go from draft to reviewing; allowed next: sent, archived",
                                  customer_message="This placement is draft, so it can't be marked reviewing."),
     409, "BUSINESS_RULE", "Not allowed: placement 5 cannot go from draft to reviewing", "BUSINESS_RULE", "business",
     False, "Not allowed: placement 5 cannot go from draft to reviewing"),
    (errors.Conflict("another winning term sheet was chosen for this deal at the same time"), 409, "CONFLICT",
     "Conflict: another winning term sheet", "CONFLICT", "business", False, "Conflict: another winning term sheet"),
    (errors.AuthenticationFailed(), 401, "AUTH_ERROR", "Unauthorized: a valid API key is required.", "AUTH_ERROR",
     "permission", False, "Unauthorized: a valid API key is required."),
    (errors.SessionExpired(), 401, "AUTH_ERROR", "Unauthorized: your session has expired. Please sign in again.",
     "AUTH_ERROR", "permission", False, "Unauthorized: your session has expired. Please sign in again."),
    (errors.Forbidden(), 403, "FORBIDDEN", "Forbidden: you do not have permission to do this.", "FORBIDDEN",
     "permission", False, "Forbidden: you do not have permission to do this."),
    (errors.MethodNotAllowed(allow="GET"), 405, "METHOD_NOT_ALLOWED",
     "Method not allowed: this path does not accept this method.", "VALIDATION_ERROR", "validation", False,
     "Method not allowed: "),
    (errors.RateLimited(5), 429, "RATE_LIMITED", "Rate limit exceeded: retry after 5 s.", "RATE_LIMITED",
     "transient", True, "Rate limit exceeded: retry after 5 s."),
    (errors.UpstreamUnavailable(), 503, "UPSTREAM_UNAVAILABLE", UPSTREAM, "UPSTREAM_UNAVAILABLE", "transient", True,
     UPSTREAM),
    # A 500 is a bug: the same call would fail again, so it is not retryable (and never counted
    # by the breaker, see test_failure_semantics.py).
    (errors.InternalError(), 500, "INTERNAL_ERROR", "Internal error: an unexpected error occurred.",
     "INTERNAL_ERROR", "internal", False, "Internal error: "),
    (RuntimeError("secret_table leaked"), 500, "INTERNAL_ERROR", "Internal error: an unexpected error occurred.",
     "INTERNAL_ERROR", "internal", False, "Internal error: "),
]


@pytest.mark.parametrize("row", TABLE, ids=[type(row[0]).__name__ + str(i) for i, row in enumerate(TABLE)])
def test_error_class_to_rest_body_and_tool_result(row, api, api_key, monkeypatch):
    error, status, rest_code, rest_message, mcp_code, category, retryable, mcp_message = row

    def fail(**kwargs):
        raise error

    monkeypatch.setattr("deals.selectors.deal_list", fail)

    # REST
    response = api.get("/api/v1/deals/")
    assert response.status_code == status
    body = response.json()
    assert set(body) == {"code", "message", "details"}
    assert body["code"] == rest_code
    assert body["message"].startswith(rest_message)
    if status == 401:
        assert response["WWW-Authenticate"].startswith("Bearer")
    if status == 429:
        assert response["Retry-After"] == "5"
    if status == 503:
        assert int(response["Retry-After"]) > 0
    assert "secret_table" not in response.content.decode()

    # MCP: the same failure, reached by a real tool call through the in-process transport
    request = RequestFactory().post("/mcp", HTTP_AUTHORIZATION=f"Bearer {api_key}")
    result = run_tool(TOOLS["list_deals"], {"limit": 20}, request)
    assert result.isError is True
    payload = json.loads(result.content[0].text)
    assert payload == result.structuredContent
    assert payload["code"] == mcp_code
    assert payload["errorCategory"] == category
    assert payload["isRetryable"] is retryable
    assert payload["message"].startswith(mcp_message)
    assert payload["hint"]
    if retryable:
        assert payload["retryAfterMs"] > 0
    else:
        assert "retryAfterMs" not in payload
    if isinstance(error, errors.BusinessRuleViolation):
        assert payload["customerMessage"] == error.customer_message
    if isinstance(error, errors.RateLimited):
        assert payload["retryAfterMs"] == 5000

    assert "secret_table" not in result.content[0].text

    # The pure mapping agrees with the end-to-end one.
    if isinstance(error, errors.ApplicationError):
        assert from_application_error(error).as_dict()["code"] == mcp_code


def test_every_error_class_is_in_the_table():
    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    covered = {type(row[0]) for row in TABLE}
    classes = {c for c in subclasses(errors.ApplicationError) if c.__module__ == "lev.errors"}
    assert classes <= covered, classes - covered
