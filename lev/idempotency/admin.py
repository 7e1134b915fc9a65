"""The admin of stored idempotent responses, scoped to the account like everything it replays."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import TextField
from django.db.models.functions import Cast, Length

from lev import formatting
from lev.accounts.admin_bases import (
    AccountScopedAdmin,
)
from lev.idempotency.models import IdempotencyRecord


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(AccountScopedAdmin):
    """Replay records of creates. The stored response body is never shown, to superusers neither
    (it is another person's API answer): its size and status only."""

    list_display = ["key", "user", "account", "request", "response", "created_at"]
    list_filter = ["account"]
    search_fields = ["key"]
    list_select_related = ["user", "account"]
    fields = ["key", "user", "account", "method", "path", "status_code", "response_size", "created_at"]
    readonly_fields = fields

    def get_queryset(self, request):
        # The body is not even read: only its size, computed by the database.
        return super().get_queryset(request).defer("response_body").annotate(
            response_bytes=Length(Cast("response_body", TextField())))

    @admin.display(description="Stored response", ordering="response_bytes")
    def response_size(self, record: IdempotencyRecord) -> str:
        size = getattr(record, "response_bytes", None)
        return formatting.EMPTY if size is None else f"{size:,} bytes"

    @admin.display(description="Request", ordering="path")
    def request(self, record: IdempotencyRecord) -> str:
        return f"{record.method} {record.path}"

    @admin.display(description="Stored response", ordering="status_code")
    def response(self, record: IdempotencyRecord) -> str:
        """The status and the size of the body (never the body itself)."""
        return f"{record.status_code or formatting.EMPTY} · {self.response_size(record)}"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
