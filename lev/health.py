"""GET /health: cheap, unauthenticated, safe to poll; never trips or resets the breaker."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

import lev


@require_GET
@never_cache
def health(request: HttpRequest) -> JsonResponse:
    from mcp_tools.resilience import breaker_state, last_probe

    return JsonResponse(
        {
            "status": "ok",
            "version": lev.__version__,
            "lev_api": last_probe(),
            "circuit_breaker": breaker_state(),
        }
    )
