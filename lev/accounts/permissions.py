"""The REST API's scope check (one per view) and its refusal."""

from __future__ import annotations

import logging
from typing import Any

from rest_framework.permissions import BasePermission

from lev.accounts.scopes import granted, missing_scope_message
from lev.errors import Forbidden
from lev.resource import bearer_challenge

logger = logging.getLogger(__name__)


class InsufficientScope(Forbidden):
    """A valid credential without the scope a request needs (403). Its `WWW-Authenticate` challenge
    (RFC 6750 `insufficient_scope`) lets an OAuth client ask the user for the scope (step-up)."""

    def __init__(self, scope: str, *, challenge: str | None = None):
        self.scope = scope
        self.challenge = challenge
        super().__init__(missing_scope_message(scope), details={"required_scope": scope})

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": self.challenge} if self.challenge else {}


def required_scope(view: Any, method: str) -> str | None:
    """The scope a view declares for an HTTP method (`required_scopes = {"GET": DEALS_READ, ...}`);
    HEAD and OPTIONS need what GET needs."""
    scopes = getattr(view, "required_scopes", None) or {}
    if method in ("HEAD", "OPTIONS"):
        method = "GET"
    return scopes.get(method)


class HasRequiredScope(BasePermission):
    """The REST API's scope check, one per view: each view names the scope of each of its methods in
    `required_scopes`. A view that names none refuses every bearer credential (fail closed;
    tests/oauth/test_scopes.py fails for such a route before it ships)."""

    def has_permission(self, request, view) -> bool:
        if not request.user or not request.user.is_authenticated:
            return True  # IsAuthenticated (listed first) answers for these
        if request.method.lower() not in view.http_method_names or (
                request.method not in ("HEAD", "OPTIONS") and not hasattr(view, request.method.lower())):
            return True  # the view answers 405 for a method it does not have
        scope = required_scope(view, request.method)
        if scope is None:
            logger.error("%s declares no scope for %s: refused", type(view).__name__, request.method)
            raise Forbidden("Forbidden: this endpoint is not available to API credentials.")
        have = granted(request.auth)
        if scope in have:
            return True
        raise InsufficientScope(scope, challenge=bearer_challenge(
            request, error="insufficient_scope", scopes=have | {scope},
            description=missing_scope_message(scope).removeprefix("Forbidden: ")))
