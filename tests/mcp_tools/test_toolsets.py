"""Toolsets and read-only mode (mcp_tools.toolsets): a client chooses part of the catalogue per
request, by header or by address; the choice narrows tools/list and tools/call together, combines
with the credential's scopes (the narrowest wins), refuses a toolset it does not know, and keeps
OAuth working at the addresses under /mcp (their resource metadata, and tokens bound to them)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from lev.accounts.services import api_key_create
from mcp_tools.registry import TOOLS
from mcp_tools.toolsets import toolset_of, toolsets
from tests.factories import DealFactory
from tests.oauth.flow import Flow, public_client

pytestmark = pytest.mark.django_db

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
READERS = sorted(name for name, spec in TOOLS.items() if spec.annotations.readOnlyHint)


def rpc(credential: str, method: str, params: dict | None = None, path: str = "/mcp", **headers: str):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}})
    return Client().generic("POST", path, body, content_type="application/json",
                            headers={**HEADERS, "Authorization": f"Bearer {credential}", **headers})


def listed(credential: str, path: str = "/mcp", **headers: str) -> list[str]:
    response = rpc(credential, "tools/list", path=path, **headers)
    assert response.status_code == 200, response.content
    return sorted(tool["name"] for tool in response.json()["result"]["tools"])


def in_toolsets(*names: str) -> list[str]:
    return sorted(name for name, spec in TOOLS.items() if toolset_of(spec) in names)


def called(credential: str, name: str, arguments: dict, path: str = "/mcp", **headers: str) -> dict:
    response = rpc(credential, "tools/call", {"name": name, "arguments": arguments}, path=path, **headers)
    assert response.status_code == 200, response.content
    return response.json()["result"]


def test_the_toolsets_are_the_tool_modules_and_every_tool_is_in_one():
    assert toolsets() == ("account", "companies", "deals", "documents", "lenders", "notes", "pipeline",
                          "placements")
    assert sorted(TOOLS) == sorted(in_toolsets(*toolsets()))


@pytest.mark.parametrize(("path", "headers", "expected"), [
    ("/mcp", {}, sorted(TOOLS)),
    ("/mcp", {"X-MCP-Toolsets": "placements"}, in_toolsets("placements")),
    ("/mcp", {"X-MCP-Toolsets": " Deals , lenders ,"}, in_toolsets("deals", "lenders")),
    ("/mcp", {"X-MCP-Toolsets": ""}, sorted(TOOLS)),  # empty: every toolset
    ("/mcp", {"X-MCP-Readonly": "true"}, READERS),
    ("/mcp", {"X-MCP-Readonly": "Off"}, sorted(TOOLS)),
    ("/mcp/readonly", {}, READERS),
    ("/mcp/x/deals", {}, in_toolsets("deals")),
    ("/mcp/x/deals,placements/readonly", {}, sorted(set(in_toolsets("deals", "placements")) & set(READERS))),
    # URL and header both name toolsets: the ones both name.
    ("/mcp/x/deals,lenders", {"X-MCP-Toolsets": "lenders,placements"}, in_toolsets("lenders")),
    ("/mcp/x/deals", {"X-MCP-Toolsets": "placements"}, []),
])
def test_a_connection_lists_the_tools_it_chose(api_key, path, headers, expected):
    assert listed(api_key, path, **headers) == expected


def test_a_tool_left_out_cannot_be_called_and_one_chosen_can(api_key, account):
    deal = DealFactory(account=account, title="Chosen")
    result = called(api_key, "get_deal", {"deal_id": deal.pk}, path="/mcp/x/placements")
    payload = result["structuredContent"]
    assert result["isError"] and payload["code"] == "VALIDATION_ERROR"
    assert payload["message"] == ("Validation failed: get_deal is not in this connection's toolsets (placements); "
                                  "call tools/list for the tools this connection offers")
    ok = called(api_key, "get_deal", {"deal_id": deal.pk}, path="/mcp/x/deals/readonly")
    assert not ok["isError"] and ok["structuredContent"]["deal"]["title"] == "Chosen"


def test_a_read_only_connection_cannot_change_anything(api_key, account):
    deal = DealFactory(account=account, title="Kept")
    for how in ({"path": "/mcp/readonly"}, {"X-MCP-Readonly": "1"}):
        result = called(api_key, "update_deal", {"deal_id": deal.pk, "title": "Changed"}, **how)
        payload = result["structuredContent"]
        assert result["isError"] and payload["code"] == "FORBIDDEN"
        assert payload["message"] == "Forbidden: update_deal changes data, and this connection is read-only"
        assert payload["details"] == {"tool": "update_deal", "read_only": True}
    deal.refresh_from_db()
    assert deal.title == "Kept"


def test_scopes_and_toolsets_together_leave_what_both_allow(user, account):
    _key, raw = api_key_create(user=user, account=account, name="reader",
                               scopes=frozenset({"deals:read", "placements:read"}))
    assert listed(raw, "/mcp/x/deals,lenders") == sorted(
        name for name in in_toolsets("deals") if TOOLS[name].scope == "deals:read")
    # A scope the toolset leaves out stays out; a toolset the scopes leave out lists nothing of it.
    assert not set(listed(raw, "/mcp/x/lenders"))


@pytest.mark.parametrize(("path", "headers", "field"), [
    ("/mcp/x/deal", {}, "url"),
    ("/mcp/x/deals,bogus/readonly", {}, "url"),
    ("/mcp", {"X-MCP-Toolsets": "deals,Lendrs"}, "X-MCP-Toolsets"),
    ("/mcp/x/,", {}, "url"),
])
def test_an_unknown_toolset_is_refused_naming_the_known_ones(api_key, path, headers, field):
    response = rpc(api_key, "tools/list", path=path, **headers)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "VALIDATION_ERROR" and body["message"].startswith("Validation failed: ")
    known = "the toolsets are: account, companies, deals, documents, lenders, notes, pipeline, placements"
    assert known in body["details"]["fields"][field][0]


def test_oauth_works_at_a_toolset_address(user):
    """The 401 points at the metadata of the address asked for; that metadata names the address; a token
    bound to it (RFC 8707, as an MCP client asks for one) is accepted there and on /mcp."""
    unauthenticated = Client().generic("POST", "/mcp/x/deals/readonly", "{}", content_type="application/json",
                                       headers=HEADERS)
    assert unauthenticated.status_code == 401
    metadata_url = "http://testserver/.well-known/oauth-protected-resource/mcp/x/deals/readonly"
    assert f'resource_metadata="{metadata_url}"' in unauthenticated["WWW-Authenticate"]
    metadata = Client().get(metadata_url.removeprefix("http://testserver")).json()
    assert metadata["resource"] == "http://testserver/mcp/x/deals/readonly"
    assert Client().get("/.well-known/oauth-protected-resource/mcp").json()["resource"] == "http://testserver/mcp"

    resource = "http://testserver/mcp/x/deals/readonly"
    flow = Flow(user=user, client_id=public_client().client_id)
    token = flow.exchange(flow.code(resource=resource), resource=resource).json()["access_token"]
    assert listed(token, "/mcp/x/deals/readonly") == sorted(set(in_toolsets("deals")) & set(READERS))
    assert listed(token, "/mcp") == sorted(name for name, spec in TOOLS.items()
                                           if spec.scope in {"deals:read", "deals:write", "lenders:read",
                                                             "searches:write", "account:read"})
    # Not this site's: refused at the consent page as before.
    refused = flow.consent_page(resource="http://elsewhere.example/mcp/x/deals")
    assert refused.status_code == 302 and "error=invalid_target" in refused["Location"]
