"""A tool call walks the API once (issue 40): the tools name the API's routes and their ids
(mcp_tools.addresses), so in process the view gets the id as the tool validated it, never written into a
path and read back; and the view takes the credential /mcp verified (lev.accounts.auth.PreAuthenticated)
instead of reading the key again. Both answer exactly as the path and the header do."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from django.test import Client

from lev.accounts.auth import PREAUTHENTICATED_ENVIRON_KEY, ApiKeyAuthentication
from mcp_tools import addresses
from mcp_tools.addresses import Address, at
from mcp_tools.client import API_PREFIX, InProcessTransport, LevClient
from mcp_tools.errors import ToolFailure
from tests.factories import DealFactory

ROOT = Path(__file__).resolve().parents[2]
VERBS = {"get", "post", "patch", "delete"}


def _is_api_call(node: ast.Call) -> bool:
    """`lev().get(…)` (any verb) or `get_page(…)`: a call whose first argument is an API address."""
    func = node.func
    if isinstance(func, ast.Name):
        return func.id == "get_page"
    return (isinstance(func, ast.Attribute) and func.attr in VERBS and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name) and func.value.func.id == "lev")


def _tool_sources() -> list[Path]:
    return sorted(path for path in (ROOT / "mcp_tools").rglob("*.py") if "conformance" not in path.parts)


def _addresses_named() -> list[tuple[str, str]]:
    found = []
    for path in _tool_sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            first = node.args[0]
            if isinstance(node.func, ast.Name) and node.func.id == "at":
                assert isinstance(first, ast.Constant), f"{path.name}:{node.lineno}: at() takes a literal route"
                found.append((f"{path.name}:{node.lineno}", first.value))
            elif _is_api_call(node) and isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append((f"{path.name}:{node.lineno}", first.value))  # a route without ids: "/deals/"
    return found


def test_every_address_a_tool_names_is_an_api_route():
    named = _addresses_named()
    assert len(named) > 40  # every tool's calls, read from the code
    table = addresses.routes()
    missing = [(where, template) for where, template in named if API_PREFIX + template not in table]
    assert missing == []


def test_no_tool_writes_an_id_into_a_path():
    # A path a tool formats itself (f"/deals/{deal_id}/") would be parsed back by the URL resolver.
    formatted = []
    for path in _tool_sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and node.args and _is_api_call(node) and \
                    isinstance(node.args[0], ast.JoinedStr | ast.BinOp):
                formatted.append(f"{path.name}:{node.lineno}")
    assert formatted == []


def test_an_address_names_the_route_the_resolver_finds():
    from django.urls import resolve

    for template, ids in [
        ("/api/v1/deals/{deal_id}/", {"deal_id": 7}),
        ("/api/v1/deals/{deal_id}/properties/{property_id}/", {"deal_id": 7, "property_id": 0}),
        ("/api/v1/market-rates/{index}/history/", {"index": "SOFR"}),
        ("/api/v1/deals/", {}),
    ]:
        matched, resolved = addresses.match(Address(template, ids)), resolve(str(Address(template, ids)))
        assert (matched.func, matched.kwargs, matched.url_name, matched.route) == \
            (resolved.func, resolved.kwargs, resolved.url_name, resolved.route)
        assert all(type(matched.kwargs[name]) is type(resolved.kwargs[name]) for name in ids)
    # Ids the resolver would find no route for: none here either (the API's 404).
    assert addresses.match(at("/api/v1/deals/{deal_id}/", deal_id=-1)) is None
    assert addresses.match(at("/api/v1/deals/{deal_id}/", deal_id="7x")) is None
    assert addresses.match(at("/api/v1/market-rates/{index}/history/", index="a/b")) is None
    # An address no route has is the tool's bug, not the agent's 404.
    with pytest.raises(LookupError):
        addresses.match(at("/api/v1/no-such/{deal_id}/", deal_id=1))


def test_every_api_route_is_the_one_the_resolver_finds_at_its_address():
    # No route shadows another: for each address, filled with ids its converters take, the resolver's
    # first match (what a path finds) is the route the address names.
    from django.urls import resolve
    from django.urls.converters import IntConverter

    checked = 0
    for template, found in addresses.routes().items():
        if not template.startswith(API_PREFIX + "/"):
            continue
        route = found[0]
        ids = {name: 1 if type(converter) is IntConverter else "x" for name, converter in route.converters.items()}
        matched, resolved = addresses.match(Address(template, ids)), resolve(str(Address(template, ids)))
        assert (matched.func, matched.route, matched.kwargs) == (resolved.func, resolved.route, resolved.kwargs)
        checked += 1
    assert checked > 50


@pytest.mark.django_db
def test_in_process_answers_by_address_are_the_paths(api_key, account, other_account, settings):
    settings.LEV_RATE_LIMIT_READS = "100000/min"
    mine, theirs = DealFactory(account=account), DealFactory(account=other_account)
    auth = {"Authorization": f"Bearer {api_key}", "X-Request-Id": "addr"}
    transport = InProcessTransport(host="testserver")
    for template, ids in [
        ("/api/v1/deals/{deal_id}/", {"deal_id": mine.id}),
        ("/api/v1/deals/{deal_id}/", {"deal_id": theirs.id}),  # another account's: 404 like a missing one
        ("/api/v1/deals/{deal_id}/", {"deal_id": -1}),  # no route: the API's 404
        ("/api/v1/deals/{deal_id}/financials/", {"deal_id": mine.id}),
        ("/api/v1/market-rates/{index}/history/", {"index": "no-such-index"}),
    ]:
        by_address = transport.send("GET", Address(template, ids), query={}, body=None, headers=auth)
        full = Client().get(str(Address(template, ids)), headers={**auth, "Accept": "application/json"})
        assert (by_address.status, by_address.body) == (full.status_code, json.loads(full.content)), (template, ids)


@pytest.mark.django_db
def test_the_view_takes_the_credential_handed_over(api_key, user, account, settings):
    settings.LEV_RATE_LIMIT_READS = "100000/min"
    deal = DealFactory(account=account)
    verified = ApiKeyAuthentication.authenticate_key(api_key)
    handed = InProcessTransport(host="testserver", authenticated=verified)
    answer = handed.send("GET", at("/api/v1/deals/{deal_id}/", deal_id=deal.id), query={}, body=None,
                         headers={"Authorization": "Bearer lev_sk_not-read", "X-Request-Id": "h"})
    # The header is not read again (a wrong one changes nothing): the credential /mcp verified decides.
    assert answer.status == 200 and answer.body["id"] == deal.id
    client = LevClient(authorization=f"Bearer {api_key}", transport=handed)
    assert client.get(at("/deals/{deal_id}/", deal_id=deal.id))["id"] == deal.id
    with pytest.raises(ToolFailure) as refused:
        client.get(at("/deals/{deal_id}/", deal_id=deal.id + 10_000))
    assert refused.value.code == "NOT_FOUND"


@pytest.mark.django_db
def test_a_client_cannot_send_the_hand_over(api_key, account):
    deal = DealFactory(account=account)
    # As a header it is an HTTP_* key, never the hand-over: no credential, so 401 with its challenge.
    answer = Client().get(f"/api/v1/deals/{deal.id}/", headers={PREAUTHENTICATED_ENVIRON_KEY: "x",
                                                                "Accept": "application/json"})
    assert answer.status_code == 401 and answer.headers["WWW-Authenticate"].startswith("Bearer")
