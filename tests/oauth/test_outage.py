"""The database down while an OAuth token is checked: the same answers as for an API key (ARCHITECTURE.md,
"Failure semantics"): a JSON-RPC answer on /mcp carrying UPSTREAM_UNAVAILABLE, 503 from the REST API and
the token endpoint, never a 500 or a traceback. The outage is real: a TCP proxy in front of PostgreSQL
is cut (tests/faults.py)."""

from __future__ import annotations

import httpx
import pytest

from lev.accounts import scopes
from lev.accounts.credential_cache import credential_cache
from lev.errors import UPSTREAM_MESSAGE
from tests.oauth.flow import Flow, public_client

pytestmark = pytest.mark.django_db(transaction=True)


def rpc(base_url: str, token: str, method: str, params: dict | None = None) -> httpx.Response:
    return httpx.post(f"{base_url}/mcp", json={"jsonrpc": "2.0", "id": 3, "method": method, "params": params or {}},
                      headers={"Authorization": f"Bearer {token}", "Accept": "application/json"}, timeout=30)


def test_database_outage_while_checking_a_token(live_server, user, db_proxy, caplog, settings):
    settings.LEV_PUBLIC_URL = live_server.url  # one public address, whichever Host a request names
    flow = Flow(user=user, client_id=public_client().client_id)
    resource = f"{live_server.url}/mcp"
    tokens = flow.exchange(flow.code(scope=scopes.as_text(scopes.ALL_SCOPES), resource=resource),
                           resource=resource).json()
    assert rpc(live_server.url, tokens["access_token"], "tools/list").status_code == 200

    db_proxy.cut()
    # The token checked moments ago is in this process's credential cache (lev.accounts.credential_cache): empty it
    # so that these requests check the token in the database that is down.
    credential_cache.clear()
    called = rpc(live_server.url, tokens["access_token"], "tools/call", {"name": "list_deals", "arguments": {}})
    assert called.status_code == 200
    result = called.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["code"] == "UPSTREAM_UNAVAILABLE"
    assert result["structuredContent"]["isRetryable"] is True and result["structuredContent"]["retryAfterMs"] > 0

    listed = rpc(live_server.url, tokens["access_token"], "tools/list")
    assert listed.status_code == 200 and listed.json()["error"]["data"]["code"] == "UPSTREAM_UNAVAILABLE"

    rest = httpx.get(f"{live_server.url}/api/v1/deals/", headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert rest.status_code == 503 and rest.json()["code"] == "UPSTREAM_UNAVAILABLE"

    refreshed = httpx.post(f"{live_server.url}/oauth/token/", data={
        "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": flow.client_id})
    assert refreshed.status_code == 503 and refreshed.json()["message"] == UPSTREAM_MESSAGE
    assert int(refreshed.headers["Retry-After"]) > 0

    session = {name: morsel.value for name, morsel in flow.browser.cookies.items()}
    page = httpx.get(f"{live_server.url}/oauth/connected-apps/", cookies=session)
    assert page.status_code == 503 and UPSTREAM_MESSAGE in page.text
    assert not [r for r in caplog.records if r.exc_info and r.levelname == "ERROR"]

    db_proxy.restore()
    called = rpc(live_server.url, tokens["access_token"], "tools/call", {"name": "list_deals", "arguments": {}})
    assert called.status_code == 200 and not called.json()["result"].get("isError")


def test_split_mcp_service_reaches_its_own_backend_with_the_token(live_server, user, account, settings):
    """LEV_API_BASE_URL: the tools call the API over HTTP with the caller's token, which the backend (the
    same resource server, one token store) accepts because it is bound to this site's public address."""
    from tests.factories import DealFactory

    DealFactory(account=account, title="Over HTTP")
    settings.LEV_PUBLIC_URL = live_server.url
    settings.LEV_API_BASE_URL = live_server.url
    flow = Flow(user=user, client_id=public_client().client_id)
    resource = f"{live_server.url}/mcp"
    tokens = flow.exchange(flow.code(scope="deals:read", resource=resource), resource=resource).json()
    called = rpc(live_server.url, tokens["access_token"], "tools/call", {"name": "list_deals", "arguments": {}})
    result = called.json()["result"]
    assert not result.get("isError"), result
    assert [d["title"] for d in result["structuredContent"]["deals"]] == ["Over HTTP"]
    refused = rpc(live_server.url, tokens["access_token"], "tools/call", {"name": "create_deal",
                                                                          "arguments": {"title": "No"}})
    assert refused.status_code == 403
