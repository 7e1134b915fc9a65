from django.apps import AppConfig


class DealsConfig(AppConfig):
    """An account's work: deals, their lender searches and ranking, placements and term sheets."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "deals"

    def ready(self) -> None:
        from deals import tasks  # noqa: F401  (registers the jobs the services send by name)
        from deals.searches import health

        health.register()
