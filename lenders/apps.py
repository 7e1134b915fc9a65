from django.apps import AppConfig


class LendersConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "lenders"
