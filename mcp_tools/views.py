"""The /mcp endpoint: Streamable HTTP, stateless, JSON responses, API-key protected.

Transport security rules of the MCP specification (2025-11-25, Streamable HTTP): an `Origin` that
is present and not allowed gets 403; `Host` is checked by ALLOWED_HOSTS; no or bad credential gets
401 with `WWW-Authenticate: Bearer`; tokens never come from the query string; bodies over the
size limit get 413. GET (the optional SSE stream) and DELETE (sessions) answer 405.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from mcp_server.views import MCPServerStreamableHttpView
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request

from deals.auth import ApiKeyAuthentication
from lev.errors import ApplicationError, Forbidden
from lev.parsers import JSONParser
from mcp_tools.server import get_server


class PayloadTooLarge(ApplicationError):
    code = "VALIDATION_ERROR"
    http_status = 413


class McpView(MCPServerStreamableHttpView):
    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [IsAuthenticated]
    renderer_classes = [JSONRenderer]
    parser_classes = [JSONParser]  # lev.parsers: a bad body (3,000 `[`) is a 400, never a crash
    throttle_classes: list = []  # the API behind the tools enforces the rate limits
    schema = None  # JSON-RPC over HTTP, not part of the REST API's OpenAPI description

    def initial(self, request: Request, *args, **kwargs) -> None:
        origin = request.headers.get("Origin")
        if origin and origin not in settings.LEV_MCP_ALLOWED_ORIGINS:
            raise Forbidden("Forbidden: this Origin may not call the MCP endpoint.")
        length = request.META.get("CONTENT_LENGTH") or "0"
        if length.isdigit() and int(length) > settings.LEV_MCP_MAX_BODY_BYTES:
            raise PayloadTooLarge(
                f"Validation failed: the request body is over {settings.LEV_MCP_MAX_BODY_BYTES} bytes"
            )
        super().initial(request, *args, **kwargs)

    @property
    def mcp_server(self):  # type: ignore[override]
        return get_server()

    def post(self, request: Request, *args, **kwargs) -> HttpResponse:
        return self.mcp_server.handle_fast(request) or super().post(request, *args, **kwargs)

    def get(self, request: Request, *args, **kwargs) -> HttpResponse:
        # Stateless server: no SSE stream to offer (the spec allows 405 here).
        return JsonResponse(
            {"code": "METHOD_NOT_ALLOWED", "message": "Method not allowed: use POST for MCP requests.",
             "details": {}},
            status=405, headers={"Allow": "POST"},
        )

    delete = get
