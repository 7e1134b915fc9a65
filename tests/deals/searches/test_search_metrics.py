"""Lender search metrics (queue wait, run time by outcome): in the site's /metrics when jobs run
in-process, and from a real Celery worker's own metrics endpoint (prefork children adding up
through PROMETHEUS_MULTIPROC_DIR)."""

from __future__ import annotations

import tempfile

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from deals.demo.directory import seed_directory
from deals.searches import services
from tests.deals.fixtures import eager_jobs
from tests.deals.searches.factories import make_deal, refresh
from tests.deals.searches.worker_process import celery_worker, wait_for
from tests.faults import free_port

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["eager_jobs"]


def samples(text: str) -> dict[tuple[str, tuple], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def run_count(text: str, outcome: str) -> float:
    return samples(text).get(("lev_lender_search_run_seconds_count", (("outcome", outcome),)), 0.0)


def wait_count(text: str) -> float:
    return samples(text).get(("lev_lender_search_queue_wait_seconds_count", ()), 0.0)


def test_an_in_process_search_is_counted_in_the_site_metrics(client, eager_jobs, account):
    seed_directory(30, seed=3)
    before = client.get("/metrics").content.decode()
    search, _ = services.lender_search_start(deal=make_deal(account))
    assert refresh(search).status == "completed"
    after = client.get("/metrics").content.decode()
    assert run_count(after, "completed") == run_count(before, "completed") + 1
    assert wait_count(after) == wait_count(before) + 1


@pytest.mark.slow
def test_a_worker_serves_its_own_search_metrics(account):
    seed_directory(30, seed=3)
    port = free_port()
    with tempfile.TemporaryDirectory() as metrics_dir, celery_worker(env={
        "LEV_WORKER_METRICS_PORT": str(port), "LEV_WORKER_METRICS_ADDR": "127.0.0.1",
        "PROMETHEUS_MULTIPROC_DIR": metrics_dir,
    }) as worker:
        search, _ = services.lender_search_start(deal=make_deal(account))
        wait_for(lambda: refresh(search).status == "completed", "the worker to rank the search", worker)

        def scraped() -> str | None:
            try:
                text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
            except httpx.HTTPError:
                return None
            return text if run_count(text, "completed") >= 1 else None

        text = wait_for(scraped, "the worker's metrics to show the run", worker)
    assert wait_count(text) >= 1
