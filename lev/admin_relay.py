"""A service called from an admin page: its result, or the sentence its refusal or a dependency outage
gives a person as a message — never a 500 for either (the deal page, the documents panel)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages

from lev.errors import UPSTREAM_MESSAGE, ApplicationError, BusinessRuleViolation
from lev.outages import is_dependency_outage, report_outage


def relay(description: str, call: Callable[[], Any]) -> tuple[tuple[int, str] | None, Any]:
    """(None, the service's result), or ((level, text), None): a business rule's customer message, an
    application error's message, or the outage sentence (the outage reported as `description`). Any
    other exception is a bug and goes on."""
    try:
        return None, call()
    except BusinessRuleViolation as exc:
        return (messages.ERROR, exc.customer_message), None
    except ApplicationError as exc:
        return (messages.ERROR, exc.message), None
    except Exception as exc:
        if not is_dependency_outage(exc):
            raise
        report_outage(exc, description)
        return (messages.ERROR, UPSTREAM_MESSAGE), None
