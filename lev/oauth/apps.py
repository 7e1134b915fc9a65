from django.apps import AppConfig


class OAuthConfig(AppConfig):
    """The site as its own OAuth 2.1 authorization server for /mcp (django-oauth-toolkit underneath):
    consent for one account, connected apps, the bearer authentication of OAuth access tokens."""

    name = "lev.oauth"
    label = "oauth"
    verbose_name = "OAuth (connected apps)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model

        from lev.accounts.credential_cache import invalidate_on
        from lev.oauth import schema  # noqa: F401  (registers the OpenAPI auth extension)
        from lev.oauth.models import OAuthAuthorization

        # A revoked grant (disconnect, admin), a deleted access token (/oauth/revoke/, a revoked refresh
        # token family) or a removed client empties this process's credential cache at once.
        invalidate_on(OAuthAuthorization, get_access_token_model(), get_refresh_token_model(),
                      get_application_model())
