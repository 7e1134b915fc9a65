"""Tenancy: accounts (firms), their members and their API keys. Tables keep the names they had when
these models lived in `deals` (deals_account, deals_membership, deals_apikey)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from lev.accounts import scopes
from lev.accounts.credential_cache import credential_cache


class Account(models.Model):
    """A tenant: a firm whose users share deals."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "deals_account"

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        MEMBER = "member", "Member"
        VIEWER = "viewer", "Viewer"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "deals_membership"
        constraints = [models.UniqueConstraint(fields=["account", "user"], name="uniq_membership")]

    def __str__(self) -> str:
        return f"{self.user} @ {self.account}"


class ApiKeyQuerySet(models.QuerySet):
    """Bulk changes of keys (`ApiKey.objects.filter(...).update(revoked_at=...)`) send no signal, so
    they empty this process's credential cache themselves (lev.accounts.credential_cache); the once-a-minute
    `last_used_at` touch of authentication changes nothing a check reads and keeps the cache."""

    def update(self, **kwargs):
        updated = super().update(**kwargs)
        if set(kwargs) != {"last_used_at"}:
            credential_cache.clear()
        return updated

    update.alters_data = True  # type: ignore[attr-defined]


class ApiKey(models.Model):
    """A bearer key `lev_sk_…` for the REST API and /mcp. Only its SHA-256 is stored."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, help_text="First characters of the key, to recognise it.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # What the key may do (lev.accounts.scopes), space-separated. Keys made before scopes existed got every scope.
    scopes = models.CharField(max_length=200, default=scopes.as_text(scopes.CHOOSABLE),
                              help_text="Space-separated scopes: " + ", ".join(scopes.CHOOSABLE) + ".")

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        db_table = "deals_apikey"
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def scope_set(self) -> frozenset[str]:
        return scopes.known(self.scopes)
