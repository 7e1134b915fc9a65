"""The switch around an MCP tools/call (LEV_RESOLVE_CACHE: paths resolved from a per-process table) changes
no answer: every
kind of /mcp answer and the refusals of a tool call (a scope the key lacks, another account's deal, a revoked
key, the rate limit) have the same status, headers and body with them on and off, through /mcp's own
handler (lev.handlers.MCP_MIDDLEWARE) and the full stack, and the pages keep their nonce'd policy."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client, override_settings

from lev.accounts.scopes import ALL_SCOPES, DEALS_READ
from lev.accounts.services import api_key_create, api_key_revoke
from tests.factories import DealFactory
from tests.mcp_tools.mcp_requests import ACCEPT, PROTOCOL, cases, message
from tests.mcp_tools.test_mcp_middleware import lean_client, send

pytestmark = pytest.mark.django_db

SWITCHES = ("LEV_RESOLVE_CACHE",)


def _call(client: Client, key: str, deal_id: int, request_id: str):
    headers = {"Authorization": f"Bearer {key}", "Accept": ACCEPT, "Content-Type": "application/json",
               "MCP-Protocol-Version": PROTOCOL, "X-Request-Id": request_id}
    body = message("tools/call", {"name": "get_deal", "arguments": {"deal_id": deal_id}})
    return send(client, "POST", "/mcp", headers, body)


def _answer(response) -> tuple:
    return response.status_code, dict(response.headers), response.content


def _both_ways(send_one) -> tuple:
    """send_one(on: bool) -> response, for each switch alone and all of them off, against all on."""
    want = _answer(send_one(dict.fromkeys(SWITCHES, True)))
    for off in [*([name] for name in SWITCHES), list(SWITCHES)]:
        got = _answer(send_one({name: name not in off for name in SWITCHES}))
        assert got == want, off
    return want


@pytest.mark.parametrize("make_client", [Client, lean_client], ids=["full stack", "lean /mcp"])
def test_every_mcp_answer_is_the_same_with_the_switches_on_and_off(api_key, account, settings, make_client):
    settings.LEV_MCP_MAX_BODY_BYTES = 5000
    deal = DealFactory(account=account)
    client = make_client()
    for index, (name, method, path, headers, body) in enumerate(cases(api_key, deal.pk, max_body=5000)):
        headers = {**headers, "X-Request-Id": f"same-{index}"}

        def one(switches, method=method, path=path, headers=headers, body=body):
            with override_settings(**switches):
                return send(client, method, path, headers, body)

        _status, answer_headers, _ = _both_ways(one)
        assert "default-src" in answer_headers.get("Content-Security-Policy", ""), name


@pytest.mark.parametrize("make_client", [Client, lean_client], ids=["full stack", "lean /mcp"])
def test_tool_refusals_are_the_same_with_the_switches_on_and_off(user, account, other_account, settings, make_client):
    client = make_client()
    mine, theirs = DealFactory(account=account), DealFactory(account=other_account)
    full = api_key_create(user=user, account=account, name="all", scopes=ALL_SCOPES)[1]
    no_deals = api_key_create(user=user, account=account, name="no deals",
                              scopes=frozenset(ALL_SCOPES - {DEALS_READ}))[1]
    revoked_key, revoked = api_key_create(user=user, account=account, name="revoked")
    api_key_revoke(key=revoked_key)

    def outcome(key, deal_id):
        def one(switches):
            with override_settings(**switches):
                return _call(client, key, deal_id, "same")
        return _both_ways(one)

    ok = outcome(full, mine.pk)
    assert ok[0] == 200 and json.loads(ok[2])["result"]["isError"] is False
    scope = json.loads(outcome(no_deals, mine.pk)[2])["result"]["structuredContent"]
    assert scope["code"] == "FORBIDDEN" and scope["details"]["required_scope"] == DEALS_READ
    other = json.loads(outcome(full, theirs.pk)[2])["result"]["structuredContent"]
    assert other["code"] == "NOT_FOUND" and other["message"] == f"Deal not found: {theirs.pk}"
    status, headers, _ = outcome(revoked, mine.pk)
    assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")

    # The rate limit: one call left, then refusals; each way's refusal is the same but for the wait it names.
    settings.LEV_RATE_LIMIT_READS = "1/min"
    refusals = []
    for switches in (dict.fromkeys(SWITCHES, True), dict.fromkeys(SWITCHES, False), dict.fromkeys(SWITCHES, True)):
        with override_settings(**switches):
            response = _call(client, full, mine.pk, "same")
        refusals.append((response.status_code, dict(response.headers),
                         re.sub(rb'(retryAfterMs\\?":)\d+|(in )\d+( seconds?)', rb"\1\2N\3", response.content)))
    limited = json.loads(_call(client, full, mine.pk, "same").content)["result"]["structuredContent"]
    assert limited["code"] == "RATE_LIMITED"
    assert refusals[1] == refusals[2]  # both refused (the first call used the one left)


def test_pages_keep_their_nonce():
    client = Client()
    first, second = client.get("/api/v1/docs/"), client.get("/api/v1/docs/")
    assert first.status_code == second.status_code == 200
    nonces = [re.search(r"'nonce-([^']+)'", r["Content-Security-Policy"]).group(1) for r in (first, second)]
    assert nonces[0] != nonces[1]
    assert all(f'nonce="{n}"' in r.content.decode() for n, r in zip(nonces, (first, second), strict=True))
