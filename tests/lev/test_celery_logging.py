"""Celery worker logs use the web's log format and carry the id of the request that queued the task,
so one grep follows an agent's call from the API into the ranking job. A real worker subprocess on
Redis and PostgreSQL (skipped without them), logging to a file this test reads.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from deals.demo.directory import seed_directory
from tests.deals.searches.factories import make_deal
from tests.deals.searches.worker_process import celery_worker

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

DEADLINE_S = 90  # worker start-up included
LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (?P<level>[A-Z]+) \[(?P<rid>[^\]]+)\] (?P<name>[\w.]+): "
                  r"(?P<message>.*)$")


@pytest.fixture
def worker_log(db) -> Iterator[Path]:
    """A prefork worker (one child) on the pytest database and a queue of its own; LOG_LEVEL is set
    here so the test does not depend on the caller's environment."""
    with celery_worker(env={"LOG_LEVEL": "INFO"}) as running:
        yield running.log


def test_worker_lines_of_a_search_carry_the_api_request_id_in_the_web_format(worker_log, live_server, account,
                                                                               api_key):
    seed_directory(60, seed=3)
    deal = make_deal(account)
    request_id = f"agent-call-{uuid.uuid4().hex}"
    started = requests.post(f"{live_server.url}/api/v1/deals/{deal.pk}/lender-searches/", json={},
                            headers={"Authorization": f"Bearer {api_key}", "X-Request-Id": request_id},
                            timeout=30)
    assert started.status_code == 202, started.text  # queued for the worker, not run here
    search_id = started.json()["search_id"]
    done = f"Lender search {search_id} completed"

    def succeeded(parsed: list[re.Match]) -> list[re.Match]:
        return [m for m in parsed if m["name"].startswith("celery.app.trace") and "succeeded" in m["message"]]

    # Celery writes its own "succeeded" line after the task returns, so after the search's "completed" line:
    # wait for both (on a loaded machine the second can come a moment after the first).
    deadline = time.monotonic() + DEADLINE_S
    text, parsed = "", []
    while time.monotonic() < deadline and not (done in text and succeeded(parsed)):
        time.sleep(0.25)
        text = worker_log.read_text(errors="replace")
        parsed = [m for m in map(LINE.match, text.splitlines()) if m]
    assert done in text, f"the worker never completed search {search_id}; log tail:\n{text[-4000:]}"

    completed = [m for m in parsed if m["message"].startswith(done)]
    assert completed and completed[0]["rid"] == request_id and completed[0]["name"] == "deals.searches.services"
    # Celery's own lines about this task (from the worker child) carry the id too, in the same format.
    task_lines = succeeded(parsed)
    assert task_lines and all(m["rid"] == request_id for m in task_lines), f"log tail:\n{text[-4000:]}"
