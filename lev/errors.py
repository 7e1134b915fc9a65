"""Application errors: one class per failure, each with a code, an HTTP status and a message.

In app code, just raise. `api_exception_handler` turns any error (ours, DRF's, Django's) into the
API's one error body `{"code", "message", "details"}`; the MCP layer maps the same codes onto the
error contract (`mcp_tools.errors`).
"""

from __future__ import annotations

import logging
import math
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.core.exceptions import (
    BadRequest,
    DisallowedHost,
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import Http404, UnreadablePostError
from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response

from lev.outages import is_dependency_outage, report_outage

logger = logging.getLogger(__name__)

SESSION_EXPIRED_MESSAGE = "Unauthorized: your session has expired. Please sign in again."
UPSTREAM_MESSAGE = "Upstream service is temporarily unavailable. Please retry in a few seconds."


class ErrorCode(StrEnum):
    """Every error code the API and the MCP layer answer with: the one place each code is spelled.

    A member is a `str` equal to its value, so it compares, hashes, formats and serializes (json,
    DRF's renderer, the MCP result) exactly as the plain string did. The MCP contract
    (`mcp_tools.errors`) has every member but METHOD_NOT_ALLOWED, which it maps by HTTP status.
    The order is the OpenAPI schema's (`lev.openapi`).
    """

    VALIDATION_ERROR = "VALIDATION_ERROR"
    NOT_FOUND = "NOT_FOUND"
    CONFLICT = "CONFLICT"
    BUSINESS_RULE = "BUSINESS_RULE"
    AUTH_ERROR = "AUTH_ERROR"
    FORBIDDEN = "FORBIDDEN"
    RATE_LIMITED = "RATE_LIMITED"
    UPSTREAM_UNAVAILABLE = "UPSTREAM_UNAVAILABLE"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"


class ApplicationError(Exception):
    code: ErrorCode = ErrorCode.INTERNAL_ERROR
    http_status = 500
    default_message = "Internal error: an unexpected error occurred."

    def __init__(self, message: str | None = None, *, details: dict[str, Any] | None = None):
        self.message = message or self.default_message
        self.details = details or {}
        super().__init__(self.message)

    def headers(self) -> dict[str, str]:
        return {}

    def as_body(self) -> dict[str, Any]:
        # The code's plain string: a body also goes through renderers that know no enums (YAML).
        return {"code": ErrorCode(self.code).value, "message": self.message, "details": self.details}


def validation_message(fields: dict[str, list[str]]) -> str:
    """`Validation failed: <first field> <its first error>`, the reference's wording, for the API
    and the MCP layer alike."""
    first_field, first_errors = next(iter(fields.items()))
    first = first_errors[0] if first_errors else "is invalid"
    subject = "" if first_field in ("non_field_errors", "__all__") else f"{first_field} "
    return f"Validation failed: {subject}{first}"


class ValidationFailed(ApplicationError):
    code = ErrorCode.VALIDATION_ERROR
    http_status = 400

    def __init__(self, fields: dict[str, list[str]], *, message: str | None = None):
        self.fields = fields
        super().__init__(message or validation_message(fields), details={"fields": fields})


class NotFound(ApplicationError):
    code = ErrorCode.NOT_FOUND
    http_status = 404

    def __init__(self, resource: str = "Resource", identifier: Any = None):
        text = f"{resource} not found" + (f": {identifier}" if identifier is not None else "")
        details = {"resource": resource.lower().replace(" ", "_")}
        if identifier is not None:
            details["id"] = str(identifier)
        super().__init__(text, details=details)


class DealNotFound(NotFound):
    def __init__(self, deal_id: Any):
        super().__init__("Deal", deal_id)


class LenderNotFound(NotFound):
    def __init__(self, lender_id: Any):
        super().__init__("Lender", lender_id)


class Conflict(ApplicationError):
    code = ErrorCode.CONFLICT
    http_status = 409

    def __init__(self, reason: str, *, details: dict[str, Any] | None = None):
        super().__init__(f"Conflict: {reason}", details=details)


class BusinessRuleViolation(ApplicationError):
    """Well-formed and authorised, but against a rule. `customer_message` is safe to relay."""

    code = ErrorCode.BUSINESS_RULE
    http_status = 409

    def __init__(self, reason: str, *, customer_message: str, details: dict[str, Any] | None = None):
        self.customer_message = customer_message
        super().__init__(
            f"Not allowed: {reason}",
            details={**(details or {}), "customer_message": customer_message},
        )


class AuthenticationFailed(ApplicationError):
    code = ErrorCode.AUTH_ERROR
    http_status = 401
    default_message = "Unauthorized: a valid API key is required."

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": 'Bearer realm="lev"'}


class SessionExpired(AuthenticationFailed):
    default_message = SESSION_EXPIRED_MESSAGE


class MethodNotAllowed(ApplicationError):
    code = ErrorCode.METHOD_NOT_ALLOWED
    http_status = 405
    default_message = "Method not allowed: this path does not accept this method."

    def __init__(self, message: str | None = None, *, allow: str | None = None):
        self.allow = allow
        super().__init__(message)

    def headers(self) -> dict[str, str]:
        return {"Allow": self.allow} if self.allow else {}


class Forbidden(ApplicationError):
    code = ErrorCode.FORBIDDEN
    http_status = 403
    default_message = "Forbidden: you do not have permission to do this."


class RateLimited(ApplicationError):
    code = ErrorCode.RATE_LIMITED
    http_status = 429

    def __init__(self, retry_after_seconds: float | None = None):
        self.retry_after_seconds = max(1, math.ceil(retry_after_seconds or 1))
        super().__init__(
            f"Rate limit exceeded: retry after {self.retry_after_seconds} s. "
            "Back off with jitter; do not retry immediately in a tight loop.",
            details={"retry_after_seconds": self.retry_after_seconds},
        )

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after_seconds)}


