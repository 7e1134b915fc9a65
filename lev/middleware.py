"""Request ids on every request and log line; JSON (never HTML) errors under /api/ and /mcp."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

from lev.errors import ApplicationError, NotFound, to_application_error, unexpected_error
from lev.request_id import reset_request_id, set_request_id

logger = logging.getLogger(__name__)
access_logger = logging.getLogger("lev.access")

REQUEST_ID_HEADER = "X-Request-Id"
# A caller's id is accepted only when it looks like an id: it ends up in logs.
_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def _is_api_path(path: str) -> bool:
    return path.startswith("/api/") or path.startswith("/mcp")


class RequestIdMiddleware:
    """Accepts the caller's X-Request-Id (or mints one), logs with it and echoes it back."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get(REQUEST_ID_HEADER, "")
        request_id = incoming if _VALID_REQUEST_ID.match(incoming) else str(uuid.uuid4())
        request.request_id = request_id
        token = set_request_id(request_id)
        try:
            response = self.get_response(request)
            if _is_api_path(request.path):
                access_logger.info("%s %s %s", request.method, request.path, response.status_code)
        finally:
            reset_request_id(token)
        response[REQUEST_ID_HEADER] = request_id
        return response


class ApiErrorMiddleware:
    """Under /api/ and /mcp, errors that escape DRF (404 routes, crashes) are the JSON error body."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            _is_api_path(request.path)
            and response.status_code == 404
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            return self._json(NotFound())
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not _is_api_path(request.path):
            return None
        error = to_application_error(exception) or unexpected_error(exception, where="request")
        return self._json(error)

    @staticmethod
    def _json(error: ApplicationError) -> JsonResponse:
        response = JsonResponse(error.as_body(), status=error.http_status)
        for key, value in error.headers().items():
            response[key] = value
        return response


