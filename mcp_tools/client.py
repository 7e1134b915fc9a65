"""LevClient: how MCP tools reach the REST API.

One client per tool call. Every request of the call carries the call's `X-Request-Id` and the
caller's credentials, so the API applies its own tenancy, validation, permissions and rate limits.
A tool names the API route and its ids (`mcp_tools.addresses`). Two transports speak the same HTTP
semantics:

* in-process (default): the route's view is called in this process with the ids as they are and the
  credential /mcp verified handed over (`direct_dispatch`);
* HTTP (`LEV_API_BASE_URL` set): the address written out, on a pooled `requests.Session` to a separate
  backend, with the caller's Authorization header.

Both go through the same retry (tenacity), idempotency-key and circuit-breaker code.
"""

from __future__ import annotations

import io
import json
import logging
import math
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import requests
from django.conf import settings
from django.core.handlers.wsgi import WSGIRequest
from django.urls import Resolver404
from django.urls.resolvers import ResolverMatch
from django.utils.log import log_response
from rest_framework.response import Response
from rest_framework.utils.encoders import JSONEncoder as DrfJSONEncoder
from simple_history.models import HistoricalRecords
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, stop_after_delay

from lev.accounts.auth import PREAUTHENTICATED_ENVIRON_KEY
from lev.errors import NotFound, to_application_error, unexpected_error
from lev.handlers import resolve
from lev.middleware import REQUEST_ID_HEADER, access_logger, error_response, is_json, request_id_for
from lev.outages import OUTAGE_STATUSES
from lev.request_id import new_request_id
from mcp_tools import addresses, resilience
from mcp_tools.addresses import Address
from mcp_tools.errors import ToolFailure, from_api_response, retry_after_ms_from, upstream_unavailable
from mcp_tools.metrics import BACKEND_RETRIES

logger = logging.getLogger(__name__)

API_PREFIX = "/api/v1"


@dataclass
class ApiResponse:
    status: int
    body: Any
    headers: Any


class Transport(ABC):
    @abstractmethod
    def send(self, method: str, path: Address | str, *, query: dict[str, Any] | None, body: Any,
             headers: dict[str, str]) -> ApiResponse:
        """One request to the API at `path` (an address, or a path as a client writes it); raises
        BackendUnavailable when no answer came."""


class InProcessTransport(Transport):
    """Dispatches to the site's own views with no socket: the same views, statuses and headers
    (direct_dispatch, below). An address's view is called with its ids as they are (mcp_tools.addresses);
    `authenticated`, the (user, credential) the calling endpoint verified, is handed to the view in place
    of the Authorization header (lev.accounts.auth.PreAuthenticated): the call is authenticated once."""

    def __init__(self, host: str = "localhost", scheme: str = "http", authenticated: tuple | None = None):
        self.host = host
        self.scheme = scheme
        self.authenticated = authenticated

    def send(self, method, path, *, query, body, headers) -> ApiResponse:
        payload = b"" if body is None else json.dumps(body).encode("utf-8")
        host, _, port = self.host.partition(":")
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": str(path),
            "SCRIPT_NAME": "",
            "QUERY_STRING": urlencode(query or {}, doseq=True),
            "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(payload)),
            "SERVER_NAME": host or "localhost",
            "SERVER_PORT": port or ("443" if self.scheme == "https" else "80"),
            "HTTP_HOST": self.host,
            "HTTP_ACCEPT": "application/json",
            "wsgi.input": io.BytesIO(payload),
            "wsgi.url_scheme": self.scheme,
            "wsgi.errors": io.StringIO(),
            "REMOTE_ADDR": "127.0.0.1",
        }
        for name, value in headers.items():
            if self.authenticated is not None and name.lower() == "authorization":
                continue  # handed over below instead
            environ["HTTP_" + name.upper().replace("-", "_")] = value
        if self.authenticated is not None:
            # Not an HTTP_* key, so no client can set it: only this process hands it over.
            environ[PREAUTHENTICATED_ENVIRON_KEY] = self.authenticated
        request = WSGIRequest(environ)
        if isinstance(path, Address):
            return direct_dispatch(request, addresses.match(path))
        try:
            return direct_dispatch(request, resolve(request.path_info))
        except Resolver404:
            return direct_dispatch(request, None)


