"""What /health hears of the Celery workers: is one alive for the job queue (the waiting lender searches
are deals.searches.health's).

Workers announce themselves: the `WorkerHeartbeat` bootstep (added to every worker in
`LevConfig.ready`) writes the current time to Redis under one key per queue the worker
consumes, every LEV_WORKER_HEARTBEAT_SECONDS, from the worker's own event loop — so a worker that
is up but wedged stops announcing itself too. `worker_status()` reads the age of the key of the
queue this process sends jobs to. Written by hand because Celery's own liveness signals need a
broadcast round trip to every worker (`inspect ping`, seconds and a broker dependency per poll)
or worker events, which deployments switch off (`--without-heartbeat`).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import bootsteps
from django.conf import settings

from lev.outages import is_dependency_outage, report_outage
from lev.redis_gate import redis_for

logger = logging.getLogger(__name__)


class WorkerStatus:
    SEEN = "seen"  # a worker of the job queue announced itself within LEV_WORKER_STALE_SECONDS
    NOT_SEEN = "not_seen"  # a broker is configured but no worker of the queue announced itself
    UNREACHABLE = "unreachable"  # Redis (broker and heartbeat store) does not answer
    NOT_CONFIGURED = "not_configured"  # no broker: jobs run in-process (the embedded setup)
    UNKNOWN = "unknown"  # a broker other than Redis and no REDIS_URL: nowhere to read heartbeats


DOWN = (WorkerStatus.NOT_SEEN, WorkerStatus.UNREACHABLE)


def heartbeat_key(queue: str) -> str:
    return f"{settings.LEV_WORKER_HEARTBEAT_KEY_PREFIX}:{queue}"


def _heartbeat_store():
    """The Redis that keeps heartbeats (REDIS_URL), or None where there is none."""
    if not settings.REDIS_URL:
        return None
    # Bounded: a hung Redis costs /health (or a worker's event loop) at most the health timeout.
    return redis_for(settings.REDIS_URL, settings.LEV_HEALTH_TIMEOUT_SECONDS)


def record_heartbeat(queues: list[str]) -> None:
    """Write "alive now" for each queue; the keys expire once stale, so a dead worker's vanish."""
    store = _heartbeat_store()
    if store is None:
        return
    now = f"{time.time():.3f}"
    ttl = max(1, int(settings.LEV_WORKER_STALE_SECONDS))
    with store.pipeline(transaction=False) as pipe:
        for queue in queues:
            pipe.set(heartbeat_key(queue), now, ex=ttl)
        pipe.execute()


class WorkerHeartbeat(bootsteps.StartStopStep):
    """Worker bootstep: record a heartbeat at start and every LEV_WORKER_HEARTBEAT_SECONDS."""

    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker: Any, **kwargs: Any) -> None:
        self.tref = None
        super().__init__(worker, **kwargs)

    def start(self, worker: Any) -> None:
        queues = sorted(worker.app.amqp.queues.consume_from)
        self.beat(queues)
        self.tref = worker.timer.call_repeatedly(settings.LEV_WORKER_HEARTBEAT_SECONDS, self.beat, (queues,),
                                                 priority=10)

    def stop(self, worker: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None

    @staticmethod
    def beat(queues: list[str]) -> None:
        try:
            record_heartbeat(queues)
        except Exception:
            # Never take the worker down for its heartbeat: /health shows the worker as not seen.
            logger.warning("Could not record the worker heartbeat", exc_info=True)


def worker_status() -> str:
    """WorkerStatus of the queue this process sends ranking jobs to (read at call time, so a
    reconfigured Celery app is honoured). Bounded by LEV_HEALTH_TIMEOUT_SECONDS."""
    from lev.celery_app import app

    if app.conf.task_always_eager:
        return WorkerStatus.NOT_CONFIGURED
    store = _heartbeat_store()
    if store is None:
        return WorkerStatus.UNKNOWN
    try:
        value = store.get(heartbeat_key(app.conf.task_default_queue))
    except Exception as exc:
        if is_dependency_outage(exc):
            report_outage(exc, "reading worker heartbeats")  # once per interval, not per poll
        else:
            logger.warning("Could not read the worker heartbeat", exc_info=True)
        return WorkerStatus.UNREACHABLE
    if value is None:
        return WorkerStatus.NOT_SEEN
    age = time.time() - float(value)
    return WorkerStatus.SEEN if age <= settings.LEV_WORKER_STALE_SECONDS else WorkerStatus.NOT_SEEN
