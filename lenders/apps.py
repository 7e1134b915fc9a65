from django.apps import AppConfig


class LendersConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "lenders"

    def ready(self) -> None:
        # Every Celery worker of this project announces itself for /health (lenders.health).
        # Celery imports Django (and so runs this) before it builds the worker from its steps.
        from lenders.health import WorkerHeartbeat
        from lev.celery_app import app

        app.steps["worker"].add(WorkerHeartbeat)
