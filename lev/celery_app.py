"""Celery app. Redis is the broker when REDIS_URL is set; otherwise tasks run eagerly in-process."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lev.settings")

app = Celery("lev")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
