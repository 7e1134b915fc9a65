from django.apps import AppConfig


class DealsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "deals"

    def ready(self) -> None:
        from deals import schema  # noqa: F401  (registers the OpenAPI auth extension)
