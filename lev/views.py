"""The site's landing page: where the admin, the API docs, /health and the MCP endpoint are."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "lev/home.html", {"mcp_url": request.build_absolute_uri(reverse("mcp"))})