def direct_dispatch(request: WSGIRequest, match: ResolverMatch | None) -> ApiResponse:
    """An in-process call: the API view `match` names (None: no route, the API's 404), called directly,
    and its answer's data taken as the view left it, not rendered to JSON and parsed back. Everything
    that decides the answer is still the view's own, in one place: DRF's dispatch takes the credential
    handed over, checks the scope, counts the rate limit, the view finds the account's records and
    validates the input, and the project's exception handler writes every refusal. What this leaves out
    is only the handler around it: the middleware chain (its three parts are done here: the request id,
    the JSON body of an error that escapes the view, the request django-simple-history records) and the
    renderer. tests/mcp_tools/test_inprocess_hop.py holds its answers (status, body, the headers a tool
    reads) to the full stack's, request for request."""
    request_id = request_id_for(request.META.get("HTTP_X_REQUEST_ID", ""))
    request.request_id = request_id
    context = HistoricalRecords.context
    outer = getattr(context, "request", None)
    context.request = request
    try:
        if match is None:
            response = error_response(NotFound())
        else:
            request.resolver_match = match
            try:
                response = match.func(request, *match.args, **match.kwargs)
            except Exception as exc:  # what escaped DRF's own handler: ApiErrorMiddleware's answer
                response = error_response(to_application_error(exc) or unexpected_error(exc, where="request"))
    finally:
        if outer is None:
            del context.request
        else:
            context.request = outer
    if response.status_code == 404 and not isinstance(response, Response) and not is_json(response):
        response = error_response(NotFound())
    if response.status_code >= 400:
        log_response("%s: %s", response.reason_phrase, request.path, response=response, request=request)
    access_logger.info("%s %s %s", request.method, request.path, response.status_code)
    response[REQUEST_ID_HEADER] = request_id
    if isinstance(response, Response) and not response.is_rendered:
        data = None if response.data is None else json_native(response.data)
        response["Content-Type"] = "application/json"  # what its renderer would have said (Accept asks for it)
    else:
        data = _parsed(response.content)
    return ApiResponse(response.status_code, data, response.headers)


def _parsed(content: bytes) -> Any:
    """A rendered answer's JSON; None for an empty or non-JSON body."""
    try:
        return json.loads(content) if content else None
    except ValueError:
        return None


_ENCODER = DrfJSONEncoder()


