"""The /mcp endpoint: Streamable HTTP, stateless, JSON responses, an OAuth protected resource.

A request is checked in this order, so each failure gets the answer the MCP transport
(specification 2025-11-25, Streamable HTTP) gives it, before DRF's content negotiation can
answer anything else:

1. method: only POST; GET (the optional SSE stream), DELETE (sessions) and the rest get 405 with
   `Allow: POST`, whatever the Accept header says.
2. Origin: absent, the server's own origin, or listed in LEV_MCP_ALLOWED_ORIGINS; else 403.
3. body size: over LEV_MCP_MAX_BODY_BYTES is 413; a chunked body is read within that bound when
   the server hands it over de-chunked (gunicorn), else 411 (Django's runserver cannot).
4. credential: an OAuth access token (lev.oauth.authentication) or an API key (lev.accounts.auth), from the
   Authorization header only (never the query string); none or a bad one is 401 with
   `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` (RFC 9728: where the OAuth metadata is).
   `Host` is checked by ALLOWED_HOSTS before any of this.
5. Content-Type must be application/json (415) and Accept must list it (406).
6. the JSON-RPC message itself (`mcp_tools.jsonrpc`): parse errors, invalid requests, unknown
   methods, bad params and unsupported protocol versions get JSON-RPC error bodies. A request of
   MCP 2026-07-28 (stateless, `_meta` on every request; `mcp_tools.protocol_2026_07_28`) is answered entirely
   by `mcp_tools.protocol_2026_07_28.answer`; one of 2025-11-25 and before by
   `mcp_tools.protocol_2025_11_25.answer` or, for what that does not answer (initialize, resources,
   prompts), by django-mcp-server and the `mcp` 1.x SDK (`mcp_tools.adapters.sdk`). Steps 1-5 are the
   same for both eras.

Steps 1-5 answer in the API's one error body `{"code", "message", "details"}`; step 6 and every
later answer is JSON-RPC, a bug while answering too (-32603 with the request's id, HTTP 500).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from mcp import types
from mcp_server.views import MCPServerStreamableHttpView
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from lev.accounts.auth import ApiKeyAuthentication
from lev.errors import (
    ApplicationError,
    ErrorCode,
    Forbidden,
    MethodNotAllowed,
    ValidationFailed,
    to_application_error,
    unexpected_error,
)
from lev.oauth.authentication import OAuthTokenAuthentication
from lev.outages import is_dependency_outage, report_outage
from mcp_tools import jsonrpc, resilience, toolsets
from mcp_tools.adapters import sdk as adapters_sdk
from mcp_tools.server import get_server
from mcp_tools.toolsets import selection_of
from mcp_tools.unavailable import unavailable_response

_DEFAULT_PORTS = {"http": 80, "https": 443}


class PayloadTooLarge(ApplicationError):
    code = ErrorCode.VALIDATION_ERROR
    http_status = 413


class LengthRequired(ApplicationError):
    code = ErrorCode.VALIDATION_ERROR
    http_status = 411
    default_message = (
        "Validation failed: send the request body with a Content-Length header; "
        "this server cannot read a chunked body"
    )


def _media_error(status: int, message: str) -> ValidationFailed:
    error = ValidationFailed({"content_type": [message]}, message=f"Validation failed: {message}")
    error.http_status = status
    return error


def _origin_key(origin: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) with the default port filled in, or None if it is not an origin."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not scheme or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or _DEFAULT_PORTS.get(scheme)


def origin_allowed(request: Request, origin: str) -> bool:
    """The server's own origin (scheme://host[:port] of this request) or a configured one.

    A browser sends Origin on every POST, also for a page served by this site: that request is
    not cross-origin and must be served. DNS rebinding cannot pass this: the Host it sends is the
    attacker's name, which ALLOWED_HOSTS refuses before the view runs.
    """
    key = _origin_key(origin)
    if key is None:
        return False
    if key == _origin_key(f"{request.scheme}://{request.get_host()}"):
        return True
    return key in {_origin_key(allowed) for allowed in settings.LEV_MCP_ALLOWED_ORIGINS}


def read_body(request: HttpRequest) -> bytes:
    """The raw body of Django's request, at most LEV_MCP_MAX_BODY_BYTES (413 past it), chunked bodies
    included."""
    limit = settings.LEV_MCP_MAX_BODY_BYTES
    too_large = PayloadTooLarge(f"Validation failed: the request body is over {limit} bytes")
    meta = request.META
    length = (meta.get("CONTENT_LENGTH") or "").strip()
    if length:
        if length.isdigit() and int(length) > limit:
            raise too_large
        stream: Any = request  # Django's stream, bounded by Content-Length
    elif "chunked" in meta.get("HTTP_TRANSFER_ENCODING", "").lower():
        # Under gunicorn, lev.wsgi / lev.asgi hand this view a de-chunked body with its Content-Length
        # (the branch above). Elsewhere Django reads a body without Content-Length as empty: a server
        # that de-chunks the body and ends the stream at its end says so with `wsgi.input_terminated`;
        # Django's runserver does not, and reading its raw socket would block or misparse.
        if not meta.get("wsgi.input_terminated"):
            raise LengthRequired()
        stream = meta["wsgi.input"]
    else:
        return b""
    try:
        body = stream.read(limit + 1)
    except OSError as exc:
        # UnreadablePostError (lev.wsgi): the client's chunked framing is malformed or cut short.
        # Nothing was parsed, so this is the message's parse error, answered before authentication.
        raise jsonrpc.JsonRpcError(jsonrpc.types.PARSE_ERROR, "Parse error: the request body could not be "
                                   "read (malformed or incomplete chunked framing)", http_status=400) from exc
    if len(body) > limit:
        raise too_large
    return body


class McpView(MCPServerStreamableHttpView):
    authentication_classes = [OAuthTokenAuthentication, ApiKeyAuthentication]
    permission_classes = [IsAuthenticated]
    renderer_classes = [JSONRenderer]
    throttle_classes: list = []  # the API behind the tools enforces the rate limits
    schema = None  # JSON-RPC over HTTP, not part of the REST API's OpenAPI description
    # DRF writes `Allow` from the handler methods a view has; this endpoint serves POST only.
    http_method_names = ["post"]
    # DRF's dispatch as it is. django-mcp-server's view wraps dispatch in csrf_exempt with
    # method_decorator, which builds that wrapper (a partial and two functools.wraps) again on every
    # request, for nothing. The view is exempt all the same: DRF's
    # as_view() exempts every APIView, and /mcp's lean middleware has no CSRF check at all
    # (tests/mcp_tools/test_mcp_middleware.py, a session cookie and CSRF checks on).
    dispatch = APIView.dispatch

    def initialize_request(self, request: HttpRequest, *args, **kwargs) -> Request:
        # Django's own request, kept beside DRF's: its body stream is read here (read_body), and the
        # toolsets the request selected are set on it, where DRF's request and the SDK's path read them.
        self.http_request = request
        return super().initialize_request(request, *args, **kwargs)

    def initial(self, request: Request, *args, **kwargs) -> None:
        # Everything here runs before DRF's content negotiation (in super().initial), which
        # would otherwise answer 406 to `Accept: text/event-stream` before any of these checks.
        if request.method != "POST":
            raise MethodNotAllowed("Method not allowed: use POST for MCP requests (this server offers no SSE "
                                   "stream).", allow="POST")
        origin = request.headers.get("Origin")
        if origin is not None and not origin_allowed(request, origin):
            raise Forbidden(
                "Forbidden: this Origin may not call the MCP endpoint. To allow a browser-based "
                "client, add its origin to the LEV_MCP_ALLOWED_ORIGINS setting.",
                details={"origin": origin[:200], "setting": "LEV_MCP_ALLOWED_ORIGINS"},
            )
        self.raw_body = read_body(self.http_request)
        # The part of the catalogue this request asked for (URL and headers); a typo is a 400 here.
        self.http_request.mcp_selection = selection_of(request.headers, kwargs.get("toolsets"),
                                                      bool(kwargs.get("read_only")))
        super().initial(request, *args, **kwargs)
        # Same media types as the SDK transport requires, checked here so the answer is ours.
        content_type = request.headers.get("Content-Type", "")
        if content_type.split(";")[0].strip().lower() != "application/json":
            raise _media_error(415, "the Content-Type of an MCP request must be application/json")
        accept = [part.split(";")[0].strip().lower() for part in request.headers.get("Accept", "").split(",")]
        if "application/json" not in accept:
            raise _media_error(406, "the Accept header of an MCP request must list application/json "
                                    "(clients send 'application/json, text/event-stream')")

    def handle_exception(self, exc: Exception) -> HttpResponse:
        if isinstance(exc, jsonrpc.JsonRpcError):  # an unreadable body (read_body)
            return exc.response()
        # The database (or Redis) went down while this request was authenticated or served: answer
        # in JSON-RPC, counted by the breaker like any outage, instead of a REST 500/503 page.
        if is_dependency_outage(exc):
            report_outage(exc, "MCP endpoint")
            return unavailable_response(getattr(self, "raw_body", b""), resilience.record_outage(),
                                        self.request.headers.get("MCP-Protocol-Version"))
        message = getattr(self, "message", None)
        if to_application_error(exc) is None and isinstance(message, dict):
            # A bug while a JSON-RPC message was being answered: a JSON-RPC internal error with the
            # request's id (HTTP 500, as the SDK's transport answers one), logged with its traceback,
            # not the REST error body. Nothing about the exception is in the answer.
            unexpected_error(exc, where="MCP endpoint")
            request_id = message.get("id")
            return jsonrpc.JsonRpcError(
                types.INTERNAL_ERROR, "Internal error: an unexpected error occurred.",
                id=request_id if jsonrpc.is_id(request_id) else None, http_status=500,
            ).response()
        return super().handle_exception(exc)

    @property
    def mcp_server(self):  # type: ignore[override]
        return get_server()

    def post(self, request: Request, *args, **kwargs) -> HttpResponse:
        try:
            message = jsonrpc.parse(self.raw_body)
        except jsonrpc.JsonRpcError as error:
            return error.response()
        # DRF never parses this body (the parse above is the only one): the dispatchers read the message
        # as the request's `data`, as django-mcp-server does on the SDK's path.
        self.message = message
        sdk_request = adapters_sdk.sdk_request(request, message)
        # The SDK's own handler takes no URL arguments (the toolsets are read from the request above);
        # a tool reads them as toolsets.current() while this request is answered.
        token = toolsets.bind(self.http_request.mcp_selection)
        try:
            return self.mcp_server.handle_fast(sdk_request) or self.mcp_server.handle_django_request(sdk_request)
        finally:
            toolsets.unbind(token)
