"""Request ids on every request and log line; JSON (never HTML) errors under /api/ and /mcp; django-csp's
policy headers built once for an endpoint that serves no pages."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable

from csp.constants import HEADER as CSP_HEADER
from csp.constants import HEADER_REPORT_ONLY as CSP_HEADER_REPORT_ONLY
from csp.utils import build_policy
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponsePermanentRedirect,
    JsonResponse,
    UnreadablePostError,
)
from django.middleware.common import CommonMiddleware as DjangoCommonMiddleware
from django.utils.http import escape_leading_slashes

from lev import endpoints
from lev.errors import (
    ApplicationError,
    AuthenticationFailed,
    Forbidden,
    InternalError,
    MethodNotAllowed,
    NotFound,
    RateLimited,
    UpstreamUnavailable,
    ValidationFailed,
    to_application_error,
    unexpected_error,
)
from lev.outages import OUTAGE_STATUSES, is_dependency_outage, report_outage
from lev.request_id import new_request_id, reset_request_id, set_request_id

logger = logging.getLogger(__name__)
access_logger = logging.getLogger("lev.access")

REQUEST_ID_HEADER = "X-Request-Id"
# A caller's id is accepted only when it looks like an id: it ends up in logs.
VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def request_id_for(incoming: str) -> str:
    """The id a request is served under: the caller's X-Request-Id when it looks like an id, else a new one."""
    return incoming if VALID_REQUEST_ID.match(incoming) else new_request_id()

# Headers of an error page that still mean something on its JSON replacement.
_KEPT_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate")


# The OAuth endpoints machines call (token, revocation, registration, metadata) answer JSON like the
# API; the authorization and connected-apps pages are pages for a person.
_JSON_OAUTH_PATHS = ("/oauth/token/", "/oauth/revoke/", "/oauth/register/", "/.well-known/")


_SLASHES = re.compile(r"/{2,}")


def _is_api_path(path: str) -> bool:
    """Paths that answer JSON: the API, the MCP endpoint and the OAuth endpoints machines call, also
    as a client may mistype them (`/MCP`, `//mcp`, `/API/v1/…`, `/api`): a client of the API gets
    the API's 404, never the site's HTML page."""
    path = _SLASHES.sub("/", path).lower()
    return path == "/api" or path.startswith(("/api/", *_JSON_OAUTH_PATHS)) or endpoints.answers_json(path)


def is_json(response: HttpResponse) -> bool:
    return response.get("Content-Type", "").split(";")[0].strip().lower() == "application/json"


def error_response(error: ApplicationError) -> JsonResponse:
    response = JsonResponse(error.as_body(), status=error.http_status)
    for key, value in error.headers().items():
        response[key] = value
    return response


def _error_for_status(status: int) -> ApplicationError:
    """The error body for a page whose exception we never saw (Django answered it: a failure in
    some middleware, DEBUG's technical pages). The status is kept; the message says no more than
    the status does, so no internals travel."""
    known: dict[int, Callable[[], ApplicationError]] = {
        401: AuthenticationFailed,
        403: Forbidden,
        404: NotFound,
        405: MethodNotAllowed,
        406: lambda: ValidationFailed({"Accept": ["must allow application/json"]}),
        413: lambda: ValidationFailed({"body": ["is too large"]}),
        415: lambda: ValidationFailed({"Content-Type": ["must be application/json"]}),
        429: RateLimited,
        **dict.fromkeys(OUTAGE_STATUSES, UpstreamUnavailable),
    }
    if status in known:
        error = known[status]()
    elif status < 500:
        error = ValidationFailed({"request": ["is malformed"]})
    else:
        error = InternalError()
    error.http_status = status
    return error


def _as_json_error(response: HttpResponse) -> HttpResponse:
    """An error page under /api/ or /mcp as the one JSON error body; JSON and successes pass."""
    if response.status_code < 400 or response.streaming or is_json(response):
        return response
    data = getattr(response, "data", None)  # a DRF Response rendered by a non-JSON renderer
    if isinstance(data, dict) and {"code", "message", "details"} <= set(data):
        replacement = JsonResponse(data, status=response.status_code,
                                   json_dumps_params={"separators": (",", ":")})
    else:
        replacement = error_response(_error_for_status(response.status_code))
    for header in _KEPT_HEADERS:
        if header in response:
            replacement[header] = response[header]
    return replacement


