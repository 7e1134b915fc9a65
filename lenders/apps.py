from django.apps import AppConfig


class LendersConfig(AppConfig):
    """The lender directory: lenders, programs, asset types and activity signals as data."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "lenders"
