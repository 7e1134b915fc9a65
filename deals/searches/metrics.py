"""Metrics of lender discovery: how long searches wait for a worker and how long a ranking runs.

Observed where the job runs: in a Celery worker, exposed by the worker's own metrics endpoint
(LEV_WORKER_METRICS_PORT, see lev.metrics.start_worker_metrics_server); in the embedded setup
(jobs in-process), by the site's /metrics.
"""

from __future__ import annotations

from prometheus_client import Histogram

SEARCH_QUEUE_WAIT = Histogram(
    "lev_lender_search_queue_wait_seconds", "From a lender search being queued to a worker starting it.",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300),
)
SEARCH_RUN = Histogram(
    "lev_lender_search_run_seconds", "Time of one ranking run, by how it ended.", ["outcome"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 90),
)
