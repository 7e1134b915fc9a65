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

        # A worker serves its own /metrics (search queue wait and run time) when asked to.
        from celery.signals import worker_init

        from lev.metrics import start_worker_metrics_server

        worker_init.connect(start_worker_metrics_server, weak=False)
