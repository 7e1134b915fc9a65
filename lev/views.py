"""The site's landing page: where the admin, the API docs, /health and the MCP endpoint are."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from lev.resource import default_resource


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    # The endpoint an agent connects to: the first one registered as a protected resource (lev.endpoints).
    return render(request, "lev/home.html", {"mcp_url": default_resource(request)})
