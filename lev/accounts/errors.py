"""Refusals of account administration, one class each (message, `customer_message`, details)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lev.errors import BusinessRuleViolation

if TYPE_CHECKING:
    from lev.accounts.models import Account


class NotAMember(BusinessRuleViolation):
    """An API key asked for a user in an account the user does not belong to."""

    def __init__(self, user: Any, account: Account):
        super().__init__(
            f"user {user.pk} is not a member of account {account.pk}",
            customer_message="API keys can only be issued for an account the user belongs to.",
        )