class UpstreamUnavailable(ApplicationError):
    """A dependency of the API (database, Redis) is down: transient, retried, counted by the breaker."""

    code = ErrorCode.UPSTREAM_UNAVAILABLE
    http_status = 503
    default_message = UPSTREAM_MESSAGE

    def headers(self) -> dict[str, str]:
        from django.conf import settings

        return {"Retry-After": str(settings.LEV_OUTAGE_RETRY_AFTER_SECONDS)}


class InternalError(ApplicationError):
    """A bug: clients see only the generic message (the traceback goes to the log)."""


def _flatten_drf_errors(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested ValidationError detail -> {"field" or "parent.0.field": ["message", ...]}."""
    fields: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            fields.update(_flatten_drf_errors(value, name))
    elif isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            fields[prefix or "non_field_errors"] = [str(item) for item in detail]
        else:
            for index, item in enumerate(detail):
                if item:
                    fields.update(_flatten_drf_errors(item, f"{prefix}.{index}" if prefix else str(index)))
    else:
        fields[prefix or "non_field_errors"] = [str(detail)]
    return fields


def to_application_error(exc: Exception) -> ApplicationError | None:
    """Translate DRF and Django exceptions into ours; None for unexpected exceptions."""
    if isinstance(exc, ApplicationError):
        return exc
    if isinstance(getattr(exc, "app_error", None), ApplicationError):
        return exc.app_error
    # Django's refusals of a request's shape (raised when a view first reads the query string or
    # body): the caller's input, so a 400/413 naming what to change, never a 500.
    if isinstance(exc, RequestDataTooBig):
        err = ValidationFailed({"body": [f"must be at most {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes"]})
        err.http_status = 413
        return err
    if isinstance(exc, UnreadablePostError):  # malformed or cut-off chunked framing (lev.wsgi)
        return ValidationFailed({"body": ["could not be read: its chunked framing is malformed or incomplete"]})
    if isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return ValidationFailed({"request": [f"may have at most {limit} query parameters or form fields"]})
    if isinstance(exc, DisallowedHost):
        return ValidationFailed({"Host": ["is not a host name this server answers to"]})
    if isinstance(exc, SuspiciousOperation | BadRequest):
        return ValidationFailed({"request": ["is malformed"]})
    if isinstance(exc, drf_exceptions.ValidationError):
        return ValidationFailed(_flatten_drf_errors(exc.detail) or {"non_field_errors": ["is invalid"]})
    if isinstance(exc, drf_exceptions.ParseError):
        return ValidationFailed({"body": [f"is not valid JSON ({exc.detail})"]},
                                message="Validation failed: the request body is not valid JSON")
    if isinstance(exc, drf_exceptions.NotAuthenticated):
        return AuthenticationFailed("Unauthorized: authentication credentials were not provided.")
    if isinstance(exc, drf_exceptions.AuthenticationFailed):
        return AuthenticationFailed(f"Unauthorized: {exc.detail}")
    if isinstance(exc, drf_exceptions.PermissionDenied | PermissionDenied):
        return Forbidden()
    if isinstance(exc, drf_exceptions.NotFound | Http404):
        return NotFound()
    if isinstance(exc, drf_exceptions.MethodNotAllowed):
        return MethodNotAllowed(f"Method not allowed: {exc.detail}")
    if isinstance(exc, drf_exceptions.NotAcceptable | drf_exceptions.UnsupportedMediaType):
        err = ValidationFailed({"content_type": [str(exc.detail)]},
                               message=f"Validation failed: {exc.detail}")
        err.http_status = exc.status_code
        return err
    if isinstance(exc, drf_exceptions.Throttled):
        return RateLimited(exc.wait)
    if isinstance(exc, drf_exceptions.APIException):
        err = ApplicationError(str(exc.detail))
        err.http_status = exc.status_code
        return err
    return None


def error_response(error: ApplicationError) -> Response:
    return Response(error.as_body(), status=error.http_status, headers=error.headers())


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF exception handler: every failure becomes `{"code", "message", "details"}`."""
    # Imported here: rest_framework.views imports the authentication classes, which import this.
    from rest_framework.views import set_rollback

    error = to_application_error(exc) or unexpected_error(exc, where="API view")
    set_rollback()
    response = error_response(error)
    # DRF puts the view's first authentication class's challenge on a refused credential: for a
    # bearer-protected resource it says where the resource's OAuth metadata is (RFC 9728).
    auth_header = getattr(exc, "auth_header", None)
    if error.http_status == 401 and auth_header:
        response["WWW-Authenticate"] = auth_header
    return response


def unexpected_error(exc: BaseException, *, where: str) -> ApplicationError:
    """An exception no handler knew: a dependency outage is a 503 (logged once per interval), anything
    else is a bug, a 500 logged with its traceback (and the request id, through the log format)."""
    if is_dependency_outage(exc):
        report_outage(exc, where)
        return UpstreamUnavailable()
    logger.error("Unhandled error in %s", where, exc_info=exc)
    return InternalError()
