"""Per-user rate limits: reads and writes counted apart, in the shared cache (Redis when set)."""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class _UserThrottle(SimpleRateThrottle):
    setting_name = ""
    applies_to_safe: bool = True

    def get_rate(self) -> str | None:
        # Read at request time (not import time) so settings overrides and env changes apply.
        return getattr(settings, self.setting_name, None) or None

    def allow_request(self, request, view) -> bool:
        if (request.method in SAFE_METHODS) != self.applies_to_safe:
            return True
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def get_cache_key(self, request, view) -> str | None:
        if not request.user or not request.user.is_authenticated:
            return None  # unauthenticated requests are refused before they cost anything
        return f"throttle_{self.scope}_{request.user.pk}"


class UserReadThrottle(_UserThrottle):
    scope = "user_read"
    setting_name = "LEV_RATE_LIMIT_READS"
    applies_to_safe = True


class UserWriteThrottle(_UserThrottle):
    scope = "user_write"
    setting_name = "LEV_RATE_LIMIT_WRITES"
    applies_to_safe = False
