from django.apps import AppConfig


class OAuthConfig(AppConfig):
    """The site as its own OAuth 2.1 authorization server for /mcp (django-oauth-toolkit underneath):
    consent for one account, connected apps, the bearer authentication of OAuth access tokens."""

    name = "lev.oauth"
    label = "oauth"
    verbose_name = "OAuth (connected apps)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from lev.oauth import schema  # noqa: F401  (registers the OpenAPI auth extension)
