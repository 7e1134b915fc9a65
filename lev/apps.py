from django.apps import AppConfig


class LevConfig(AppConfig):
    """The ground: what every process of the site needs before any feature app (no models)."""

    name = "lev"
    label = "lev"
    verbose_name = "Lev"

    def ready(self) -> None:
        # Every Celery worker of this project announces itself for /health (lev.worker_health).
        # Celery imports Django (and so runs this) before it builds the worker from its steps.
        from celery.signals import worker_init

        from lev.celery_app import app
        from lev.metrics import start_worker_metrics_server
        from lev.worker_health import WorkerHeartbeat

        app.steps["worker"].add(WorkerHeartbeat)
        # A worker serves its own /metrics (search queue wait and run time) when asked to.
        worker_init.connect(start_worker_metrics_server, weak=False)
