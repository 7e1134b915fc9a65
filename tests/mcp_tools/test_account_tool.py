"""get_account: the caller as the API says it (GET /api/v1/account/), and the toolsets and read-only mode
the connection chose; every credential may call it, and calling it uses none of the rate limits."""

from __future__ import annotations

import pytest
from django.conf import settings as django_settings

from lev.accounts import scopes
from lev.accounts.services import api_key_create
from mcp_tools.registry import TOOLS
from mcp_tools.toolsets import toolset_of, toolsets
from tests.conftest import DAY
from tests.factories import DealFactory
from tests.mcp_tools.test_toolsets import called, listed
from tests.oauth.flow import Flow, public_client

pytestmark = pytest.mark.django_db

COUNTED = "shared" if django_settings.REDIS_URL else "per_process"


def account_of(credential: str, path: str = "/mcp", **headers: str) -> dict:
    result = called(credential, "get_account", {}, path=path, **headers)
    assert not result.get("isError"), result
    return result["structuredContent"]


def test_over_the_official_client_it_says_who_and_what_the_connection_may_do(mcp, user, account):
    body = mcp.ok("get_account")
    assert body["user"]["username"] == "alice" and body["account"] == {"id": account.pk, "name": "Acme Capital",
                                                                       "slug": "acme"}
    assert body["role"] == "member" and body["credential"]["kind"] == "api_key"
    assert body["credential"]["scopes"] == list(scopes.SCOPES)
    assert body["connection"] == {"toolsets": list(toolsets()), "read_only": False, "tools": len(TOOLS)}
    assert body["rate_limits"]["counted"] == COUNTED and body["rate_limits"]["this_request_counted"] is False


def test_it_is_read_only_in_its_own_toolset_and_every_credential_sees_it(user, account):
    spec = TOOLS["get_account"]
    assert toolset_of(spec) == "account" and spec.scope == scopes.ACCOUNT_READ
    hints = spec.annotations
    assert hints.readOnlyHint and hints.idempotentHint and not hints.destructiveHint and not hints.openWorldHint
    for granted in ({"placements:write"}, {"lenders:read"}, scopes.READ_ONLY_SCOPES):
        raw = api_key_create(user=user, account=account, name="narrow", scopes=frozenset(granted))[1]
        assert "get_account" in listed(raw)
        assert set(account_of(raw)["credential"]["scopes"]) == set(granted) | scopes.ALWAYS_GRANTED


@pytest.mark.parametrize(("path", "headers", "chosen", "read_only"), [
    ("/mcp/x/account,deals/readonly", {}, ["account", "deals"], True),
    ("/mcp", {"X-MCP-Toolsets": "account, lenders", "X-MCP-Readonly": "false"}, ["account", "lenders"], False),
    ("/mcp/readonly", {}, None, True),
])
def test_it_reports_the_toolsets_and_read_only_mode_the_connection_chose(api_key, path, headers, chosen, read_only):
    connection = account_of(api_key, path, **headers)["connection"]
    assert connection["toolsets"] == (chosen or list(toolsets())) and connection["read_only"] is read_only
    assert connection["tools"] == len(listed(api_key, path, **headers))  # what tools/list shows it


def test_a_connection_without_the_account_toolset_does_not_offer_it(api_key):
    assert "get_account" not in listed(api_key, "/mcp/x/deals")
    refused = called(api_key, "get_account", {}, path="/mcp/x/deals")
    assert refused["isError"] and refused["structuredContent"]["code"] == "VALIDATION_ERROR"


def test_an_oauth_token_shows_the_narrowed_scopes_and_the_tools_they_allow(user, account):
    flow = Flow(user=user, client_id=public_client(name="Agent Smith").client_id)
    token = flow.tokens(scope="deals:read placements:read")["access_token"]
    body = account_of(token)
    assert body["credential"]["kind"] == "oauth" and body["credential"]["name"] == "Agent Smith"
    assert body["credential"]["scopes"] == ["deals:read", "placements:read", "account:read"]
    assert body["credential"]["expires_at"]
    allowed = {"deals:read", "placements:read", "account:read"}
    assert body["connection"]["tools"] == sum(1 for spec in TOOLS.values() if spec.scope in allowed) \
        == len(listed(token))


def test_other_tools_use_the_limits_and_it_does_not(api_key, account, settings, frozen_window):
    settings.LEV_RATE_LIMIT_READS = "10/day"
    deal = DealFactory(account=account)
    before = account_of(api_key)["rate_limits"]["reads"]
    assert before["remaining"] == 10 and before["resets_in_seconds"] == DAY // 2
    for _ in range(3):
        assert not called(api_key, "get_deal", {"deal_id": deal.pk}).get("isError")
    for _ in range(3):
        assert account_of(api_key)["rate_limits"]["reads"]["remaining"] == 7
