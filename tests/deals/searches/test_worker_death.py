"""A Celery worker SIGKILLed in the middle of a ranking run: another worker (running beat, so the
stale-search sweep on its schedule) picks the search up again within LEV_SEARCH_STALE_SECONDS plus
one sweep, and the result has every rank exactly once. The broker's settings fit that: no task
may outlive the visibility timeout, after which a lost message comes back (as a no-op)."""

from __future__ import annotations

import time

import pytest
from django.conf import settings

from deals.demo.directory import seed_directory
from deals.searches import services
from lev.celery_app import app as celery_app
from tests.deals.searches.factories import make_deal, refresh
from tests.deals.searches.test_robustness import assert_ranked_once, backend_blocked_on_programs, finished_search
from tests.deals.searches.test_robustness import programs_locked as programs_locked
from tests.deals.searches.worker_process import celery_worker, require_worker_setup, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_every_task_ends_before_the_broker_would_deliver_it_again():
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    limits = {name: task.time_limit or celery_app.conf.task_time_limit
              for name, task in celery_app.tasks.items() if name.startswith(("lenders.", "deals."))}
    assert limits and all(limit and limit < visibility for limit in limits.values()), limits
    # The ranking job's own limits travel in its message, from the settings when it is queued.
    assert settings.LEV_SEARCH_SOFT_TIME_LIMIT < settings.LEV_SEARCH_TIME_LIMIT < visibility
    # A search whose worker died is found stale well before its message would come back.
    assert settings.LEV_SEARCH_STALE_SECONDS + settings.LEV_SEARCH_SWEEP_SECONDS <= 30 < visibility


@pytest.mark.slow
def test_a_search_whose_worker_is_killed_mid_run_is_picked_up_again(account):
    require_worker_setup()
    seed_directory(120, seed=5)
    deal = make_deal(account)
    top_n = 10  # fewer than the directory's eligible lenders: the re-run must store exactly these
    env = {"LEV_SEARCH_STALE_SECONDS": str(settings.LEV_SEARCH_STALE_SECONDS),
           "LEV_SEARCH_SWEEP_SECONDS": str(settings.LEV_SEARCH_SWEEP_SECONDS), "LEV_RANKING_TOP_N": str(top_n)}
    with programs_locked() as holder, celery_worker(env=env) as doomed:
        search, created = services.lender_search_start(deal=deal)
        assert created
        wait_for(backend_blocked_on_programs, "the run to block on its candidate query", doomed)
        running = refresh(search)
        assert running.status == "running" and running.attempts == 1
        # The survivor (with beat) is up before the crash, as in a deployment with several workers.
        with celery_worker(env=env, beat=True) as survivor:
            wait_for(lambda: "beat: Starting" in survivor.log.read_text(errors="replace"),
                     "the second worker's beat to start", survivor)
            doomed.kill()
            killed_at = time.monotonic()
            holder.rollback()  # the lock's holder lets go; the dead run's query is gone with it
            bound = settings.LEV_SEARCH_STALE_SECONDS + 2 * settings.LEV_SEARCH_SWEEP_SECONDS + 15
            done = wait_for(finished_search(search), "the sweep to re-run the search", survivor, bound)
            recovered_in = time.monotonic() - killed_at
    assert_ranked_once(done, top_n)
    assert done.attempts == 2  # the killed run, then the survivor's
    print(f"search recovered {recovered_in:.1f} s after its worker was killed")
