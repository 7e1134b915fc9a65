"""Celery app. Redis is the broker when REDIS_URL is set; otherwise tasks run eagerly in-process.

Worker logs use the web's format and carry the id of the request that queued the task, so one
`grep <request id>` follows an agent's call from /mcp through the API into the ranking job.
"""

from __future__ import annotations

import logging.config
import os
from contextvars import Token
from typing import Any

from celery import Celery, signals

from lev.request_id import get_request_id, reset_request_id, set_request_id

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lev.settings")

app = Celery("lev")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Message header carrying the request id from the process that queued a task to the worker.
REQUEST_ID_HEADER = "lev_request_id"
_task_tokens: dict[str, Token] = {}


@signals.setup_logging.connect
def _use_django_logging(**kwargs: Any) -> None:
    # Connecting to this signal stops Celery from installing its own root handler and format;
    # the worker logs through Django's LOGGING instead (same format, request-id filter, LOG_LEVEL).
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)


@signals.before_task_publish.connect
def _send_request_id(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    request_id = get_request_id()
    if headers is not None and request_id != "-":
        headers[REQUEST_ID_HEADER] = request_id


@signals.task_prerun.connect
def _take_request_id(task_id: str | None = None, task: Any = None, **kwargs: Any) -> None:
    request_id = getattr(task.request, REQUEST_ID_HEADER, None) if task is not None else None
    if not request_id:
        if task is None or task.request.is_eager:
            return  # run in-process: the caller's own request id is already in effect
        # Queued outside a request (celery beat, a shell): the task id ties its lines together.
        request_id = task_id
    if task_id and request_id:
        _task_tokens[task_id] = set_request_id(str(request_id))


@signals.task_postrun.connect
def _drop_request_id(task_id: str | None = None, **kwargs: Any) -> None:
    token = _task_tokens.pop(task_id, None) if task_id else None
    if token is not None:
        reset_request_id(token)
