"""The contract's single source of truth: every application error class, raised inside the API,
checked as the REST body and as the MCP tool result it becomes (through the real in-process
transport, the API view and the DRF exception handler).

Domain refusals are classes too (`deals/errors.py`, `deals/placements/errors.py`, …), each a row:
class → code → status. A new error class anywhere in the project without a row fails
`test_every_error_class_is_in_the_table`; REFUSAL_BODIES pins each refusal's exact REST body.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
import pkgutil
from types import SimpleNamespace

import pytest
from django.test import RequestFactory

from deals.companies.errors import ContactNotAtLender, ContactNotPlaced
from deals.errors import ARCHIVED_CUSTOMER_MESSAGE, DealArchived
from deals.models import Contact, Deal
from deals.notes.services import ONE_TARGET
from deals.pipeline.errors import StageNameTaken, TooManyStages
from deals.placements import errors as placement_errors
from deals.placements.models import Placement, TermSheet
from deals.placements.services import QUOTED_AFTER_TODAY, RATE_TERMS_MESSAGE
from deals.searches.errors import ArchivedDealNotSearchable, DealNotReadyForSearch
from deals.searches.models import LenderSearch
from lenders.models import Lender
from lev import errors
from lev.accounts.errors import NotAMember
from lev.accounts.models import Account
from lev.accounts.permissions import InsufficientScope
from lev.idempotency.errors import IdempotencyKeyNotClaimed, IdempotencyKeyReused
from lev.limits import STAGES_PER_ACCOUNT_MAX, TERM_SHEETS_PER_DEAL_MAX
from mcp_tools.calls import run_tool
from mcp_tools.errors import from_application_error
from mcp_tools.registry import TOOLS
from mcp_tools.views import LengthRequired, PayloadTooLarge

pytestmark = pytest.mark.django_db

UPSTREAM = "Upstream service is temporarily unavailable. Please retry in a few seconds."

# Unsaved objects: a refusal reads only what it names (ids, statuses, a lender's name, a date).
DEAL = Deal(pk=5, archived=True)
SEARCH = LenderSearch(pk=3, deal_id=6, status="failed")
DRAFT = Placement(pk=7, deal_id=5, status="draft")
DECLINED = Placement(pk=8, deal_id=5, status="declined")
ARCHIVED = Placement(pk=9, deal_id=5, status="archived")
QUOTE = TermSheet(pk=4, deal_id=5, placement=DECLINED, expires_on=dt.date(2026, 1, 31))
LENDER_CONTACT = Contact(pk=9, lender_id=2)
COMPANY_CONTACT = Contact(pk=8, company_id=3)
WINNER = TermSheet(pk=11, deal_id=5, placement=Placement(pk=10, lender=Lender(name="Acme Capital")))
PLACEMENTS_ARCHIVED = ("This deal is archived, so it can no longer be sent to lenders or take quotes. Archived "
                       "deals cannot be restored: create a new deal to continue.")

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
    # Domain refusals (exact bodies in REFUSAL_BODIES below).
    (DealArchived(DEAL, "updated"), 409, "BUSINESS_RULE", "Not allowed: deal 5 is archived and cannot be updated",
     "BUSINESS_RULE", "business", False, "Not allowed: deal 5 is archived"),
    (ArchivedDealNotSearchable(DEAL), 409, "BUSINESS_RULE", "Not allowed: deal 5 is archived", "BUSINESS_RULE",
     "business", False, "Not allowed: deal 5 is archived"),
    (DealNotReadyForSearch(DEAL, ["a loan amount"]), 409, "BUSINESS_RULE", "Not allowed: deal 5 is not ready",
     "BUSINESS_RULE", "business", False, "Not allowed: deal 5 is not ready"),
    (placement_errors.ArchivedDealNotPlaceable(DEAL), 409, "BUSINESS_RULE", "Not allowed: deal 5 is archived",
     "BUSINESS_RULE", "business", False, "Not allowed: deal 5 is archived"),
    (placement_errors.SearchOfAnotherDeal(DEAL, SEARCH), 409, "BUSINESS_RULE", "Not allowed: lender search 3",
     "BUSINESS_RULE", "business", False, "Not allowed: lender search 3 ranked another deal"),
    # Companies and contacts (issue 22): another account's is a NotFound like a missing one; the
    # account's contact at the wrong lender (or at a company) is a rule of the records.
    (errors.NotFound("Company", 3), 404, "NOT_FOUND", "Company not found: 3", "NOT_FOUND", "validation", False,
     "Company not found: 3"),
    (errors.NotFound("Contact", 9), 404, "NOT_FOUND", "Contact not found: 9", "NOT_FOUND", "validation", False,
     "Contact not found: 9"),
    (ContactNotAtLender(LENDER_CONTACT, 4), 409, "BUSINESS_RULE", "Not allowed: contact 9 is at lender 2",
     "BUSINESS_RULE", "business", False, "Not allowed: contact 9 is at lender 2; the placement's lender is 4"),
    (ContactNotPlaced(COMPANY_CONTACT), 409, "BUSINESS_RULE", "Not allowed: contact 8 is at company 3",
     "BUSINESS_RULE", "business", False, "Not allowed: contact 8 is at company 3, not at a lender"),
    (placement_errors.SearchNotCompleted(DEAL, SEARCH, failed=True), 409, "BUSINESS_RULE",
     "Not allowed: lender search 3 is failed", "BUSINESS_RULE", "business", False, "Not allowed: lender search 3"),
    (placement_errors.SearchPurged(DEAL, SEARCH), 409, "BUSINESS_RULE", "Not allowed: lender search 3 was superseded",
     "BUSINESS_RULE", "business", False, "Not allowed: lender search 3"),
    (placement_errors.ConcurrentPlacement(DEAL), 409, "CONFLICT", "Conflict: another request placed this deal",
     "CONFLICT", "business", False, "Conflict: another request"),
    (placement_errors.TransitionRefused(DRAFT, "reviewing"), 409, "BUSINESS_RULE",
     "Not allowed: placement 7 cannot go from draft to reviewing", "BUSINESS_RULE", "business", False,
     "Not allowed: placement 7 cannot go from draft to reviewing"),
    (placement_errors.PlacementArchived(ARCHIVED), 409, "BUSINESS_RULE", "Not allowed: placement 9 is archived",
     "BUSINESS_RULE", "business", False, "Not allowed: placement 9 is archived"),
    (placement_errors.PlacementNotQuotable(DRAFT), 409, "BUSINESS_RULE",
     "Not allowed: placement 7 is draft", "BUSINESS_RULE", "business", False, "Not allowed: placement 7 is draft"),
    (placement_errors.TooManyQuotes(DEAL), 409, "BUSINESS_RULE", "Not allowed: deal 5 already has",
     "BUSINESS_RULE", "business", False, "Not allowed: deal 5 already has"),
    (placement_errors.WinningQuoteNotRemovable(WINNER), 409, "BUSINESS_RULE", "Not allowed: term sheet 11 is the "
     "winning quote", "BUSINESS_RULE", "business", False, "Not allowed: term sheet 11"),
    (placement_errors.SecondWinner(DEAL, WINNER), 409, "BUSINESS_RULE",
     "Not allowed: deal 5 already has a winning term sheet (11)", "BUSINESS_RULE", "business", False,
     "Not allowed: deal 5 already has a winning term sheet"),
    (placement_errors.WinnerNotQuoted(QUOTE, DECLINED), 409, "BUSINESS_RULE", "Not allowed: placement 8 of term "
     "sheet 4 is declined", "BUSINESS_RULE", "business", False, "Not allowed: placement 8"),
    (placement_errors.QuoteExpired(QUOTE), 409, "BUSINESS_RULE", "Not allowed: term sheet 4 expired on 2026-01-31",
     "BUSINESS_RULE", "business", False, "Not allowed: term sheet 4 expired"),
    (placement_errors.ConcurrentWinner(DEAL), 409, "CONFLICT", "Conflict: another winning term sheet", "CONFLICT",
     "business", False, "Conflict: another winning term sheet"),
    # The pipeline (deals/pipeline).
    (errors.NotFound("Stage", "'Signed' (the stages: Intake, Closing)"), 404, "NOT_FOUND",
     "Stage not found: 'Signed' (the stages: Intake, Closing)", "NOT_FOUND", "validation", False,
     "Stage not found: 'Signed'"),
    (DealArchived(DEAL, "moved"), 409, "BUSINESS_RULE", "Not allowed: deal 5 is archived and cannot be moved",
     "BUSINESS_RULE", "business", False, "Not allowed: deal 5 is archived"),
    (TooManyStages(3), 409, "BUSINESS_RULE", f"Not allowed: the pipeline already has {STAGES_PER_ACCOUNT_MAX} stages",
     "BUSINESS_RULE", "business", False, "Not allowed: the pipeline already has"),
    (StageNameTaken("Closing", 9), 409, "CONFLICT", "Conflict: the pipeline already has a stage named 'Closing'",
     "CONFLICT", "business", False, "Conflict: the pipeline already has a stage named 'Closing' (stage 9)"),
    # Notes, market rates, quotes dated by the broker (issue 22): refusals of the same classes, their words.
    (errors.NotFound("Note", 12), 404, "NOT_FOUND", "Note not found: 12", "NOT_FOUND", "validation", False,
     "Note not found: 12"),
    (errors.ValidationFailed({"non_field_errors": [ONE_TARGET]}, message=f"Validation failed: {ONE_TARGET}"), 400,
     "VALIDATION_ERROR", f"Validation failed: {ONE_TARGET}", "VALIDATION_ERROR", "validation", False,
     f"Validation failed: {ONE_TARGET}"),
    (errors.ValidationFailed({"quoted_on": ["is after today (2026-11-24)"]},
                             message=f"Validation failed: {QUOTED_AFTER_TODAY} (2026-11-24)"), 400, "VALIDATION_ERROR",
     f"Validation failed: {QUOTED_AFTER_TODAY} (2026-11-24)", "VALIDATION_ERROR", "validation", False,
     f"Validation failed: {QUOTED_AFTER_TODAY}"),
    (NotAMember(SimpleNamespace(pk=2), Account(pk=3)), 409, "BUSINESS_RULE", "Not allowed: user 2 is not a member",
     "BUSINESS_RULE", "business", False, "Not allowed: user 2 is not a member of account 3"),
    (IdempotencyKeyReused("k-1"), 409, "CONFLICT", "Conflict: this Idempotency-Key was already used", "CONFLICT",
     "business", False, "Conflict: this Idempotency-Key was already used with a different request"),
    (IdempotencyKeyNotClaimed("k-1"), 409, "CONFLICT", "Conflict: this Idempotency-Key could not be claimed",
     "CONFLICT", "business", False, "Conflict: this Idempotency-Key could not be claimed"),
    (errors.AuthenticationFailed(), 401, "AUTH_ERROR", "Unauthorized: a valid API key is required.", "AUTH_ERROR",
     "permission", False, "Unauthorized: a valid API key is required."),
    (errors.SessionExpired(), 401, "AUTH_ERROR", "Unauthorized: your session has expired. Please sign in again.",
     "AUTH_ERROR", "permission", False, "Unauthorized: your session has expired. Please sign in again."),
    (errors.Forbidden(), 403, "FORBIDDEN", "Forbidden: you do not have permission to do this.", "FORBIDDEN",
     "permission", False, "Forbidden: you do not have permission to do this."),
    (InsufficientScope("deals:write"), 403, "FORBIDDEN",
     "Forbidden: this needs the scope deals:write, which this credential was not granted", "FORBIDDEN", "permission",
     False, "Forbidden: this needs the scope deals:write"),
    (errors.MethodNotAllowed(allow="GET"), 405, "METHOD_NOT_ALLOWED",
     "Method not allowed: this path does not accept this method.", "VALIDATION_ERROR", "validation", False,
     "Method not allowed: "),
    # The /mcp endpoint's own refusals of a request's framing (before any tool runs).
    (PayloadTooLarge("Validation failed: the request body is over 10 bytes"), 413, "VALIDATION_ERROR",
     "Validation failed: the request body is over 10 bytes", "VALIDATION_ERROR", "validation", False,
     "Validation failed: the request body is over 10 bytes"),
    (LengthRequired(), 411, "VALIDATION_ERROR", "Validation failed: send the request body with a Content-Length",
     "VALIDATION_ERROR", "validation", False, "Validation failed: send the request body"),
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


PACKAGES = ("lev", "lenders", "deals", "mcp_tools")


def _project_error_classes() -> set[type]:
    """Every ApplicationError subclass the project defines, its `errors` modules imported first (a
    refusal class no service has imported yet is still found)."""
    for package in PACKAGES:
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
            if info.name.rsplit(".", 1)[-1] == "errors":
                importlib.import_module(info.name)

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    return {c for c in subclasses(errors.ApplicationError) if c.__module__.split(".")[0] in PACKAGES}


def test_every_error_class_is_in_the_table():
    covered = {type(row[0]) for row in TABLE}
    classes = _project_error_classes()
    assert {"deals.placements.errors", "deals.errors", "deals.companies.errors", "mcp_tools.views"} <= {
        c.__module__ for c in classes}
    assert classes <= covered, classes - covered


def _business(message: str, customer: str, **details) -> dict:
    return {"code": "BUSINESS_RULE", "message": f"Not allowed: {message}",
            "details": {**details, "customer_message": customer}}


def _conflict(message: str, **details) -> dict:
    return {"code": "CONFLICT", "message": f"Conflict: {message}", "details": details}


# Each domain refusal's REST body, written out: the text, customer message, details and their order
# as the services' free-text raises gave them before the refusals became classes.
REFUSAL_BODIES = [
    (DealArchived(DEAL, "changed"), _business("deal 5 is archived and cannot be changed", ARCHIVED_CUSTOMER_MESSAGE,
                                              deal_id=5)),
    (ArchivedDealNotSearchable(DEAL), _business(
        "deal 5 is archived", "This deal is archived, so lenders can no longer be searched for it.", deal_id=5)),
    (DealNotReadyForSearch(DEAL, ["a loan amount", "a property state", "an asset type"]), _business(
        "deal 5 is not ready for a lender search: it needs a loan amount, a property state and an asset type",
        "This deal can't be matched with lenders yet. Add a loan amount, a property state and an asset type, "
        "then search again.", deal_id=5, missing=["a loan amount", "a property state", "an asset type"])),
    (placement_errors.ArchivedDealNotPlaceable(DEAL), _business("deal 5 is archived", PLACEMENTS_ARCHIVED, deal_id=5)),
    (ContactNotAtLender(LENDER_CONTACT, 4), _business(
        "contact 9 is at lender 2; the placement's lender is 4",
        "That person is not one of your contacts at this lender. Choose a contact at this lender, or add one.",
        contact_id=9, lender_id=4)),
    (ContactNotPlaced(COMPANY_CONTACT), _business(
        "contact 8 is at company 3, not at a lender",
        "Each contact named must be one of your contacts at a lender this deal is being placed with.",
        contact_id=8)),
    (ContactNotPlaced(LENDER_CONTACT), _business(
        "contact 9 is at lender 2, which this call does not place",
        "Each contact named must be one of your contacts at a lender this deal is being placed with.",
        contact_id=9)),
    (placement_errors.SearchOfAnotherDeal(DEAL, SEARCH), _business(
        "lender search 3 ranked another deal, not deal 5",
        "That lender search was run for a different deal. Search lenders for this deal, then place it with the "
        "lenders found.", deal_id=5, search_id=3)),
    (placement_errors.SearchNotCompleted(DEAL, SEARCH, failed=True), _business(
        "lender search 3 is failed, not completed",
        "The lender search for this deal failed; start a new lender search, then place the deal with its lenders.",
        deal_id=5, search_id=3, search_status="failed")),
    (placement_errors.SearchNotCompleted(DEAL, LenderSearch(pk=3, status="running"), failed=False), _business(
        "lender search 3 is running, not completed",
        "The lender search for this deal still running; wait until it is completed, then place the deal with its "
        "lenders.", deal_id=5, search_id=3, search_status="running")),
    (placement_errors.SearchPurged(DEAL, SEARCH), _business(
        "lender search 3 was superseded and its ranked lenders were removed after retention",
        "That lender search was replaced by a newer search of this deal and its ranked list is no longer kept. "
        "Place the deal from its latest lender search.", deal_id=5, search_id=3)),
    (placement_errors.ConcurrentPlacement(DEAL), _conflict(
        "another request placed this deal with one of these lenders at the same time; list the deal's placements "
        "and try again", deal_id=5)),
    (placement_errors.TransitionRefused(DRAFT, "reviewing"), _business(
        "placement 7 cannot go from draft to reviewing; allowed next: sent, archived",
        "This placement is draft, so it can't be marked reviewing. From draft it can move to sent or archived.",
        placement_id=7, status="draft", requested_status="reviewing", allowed_next_statuses=["sent", "archived"])),
    (placement_errors.TransitionRefused(Placement(pk=7, status="no_response"), "won"),
     _business("placement 7 cannot go from no_response to won; allowed next: reviewing, declined, lost, archived",
               "This placement is no response, so it can't be marked won. A placement is won by choosing one of "
               "its term sheets as the winning quote.", placement_id=7, status="no_response",
               requested_status="won", allowed_next_statuses=["reviewing", "declined", "lost", "archived"])),
    (placement_errors.TransitionRefused(Placement(pk=7, status="sent"), "quoted"), _business(
        "placement 7 cannot go from sent to quoted; allowed next: reviewing, declined, no_response, archived",
        "This placement is sent, so it can't be marked quoted. A placement becomes quoted when the lender's quote "
        "is recorded as a term sheet.", placement_id=7, status="sent", requested_status="quoted",
        allowed_next_statuses=["reviewing", "declined", "no_response", "archived"])),
    (placement_errors.TransitionRefused(Placement(pk=7, status="declined"), "sent"), _business(
        "placement 7 cannot go from declined to sent; allowed next: archived",
        "This placement is declined, so it can't be marked sent. From declined it can move to archived.",
        placement_id=7, status="declined", requested_status="sent", allowed_next_statuses=["archived"])),
    (placement_errors.TransitionRefused(ARCHIVED, "sent"), _business(
        "placement 9 cannot go from archived to sent; allowed next: none",
        "This placement is archived, so it can't be marked sent. Its status is final (archived) and cannot "
        "change.", placement_id=9, status="archived", requested_status="sent", allowed_next_statuses=[])),
    (placement_errors.PlacementArchived(ARCHIVED), _business(
        "placement 9 is archived", "This placement is archived, so it can no longer be changed.",
        placement_id=9, status="archived")),
    (placement_errors.PlacementNotQuotable(DRAFT), _business(
        "placement 7 is draft; a term sheet needs a sent, reviewing or quoted placement",
        "A quote can only be recorded for a placement that went to the lender and is still open (sent, reviewing "
        "or quoted); this one is draft. Mark it sent first.", placement_id=7, status="draft",
        allowed_statuses=["sent", "reviewing", "quoted"])),
    (placement_errors.PlacementNotQuotable(DECLINED), _business(
        "placement 8 is declined; a term sheet needs a sent, reviewing or quoted placement",
        "A quote can only be recorded for a placement that went to the lender and is still open (sent, reviewing "
        "or quoted); this one is declined.", placement_id=8, status="declined",
        allowed_statuses=["sent", "reviewing", "quoted"])),
    (placement_errors.TooManyQuotes(DEAL), _business(
        f"deal 5 already has {TERM_SHEETS_PER_DEAL_MAX} term sheets",
        f"This deal already holds {TERM_SHEETS_PER_DEAL_MAX} quotes, the most one deal can compare. Remove quotes "
        "that no longer matter before adding more.", deal_id=5, limit=TERM_SHEETS_PER_DEAL_MAX)),
    (placement_errors.WinningQuoteNotRemovable(WINNER), _business(
        "term sheet 11 is the winning quote of deal 5", "This is the deal's winning quote, so it cannot be removed.",
        term_sheet_id=11, deal_id=5)),
    (placement_errors.SecondWinner(DEAL, WINNER), _business(
        "deal 5 already has a winning term sheet (11)",
        "A winning quote was already chosen for this deal (Acme Capital, term sheet 11). A deal has only one "
        "winner.", deal_id=5, winning_term_sheet_id=11)),
    (placement_errors.WinnerNotQuoted(QUOTE, DECLINED), _business(
        "placement 8 of term sheet 4 is declined, not quoted",
        "This quote's placement is declined, so the quote can't win. Only a quote on an open, quoted placement "
        "can be chosen.", term_sheet_id=4, placement_id=8, status="declined")),
    (placement_errors.QuoteExpired(QUOTE), _business(
        "term sheet 4 expired on 2026-01-31",
        "This quote expired on 2026-01-31. Ask the lender to extend or reissue it, record the new quote, then "
        "choose it.", term_sheet_id=4, expires_on="2026-01-31")),
    (placement_errors.ConcurrentWinner(DEAL), _conflict(
        "another winning term sheet was chosen for this deal at the same time", deal_id=5)),
    (TooManyStages(3), _business(
        f"the pipeline already has {STAGES_PER_ACCOUNT_MAX} stages",
        f"A pipeline holds at most {STAGES_PER_ACCOUNT_MAX} stages. Rename a stage you no longer use instead of "
        "adding one.", limit=STAGES_PER_ACCOUNT_MAX)),
    (StageNameTaken("Closing", 9), _conflict("the pipeline already has a stage named 'Closing' (stage 9)",
                                             name="Closing", stage_id=9)),
    (NotAMember(SimpleNamespace(pk=2), Account(pk=3)), _business(
        "user 2 is not a member of account 3", "API keys can only be issued for an account the user belongs to.")),
    (IdempotencyKeyReused("k-1"), _conflict("this Idempotency-Key was already used with a different request",
                                            idempotency_key="k-1")),
    (IdempotencyKeyNotClaimed("k-1"), _conflict("this Idempotency-Key could not be claimed; send the request again",
                                                idempotency_key="k-1")),
]


@pytest.mark.parametrize("error, body", REFUSAL_BODIES,
                         ids=[f"{type(e).__name__}{i}" for i, (e, _) in enumerate(REFUSAL_BODIES)])
def test_a_refusal_builds_its_whole_body(error, body):
    """Byte for byte, key order included: what the REST body and the MCP result are made of."""
    assert json.dumps(error.as_body()) == json.dumps(body)
    assert error.http_status == 409
    if isinstance(error, errors.BusinessRuleViolation):
        assert error.customer_message == body["details"]["customer_message"]


def test_every_refusal_class_has_a_body():
    refusals = {c for c in _project_error_classes() if c.__module__ != "lev.errors"
                and issubclass(c, errors.BusinessRuleViolation | errors.Conflict)}
    assert refusals <= {type(error) for error, _ in REFUSAL_BODIES}, refusals


# --- the caller's own account (GET /api/v1/account/, get_account) ---------------------------------
def test_the_account_read_refuses_in_the_contract_at_both_doors(api, api_key, user, account):
    """No error class of its own: without a credential it is the contract's 401, and a key whose user
    has left its account is refused at both doors exactly as every other read is."""
    from django.test import Client

    from lev.accounts.models import Membership

    anonymous = Client().get("/api/v1/account/")
    assert anonymous.status_code == 401 and set(anonymous.json()) == {"code", "message", "details"}
    assert anonymous.json()["code"] == "AUTH_ERROR" and anonymous["WWW-Authenticate"].startswith("Bearer")

    Membership.objects.filter(user=user, account=account).delete()
    rest, other_read = api.get("/api/v1/account/"), api.get("/api/v1/deals/")
    assert (rest.status_code, rest.json()) == (other_read.status_code, other_read.json()) == (
        403, {"code": "FORBIDDEN", "message": "Forbidden: your user is not a member of this account.", "details": {}})
    request = RequestFactory().post("/mcp", HTTP_AUTHORIZATION=f"Bearer {api_key}")
    result = run_tool(TOOLS["get_account"], {}, request)
    payload = json.loads(result.content[0].text)
    assert result.isError is True and payload == result.structuredContent
    assert payload == json.loads(run_tool(TOOLS["list_deals"], {"limit": 20}, request).content[0].text)
    assert (payload["code"], payload["errorCategory"], payload["isRetryable"]) == ("FORBIDDEN", "permission", False)