class RequestIdMiddleware:
    """Accepts the caller's X-Request-Id (or mints one), logs with it and echoes it back.

    Being the outermost middleware, it is also where /api/ and /mcp keep their JSON promise for
    failures outside any view: a `Host` not in ALLOWED_HOSTS is answered here before another
    middleware turns it into Django's HTML 400 page, and any other error page Django made (for an
    exception in a middleware, or a DEBUG technical page) is replaced by the JSON error body.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_for(request.headers.get(REQUEST_ID_HEADER, ""))
        request.request_id = request_id
        token = set_request_id(request_id)
        api = _is_api_path(request.path)
        try:
            response = self._host_refused(request) if api else None
            if response is None:
                response = self.get_response(request)
            if api:
                response = _as_json_error(response)
                access_logger.info("%s %s %s", request.method, request.path, response.status_code)
        finally:
            reset_request_id(token)
        response[REQUEST_ID_HEADER] = request_id
        return response

    @staticmethod
    def _host_refused(request: HttpRequest) -> HttpResponse | None:
        try:
            request.get_host()
        except DisallowedHost as exc:
            # Logged like Django logs it; the client is not told which host it sent or which we serve.
            logging.getLogger("django.security.DisallowedHost").warning(
                "Refused a request for a Host not in ALLOWED_HOSTS: %r", request.META.get("HTTP_HOST", "")
            )
            return error_response(to_application_error(exc) or ValidationFailed({"Host": ["is invalid"]}))
        return None


class PermanentRedirectKeepingMethod(HttpResponsePermanentRedirect):
    """308: the client repeats the same method with the same body at the new address (RFC 9110
    15.4.9), where a 301 lets it turn a POST into a GET without its body."""

    status_code = 308


class CommonMiddleware(DjangoCommonMiddleware):
    """Django's CommonMiddleware, except for a missing trailing slash under /api/ and /mcp.

    Django redirects `POST /api/v1/deals` with a 301 (which clients follow as a GET, so the write is
    silently lost) and, with DEBUG on (`make run`), raises RuntimeError: a 500 from a typo. Here an
    API path is redirected with a 308 for every method, which keeps the method and the body.
    """

    def get_full_path_with_slash(self, request: HttpRequest) -> str:
        if not _is_api_path(request.path):
            return super().get_full_path_with_slash(request)
        return escape_leading_slashes(request.get_full_path(force_append_slash=True))

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if response.status_code == 404 and _is_api_path(request.path) and self.should_redirect_with_slash(request):
            return PermanentRedirectKeepingMethod(self.get_full_path_with_slash(request))
        return super().process_response(request, response)


class ApiErrorMiddleware:
    """Under /api/ and /mcp, errors that escape DRF (404 routes, crashes) are the JSON error body."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            _is_api_path(request.path)
            and response.status_code == 404
            and not is_json(response)
        ):
            return error_response(NotFound())
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not _is_api_path(request.path):
            if isinstance(exception, UnreadablePostError):
                # A page's body the client framed badly (lev.wsgi): its fault, a 400, not a 500.
                return HttpResponseBadRequest("Bad request: the request body could not be read.\n",
                                              content_type="text/plain; charset=utf-8")
            if is_dependency_outage(exception):
                # A page (sign-in, consent, admin) during an outage: "try again shortly", not a 500.
                report_outage(exception, "page")
                error = UpstreamUnavailable()
                return HttpResponse(f"<!doctype html><title>Lev</title><p>{error.message}</p>", status=503,
                                    headers=error.headers())
            return None
        error = to_application_error(exception) or unexpected_error(exception, where="request")
        return error_response(error)


@functools.cache
def _fixed_policies() -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """(header, value, excluded path prefixes) of django-csp's policy and of its report-only one, as its
    middleware writes them on an answer with no nonce and no per-view change; one with no policy left out."""
    found = []
    for header, report_only, name in ((CSP_HEADER, False, "CONTENT_SECURITY_POLICY"),
                                      (CSP_HEADER_REPORT_ONLY, True, "CONTENT_SECURITY_POLICY_REPORT_ONLY")):
        value = build_policy(report_only=report_only)
        if value:
            found.append((header, value, tuple((getattr(settings, name, None) or {}).get("EXCLUDE_URL_PREFIXES")
                                               or ())))
    return tuple(found)


@receiver(setting_changed)
def _policies_changed(*, setting: str, **_kwargs) -> None:
    if setting.startswith("CONTENT_SECURITY_POLICY"):
        _fixed_policies.cache_clear()


class FixedContentSecurityPolicy:
    """django-csp's Content-Security-Policy headers for an endpoint that serves no pages (/mcp's JSON,
    mcp_tools.urls.ENDPOINT_REPLACEMENTS): there the policy has no nonce and no view changes it, so each
    header is one string, built once with django-csp's own build_policy (again when the settings change),
    where django-csp's middleware builds both on every answer. The same rules as it otherwise: a header
    already set is kept, a path under EXCLUDE_URL_PREFIXES gets none, and with DEBUG on a 404 or 500
    gets none (Django's debug pages)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if settings.DEBUG and response.status_code in (404, 500):
            return response
        for header, value, excluded in _fixed_policies():
            if header not in response and not request.path_info.startswith(excluded):
                response[header] = value
        return response
