"""/health answers while the process's request thread is stuck in a request (issue #19 follow-up).

Under the production worker (lev.asgi) a process runs the site's requests one after another on one
request thread, and a kept-alive connection stays with its process. A request held up by a dependency
(here a real row lock: this test holds the deal's row with SELECT ... FOR UPDATE, so the server's
PATCH of that deal waits on PostgreSQL's lock up to LEV_DB_STATEMENT_TIMEOUT_MS) must not hold up
/health behind it: operators and load balancers poll it precisely when something hangs. Loopback only,
one process (WEB_CONCURRENCY=1), bounded: about 10 s.
"""

from __future__ import annotations

import threading
import time

import httpx
import psycopg
import pytest
from django.db import connection

from tests.deploy.production_server import member_key, running
from tests.factories import DealFactory

pytestmark = pytest.mark.slow


@pytest.fixture
def server(transactional_db, tmp_path):
    with running(tmp_path, WEB_CONCURRENCY="1", LEV_DB_STATEMENT_TIMEOUT_MS="10000") as server:
        yield server


def test_health_answers_while_the_request_thread_waits_on_a_lock(server):
    account, key = member_key("locked")
    deal = DealFactory(account=account)
    db = connection.settings_dict

    with psycopg.connect(host=db["HOST"], port=db["PORT"], user=db["USER"], password=db["PASSWORD"] or None,
                         dbname=db["NAME"], autocommit=False) as holder:
        holder.execute("SELECT id FROM deals_deal WHERE id = %s FOR UPDATE", [deal.pk])
        answers: dict[str, int] = {}

        def stuck_write() -> None:
            response = httpx.patch(f"{server.url}/api/v1/deals/{deal.pk}/", json={"title": "After the lock"},
                                   headers={"Authorization": f"Bearer {key}"}, timeout=30)
            answers["write_status"] = response.status_code

        writer = threading.Thread(target=stuck_write)
        writer.start()
        # The PATCH is inside the request thread once its transaction waits on the lock (polled, bounded).
        deadline = time.monotonic() + 10
        while not holder.execute("SELECT count(*) FROM pg_locks WHERE NOT granted").fetchone()[0]:
            assert time.monotonic() < deadline, "the write never waited on the lock: nothing is stuck"
            time.sleep(0.05)
        # /health is asked while the lock is held, and the lock is let go only after it answered: had it
        # waited behind the stuck PATCH, it could not answer before the client's 5 s timeout.
        with httpx.Client(timeout=5) as operator:  # one kept-alive connection, as a poller has
            for _ in range(3):
                response = operator.get(f"{server.url}/health")
                assert response.status_code == 200, response.text[:300]
                assert response.json()["database"] == "reachable"
        assert writer.is_alive(), "the write finished before /health was asked: the test proves nothing"
        holder.rollback()
    writer.join(timeout=30)

    assert answers["write_status"] == 200, answers  # the write went through once the lock was gone
