"""A ranking job's time limits are the settings in force when it is queued, not the values they had
when deals.searches.tasks was imported: a changed LEV_SEARCH_SOFT_TIME_LIMIT / LEV_SEARCH_TIME_LIMIT
(here override_settings) reaches the job's message and a real worker enforces it."""

from __future__ import annotations

import time
import uuid

import pytest
from django.db import transaction
from django.test import override_settings

from deals.demo.directory import seed_directory
from deals.searches import services
from lev.celery_app import app as celery_app
from tests.deals.searches.factories import make_deal, refresh
from tests.deals.searches.test_robustness import backend_blocked_on_programs, finished_search, programs_locked
from tests.deals.searches.worker_process import celery_worker, require_worker_setup, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@override_settings(LEV_SEARCH_SOFT_TIME_LIMIT=7, LEV_SEARCH_TIME_LIMIT=9)
def test_the_queued_job_carries_the_time_limits_of_the_settings_in_force(account):
    require_worker_setup()  # a real broker (Redis): the message is read back from its queue
    queue = f"lev-test-{uuid.uuid4().hex[:10]}"
    conf = celery_app.conf
    saved = conf.task_always_eager, conf.task_default_queue
    conf.task_always_eager, conf.task_default_queue = False, queue
    try:
        with transaction.atomic():
            services.enqueue_search(4242)  # sent when the transaction commits
        with celery_app.connection_for_read() as conn:
            inbox = conn.SimpleQueue(queue, no_ack=True)
            message = inbox.get(timeout=5)
            inbox.close()
    finally:
        conf.task_always_eager, conf.task_default_queue = saved
        with celery_app.connection_for_write() as conn:
            conn.default_channel.queue_delete(queue)
    assert message.headers["task"] == services.RUN_SEARCH_TASK
    assert list(message.headers["timelimit"]) == [9, 7]  # (hard, soft), as the worker reads them


@pytest.mark.slow
def test_a_worker_stops_a_job_at_the_soft_time_limit_set_when_it_was_queued(account):
    require_worker_setup()
    seed_directory(30, seed=3)
    deal = make_deal(account)
    # The worker's own settings are the defaults (60 s / 90 s) and its statements may wait a minute
    # for a lock: only the limits of this process's settings can stop the blocked run within seconds.
    with programs_locked(), celery_worker(env={"LEV_DB_STATEMENT_TIMEOUT_MS": "60000"}) as worker, \
            override_settings(LEV_SEARCH_SOFT_TIME_LIMIT=2, LEV_SEARCH_TIME_LIMIT=20):
        search, created = services.lender_search_start(deal=deal)
        assert created
        wait_for(backend_blocked_on_programs, "the run to block on its candidate query", worker)
        blocked_at = time.monotonic()
        done = wait_for(finished_search(search), "the soft time limit to stop the run", worker, 15)
        stopped_in = time.monotonic() - blocked_at
        log = worker.tail()
    assert done.status == "failed" and done.error_code == "UPSTREAM_UNAVAILABLE", log
    assert "took too long and was stopped" in done.error_message
    assert f"Lender search {search.pk} hit its time limit" in log
    assert stopped_in < 10, stopped_in
    assert refresh(search).attempts == 1
