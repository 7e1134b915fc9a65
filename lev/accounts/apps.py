from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Tenancy, the ground every feature stands on: accounts (firms), memberships, API keys, their
    authentication and scopes, and the account-scoped API view and admin bases."""

    name = "lev.accounts"
    label = "accounts"
    verbose_name = "Accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model

        from lev.accounts import schema  # noqa: F401  (registers the OpenAPI auth extension)
        from lev.accounts.credential_cache import invalidate_on
        from lev.accounts.models import Account, ApiKey, Membership

        # A changed key, user (deactivated), membership (removed, role changed) or account empties
        # this process's credential cache: the change applies to the next request at once.
        invalidate_on(ApiKey, get_user_model(), Membership, Account)