def json_native(value: Any) -> Any:
    """`value` as the API's JSON renderer writes it and json.loads reads it back (dicts, lists, str,
    int, float, bool, None), without writing and reading the text: DRF's encoder turns what JSON has no
    type for (Decimal, dates, UUIDs, lazy text, querysets) into what it does. A float JSON cannot hold
    (NaN, infinity), which the renderer refuses, is refused here too."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise ValueError("Out of range float values are not JSON compliant")
        return value
    if isinstance(value, dict):
        return {key if type(key) is str else _json_key(key): json_native(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_native(item) for item in value]
    if isinstance(value, str):  # ErrorDetail, SafeString: text
        return str(value)
    if isinstance(value, bool):  # subclasses of the JSON types (an IntEnum): written as their base type
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return json_native(float(value))
    return json_native(_ENCODER.default(value))


def _json_key(key: Any) -> str:
    # json.dumps writes a key that is not text as JSON writes the value (True -> "true", 1.5 -> "1.5").
    return json.loads(json.dumps({key: None}, cls=DrfJSONEncoder)).popitem()[0]


class HttpTransport(Transport):
    _local = threading.local()

    def __init__(self, base_url: str, timeout: float):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    @classmethod
    def session(cls) -> requests.Session:
        # One pooled session per thread (requests.Session is not thread-safe to share).
        session = getattr(cls._local, "session", None)
        if session is None:
            session = requests.Session()
            cls._local.session = session
        return session

    def send(self, method, path, *, query, body, headers) -> ApiResponse:
        try:
            response = self.session().request(
                method, self.base_url + str(path), params=query, json=body, headers=headers,
                timeout=self.timeout,
            )
        except requests.Timeout as exc:
            raise resilience.BackendUnavailable("timeout") from exc
        except requests.RequestException as exc:
            raise resilience.BackendUnavailable(f"connection error: {type(exc).__name__}") from exc
        try:
            data = response.json() if response.content else None
        except ValueError:
            data = None
        return ApiResponse(response.status_code, data, response.headers)


def default_transport(host: str = "localhost", scheme: str = "http", authenticated: tuple | None = None
                      ) -> Transport:
    """HTTP when LEV_API_BASE_URL is set, else in-process. `authenticated` = (user, api key) the
    MCP endpoint already verified, reused by the in-process API call."""
    if settings.LEV_API_BASE_URL:
        return HttpTransport(settings.LEV_API_BASE_URL, settings.LEV_API_TIMEOUT_SECONDS)
    return InProcessTransport(host=host, scheme=scheme, authenticated=authenticated)


class _RateLimited(Exception):
    def __init__(self, response: ApiResponse, retry_after_ms: int | None):
        super().__init__("rate limited")
        self.response = response
        self.retry_after_ms = retry_after_ms


class LevClient:
    """The backend as one tool call sees it. Raises ToolFailure for every failed request."""

    def __init__(self, *, authorization: str | None, transport: Transport | None = None,
                 request_id: str | None = None):
        self.authorization = authorization
        self.transport = transport or default_transport()
        self.request_id = request_id or new_request_id()
        self.attempts = 0

    # -- verbs -----------------------------------------------------------------------------
    def get(self, path: Address | str, query: dict[str, Any] | None = None) -> Any:
        return self.request("GET", path, query=query)

    def post(self, path: Address | str, body: Any = None, *, idempotency_key: str | None = None) -> Any:
        return self.request("POST", path, body=body, idempotency_key=idempotency_key)

    def patch(self, path: Address | str, body: Any) -> Any:
        return self.request("PATCH", path, body=body)

    def delete(self, path: Address | str) -> Any:
        # Not retried: a repeat after a lost answer would say "not found" about what it removed.
        return self.request("DELETE", path)

    # -- core ------------------------------------------------------------------------------
    def request(self, method: str, path: Address | str, *, query: dict[str, Any] | None = None, body: Any = None,
                idempotency_key: str | None = None) -> Any:
        headers = {"X-Request-Id": self.request_id, "Accept": "application/json"}
        if self.authorization:
            headers["Authorization"] = self.authorization
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        query = {k: v for k, v in (query or {}).items() if v is not None}
        # A tool names the route and its ids (mcp_tools.addresses); a path without ids is its own route.
        named = path if isinstance(path, Address) else Address(path)
        address = Address(API_PREFIX + named.template, named.ids)
        # Retrying is safe for reads, for PATCH (it sets values, so repeating it lands the same
        # state) and for creates that carry an Idempotency-Key (the API replays the first result).
        idempotent = method in ("GET", "HEAD", "PATCH") or bool(idempotency_key)

        def attempt() -> ApiResponse:
            self.attempts += 1
            response = self.transport.send(method, address, query=query, body=body, headers=headers)
            # Only an outage (502/503/504) is retried and counted by the breaker. Any other 5xx is a
            # bug: the same request would fail again, so it goes back to the caller as an answer.
            if response.status in OUTAGE_STATUSES:
                raise resilience.BackendUnavailable(
                    f"status {response.status}", retry_after_ms_from(response.headers), status=response.status
                )
            if response.status == 429:
                raise _RateLimited(response, retry_after_ms_from(response.headers))
            return response

        def retryable(exc: BaseException) -> bool:
            if not idempotent:
                return False
            if isinstance(exc, _RateLimited):
                limit = settings.LEV_RETRY_MAX_RETRY_AFTER_MS
                return exc.retry_after_ms is not None and exc.retry_after_ms <= limit
            return isinstance(exc, resilience.BackendUnavailable)

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            if isinstance(exc, _RateLimited) and exc.retry_after_ms is not None:
                return exc.retry_after_ms / 1000
            return resilience.backoff_ms(state.attempt_number) / 1000

        started = time.monotonic()

        def with_retries() -> ApiResponse:
            # The first attempt runs on its own: nearly every call succeeds there, and tenacity's
            # machinery (a Retrying and its per-call state) is built only when needed. Only a
            # retryable failure starts tenacity, which replays that failure as its attempt 1 (no second
            # request): the same waits, attempt count and budget, measured from the first attempt's start.
            try:
                return attempt()
            except Exception as exc:
                if not retryable(exc):
                    raise
                first_failure = exc
            replayed = False

            def attempt_or_replay() -> ApiResponse:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    raise first_failure
                return attempt()

            spent_s = time.monotonic() - started
            retrying = Retrying(
                stop=(stop_after_attempt(settings.LEV_RETRY_TOTAL + 1)
                      | stop_after_delay(max(settings.LEV_RETRY_BUDGET_MS / 1000 - spent_s, 0))),
                wait=wait,
                retry=retry_if_exception(retryable),
                reraise=True,
                sleep=time.sleep,
            )
            return retrying(attempt_or_replay)

        attempts_before = self.attempts
        try:
            # The breaker sees one outcome per request, after local retries.
            response = resilience.guarded(lambda: self._rate_limit_passthrough(with_retries))
        except resilience.BreakerOpen as exc:
            raise upstream_unavailable(exc.remaining_ms) from None
        except resilience.BackendUnavailable as exc:
            if self.attempts - attempts_before > 1:
                BACKEND_RETRIES.labels("exhausted").inc()
            logger.warning("Backend unavailable for %s %s after %d attempt(s) in %.0f ms: %s",
                           method, named, self.attempts, (time.monotonic() - started) * 1000, exc)
            raise upstream_unavailable(exc.retry_after_ms) from None
        if self.attempts - attempts_before > 1:
            BACKEND_RETRIES.labels("recovered").inc()
        if response.status >= 500:
            logger.error("Backend answered %s to %s %s: a bug in the API, not an outage (see its log for "
                         "request id %s)", response.status, method, named, self.request_id)
        if response.status >= 400:
            raise from_api_response(response.status, response.body, response.headers)
        return response.body

    @staticmethod
    def _rate_limit_passthrough(call) -> ApiResponse:
        # A 429 that survives the retries is an answer, not an outage: hand it back as a response
        # so the breaker counts it as a success and the caller maps it to RATE_LIMITED.
        try:
            return call()
        except _RateLimited as exc:
            return exc.response


__all__ = ["ApiResponse", "HttpTransport", "InProcessTransport", "LevClient", "ToolFailure"]
