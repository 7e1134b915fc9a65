from __future__ import annotations

from django.conf import settings
from django.db import models
from oauth2_provider.settings import oauth2_settings


class OAuthAuthorization(models.Model):
    """A person's consent for one OAuth client to act in one of their accounts: a "connected app".

    Created with the authorization code at consent; bound at the code's exchange to the refresh token
    family django-oauth-toolkit keeps across rotations, so every access token of the family resolves to
    (user, account, scopes). Revoking it revokes the whole family.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oauth_authorizations")
    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="oauth_authorizations")
    application = models.ForeignKey(oauth2_settings.APPLICATION_MODEL, on_delete=models.CASCADE, related_name="+")
    # Until the code is exchanged (an unexchanged code expires with its grant, and this row with it).
    grant = models.OneToOneField(oauth2_settings.GRANT_MODEL, null=True, blank=True, on_delete=models.CASCADE,
                                 related_name="+")
    # SHA-256 of the authorization code, kept after the exchange: a code presented again finds the grant
    # whose tokens it issued, and they are revoked (RFC 6749 §4.1.2).
    code_checksum = models.CharField(max_length=64, null=True, blank=True, unique=True, editable=False)
    # The refresh token family (RefreshToken.token_family) of the tokens issued for it.
    token_family = models.UUIDField(null=True, blank=True, unique=True, editable=False)
    scope = models.TextField(help_text="The scopes the person allowed, space-separated.")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "connected app"
        indexes = [models.Index(fields=["user", "revoked_at"])]

    def __str__(self) -> str:
        return f"{self.application} for {self.user} @ {self.account}"
