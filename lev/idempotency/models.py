from __future__ import annotations

from django.conf import settings
from django.db import models

from lev.limits import IDEMPOTENCY_KEY_MAX


class IdempotencyRecord(models.Model):
    """The first response to a create carrying an Idempotency-Key, replayed for repeats (24 h).

    Scoped by account and user: one user's key sent for two accounts names two requests.
    """

    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=IDEMPOTENCY_KEY_MAX)
    method = models.CharField(max_length=8)
    path = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(null=True)
    response_body = models.JSONField(null=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "deals_idempotencyrecord"
        constraints = [
            models.UniqueConstraint(fields=["account", "user", "key"], name="uniq_idempotency_account_user_key"),
        ]
        indexes = [models.Index(fields=["created_at"])]

    def __str__(self) -> str:
        return f"{self.method} {self.path} ({self.key})"
