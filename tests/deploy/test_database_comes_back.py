"""The production server's first requests after the database comes back are answered, not refused with a
503: its kept database connections were reset (a real TCP proxy in front of PostgreSQL, cut and restored;
PostgreSQL ending every session, as a restart does), and the connection health check (lev.postgresql:
no query per request in steady use) finds that out before the request's first query. PostgreSQL only."""

from __future__ import annotations

import time

import httpx
import psycopg
import pytest
from django.db import connection

from tests.deploy.production_server import member_key, running
from tests.factories import DealFactory
from tests.faults import TcpProxy
from tests.mcp_tools.mcp_requests import ACCEPT, PROTOCOL, message

pytestmark = pytest.mark.slow


def test_the_first_requests_after_the_database_comes_back_are_answered(transactional_db, tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("the proxy sits in front of PostgreSQL")
    account, key = member_key("phoenix")
    deal = DealFactory(account=account, title="Still here")
    db = connection.settings_dict
    proxy = TcpProxy(db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432)).start()
    url = f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@127.0.0.1:{proxy.port}/{db['NAME']}"
    rest_headers = {"Authorization": f"Bearer {key}"}
    mcp_headers = {**rest_headers, "Accept": ACCEPT, "Content-Type": "application/json",
                   "MCP-Protocol-Version": PROTOCOL}
    call = message("tools/call", {"name": "get_deal", "arguments": {"deal_id": deal.pk}})

    def both(server) -> tuple[str, str]:
        rest = httpx.get(f"{server.url}/api/v1/deals/{deal.pk}/", headers=rest_headers, timeout=30)
        assert rest.status_code == 200, rest.text
        mcp = httpx.post(f"{server.url}/mcp", content=call, headers=mcp_headers, timeout=30)
        assert mcp.status_code == 200 and not mcp.json()["result"].get("isError"), mcp.text
        return rest.json()["title"], mcp.json()["result"]["structuredContent"]["deal"]["title"]

    try:
        with running(tmp_path, DATABASE_URL=url, WEB_CONCURRENCY="1", LEV_RATE_LIMIT_READS="100000/min") as server:
            assert both(server) == both(server) == ("Still here", "Still here")  # connections kept
            proxy.cut()  # every connection reset, new ones refused ...
            proxy.restore()  # ... and the database is back
            assert both(server) == ("Still here", "Still here")
            # PostgreSQL ending the server's sessions, as a restart does (the test's own connection
            # does not pass the proxy).
            with psycopg.connect(host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"],
                                 password=db["PASSWORD"] or None, dbname=db["NAME"], autocommit=True) as admin:
                others = ("FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
                          "AND backend_type = 'client backend' AND pid <> %s")
                ours = (connection.connection.info.backend_pid,)
                assert admin.execute(f"SELECT count(pg_terminate_backend(pid)) {others}", ours).fetchone()[0] >= 1
                deadline = time.monotonic() + 10  # the sessions end a moment after they are signalled
                while admin.execute(f"SELECT count(*) {others}", ours).fetchone()[0]:
                    assert time.monotonic() < deadline
                    time.sleep(0.01)
            assert both(server) == ("Still here", "Still here")
            log = server.log()
            assert " 503 " not in log and "Traceback" not in log, log[-3000:]
    finally:
        proxy.close()
