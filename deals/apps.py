from django.apps import AppConfig


class DealsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "deals"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model

        from deals import schema  # noqa: F401  (registers the OpenAPI auth extension)
        from deals.models import Account, ApiKey, Membership
        from lev.credential_cache import invalidate_on

        # A changed key, user (deactivated), membership (removed, role changed) or account empties
        # this process's credential cache: the change applies to the next request at once.
        invalidate_on(ApiKey, get_user_model(), Membership, Account)
