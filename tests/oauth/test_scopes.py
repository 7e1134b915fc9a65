"""Scopes at both doors: every REST route and every MCP tool names one; a credential sees and may call
only what its scopes allow; refusals are FORBIDDEN in the one error contract, with the challenge an
OAuth client can step up with. API keys get scopes too (existing keys keep them all)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from deals.models import Company, Contact, Document, HistoryImport
from deals.outreach.models import OutreachSend
from lev.accounts import scopes
from lev.accounts.models import ApiKey
from lev.accounts.permissions import HasRequiredScope, required_scope
from lev.accounts.services import api_key_create
from mcp_tools.registry import TOOLS
from tests.deals.fixtures import eager_jobs
from tests.deals.placements.helpers import FIXED, place, quote
from tests.factories import DealFactory, DealPropertyFactory, LenderFactory, LenderProgramFactory
from tests.oauth.flow import Flow, public_client

__all__ = ["eager_jobs"]

pytestmark = pytest.mark.django_db

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
READ_ONLY = sorted(scopes.READ_ONLY_SCOPES)


def mcp(credential: str | None, method: str, params: dict | None = None, **headers):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}})
    auth = {"Authorization": f"Bearer {credential}"} if credential else {}
    return Client().generic("POST", "/mcp", body, content_type="application/json",
                            headers={**HEADERS, **auth, **headers})


def tool_names(credential: str) -> set[str]:
    response = mcp(credential, "tools/list")
    assert response.status_code == 200
    return {tool["name"] for tool in response.json()["result"]["tools"]}


def call(credential: str, name: str, arguments: dict | None = None):
    return mcp(credential, "tools/call", {"name": name, "arguments": arguments or {}})


def key_with(user, account, granted) -> str:
    return api_key_create(user=user, account=account, name="scoped", scopes=frozenset(granted))[1]


def oauth_token(user, granted) -> str:
    flow = Flow(user=user, client_id=public_client().client_id)
    return flow.tokens(scope=" ".join(sorted(granted)))["access_token"]


# --- every door names its scope --------------------------------------------------------------------
def _routes(patterns, prefix=""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _routes(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.callback


def test_every_rest_route_names_a_scope_for_each_of_its_methods():
    """A new REST view fails here until it says `required_scopes = {"GET": ..., "POST": ...}`."""
    checked, exempt = [], set()
    for route, callback in _routes(get_resolver().url_patterns):
        view = getattr(callback, "cls", None)
        if not route.startswith("api/") or view is None:
            continue
        if not any(isinstance(permission, HasRequiredScope) for permission in view().get_permissions()):
            exempt.add(view.__name__)
            continue
        for method in ("get", "post", "put", "patch", "delete"):
            if hasattr(view, method):
                scope = required_scope(view, method.upper())
                assert scope in scopes.SCOPES, f"{view.__name__} ({route}) names no scope for {method.upper()}"
                checked.append((view.__name__, method))
    assert exempt == {"SpectacularAPIView", "SpectacularSwaggerView"}  # public: the schema and its page
    assert len(checked) >= 14


def test_every_tool_names_a_scope_that_matches_what_it_does():
    """A new tool fails here until it says `@tool(scope=...)`; a read-only tool needs a read scope."""
    for spec in TOOLS.values():
        assert spec.scope in scopes.SCOPES, f"tool {spec.name} names no scope: add scope=... to its @tool(...)"
        assert spec.scope.endswith(":read") == bool(spec.annotations.readOnlyHint), spec.name


@pytest.fixture
def objects(account):
    deal = DealFactory(account=account, title="Scoped", loan_amount=5_000_000)
    lender = LenderFactory()
    LenderProgramFactory(lender=lender)
    return {
        "deal": deal, "lender": lender,
        "doomed": DealFactory(account=account),
        "property": DealPropertyFactory(deal=deal), "spare": DealPropertyFactory(deal=deal),
        "new_lender": LenderFactory(),
        "company": (company := Company.objects.create(account=account, kind="sponsor", name="Harbor")),
        "contact": Contact.objects.create(account=account, company=company, name="Dana"),
    }


def _arguments(objects, search_id):
    deal = objects["deal"].pk
    placement = place(objects["deal"], objects["lender"])
    winner, spare = quote(placement), quote(placement)
    return {
        "list_deals": {}, "get_deal": {"deal_id": deal}, "create_deal": {"title": "New"},
        "update_deal": {"deal_id": deal, "title": "Renamed"}, "archive_deal": {"deal_id": objects["doomed"].pk},
        "add_deal_property": {"deal_id": deal, "name": "Annex", "state": "TX", "asset_type": "multifamily"},
        "update_deal_property": {"deal_id": deal, "property_id": objects["property"].pk, "name": "Main"},
        "remove_deal_property": {"deal_id": deal, "property_id": objects["spare"].pk},
        "get_deal_financials": {"deal_id": deal}, "update_deal_financials": {"deal_id": deal, "purchase_price": 9e6},
        "list_deal_properties": {"deal_id": deal},
        "search_lender_directory": {}, "get_lender": {"lender_id": objects["lender"].pk},
        "list_lender_programs": {"lender_id": objects["lender"].pk},
        "list_lender_searches": {"deal_id": deal},
        "create_lender": {"name": "Hill Country Bank"},
        "add_lender_program": {"lender_id": objects["lender"].pk, "title": "Ours", "loan_types": ["permanent"],
                               "asset_types": ["multifamily"]},
        "search_lenders_for_deal": {"deal_id": deal}, "get_lender_search_results": {"search_id": search_id},
        "get_market_rates": {"index": "sofr", "history_days": 5},
        "create_placements": {"deal_id": deal, "lender_ids": [objects["new_lender"].pk]},
        "list_placements": {"deal_id": deal}, "get_placement": {"placement_id": placement.pk},
        "update_placement": {"placement_id": placement.pk, "notes": "Called them"},
        "add_term_sheet": {"placement_id": placement.pk, **FIXED},
        "list_term_sheets": {"deal_id": deal}, "compare_term_sheets": {"deal_id": deal},
        "select_winning_term_sheet": {"term_sheet_id": winner.pk}, "remove_term_sheet": {"term_sheet_id": spare.pk},
        "get_pipeline": {}, "move_deal_stage": {"deal_id": deal, "stage": "underwriting"},
        "get_deal_stage_history": {"deal_id": deal}, "summarize_deal": {"deal_id": deal},
        "get_account": {},
        "list_companies": {}, "get_company": {"company_id": objects["company"].pk},
        "create_company": {"kind": "sponsor", "name": "New"},
        "update_company": {"company_id": objects["company"].pk, "name": "Renamed"},
        "list_contacts": {"lender_id": objects["lender"].pk},
        "add_contact": {"company_id": objects["company"].pk, "name": "Pat"},
        "update_contact": {"contact_id": objects["contact"].pk, "title": "Principal"},
        "add_note": {"placement_id": placement.pk, "kind": "call", "body": "Asked for the rent roll."},
        "list_notes": {"deal_id": deal}, "get_deal_timeline": {"deal_id": deal},
        "get_import": {"import_id": HistoryImport.objects.create(account=objects["deal"].account,
                                                                 file_name="h.csv").pk},
        "list_imports": {},
        "list_deal_documents": {"deal_id": deal},
        "get_deal_document": {"document_id": Document.objects.create(
            account=objects["deal"].account, deal=objects["deal"], kind="rent_roll", name="Rent roll").pk},
        "send_placements_email": {"deal_id": deal, "kind": "follow_up"},
        "get_outreach_progress": {"send_id": OutreachSend.objects.create(
            account=objects["deal"].account, deal=objects["deal"], kind="teaser").pk},
    }


def test_each_tool_works_with_its_own_scope_alone(user, account, objects, eager_jobs):
    """The REST calls a tool makes need no scope but the tool's: one scope is enough for each tool."""
    search = call(key_with(user, account, ALL := scopes.ALL_SCOPES), "search_lenders_for_deal",
                  {"deal_id": objects["deal"].pk}).json()["result"]["structuredContent"]
    arguments = _arguments(objects, search["search_id"])
    missing = set(TOOLS) - set(arguments)
    assert not missing, f"add arguments for {sorted(missing)} to this test's table"
    keys = {scope: key_with(user, account, {scope}) for scope in ALL}
    for name, args in arguments.items():
        result = call(keys[TOOLS[name].scope], name, args).json()["result"]
        assert not result.get("isError"), (name, result["structuredContent"])


# --- a read-only API key -----------------------------------------------------------------------------
def test_read_only_key_sees_no_write_tool_and_is_refused_one(user, account):
    key = key_with(user, account, scopes.READ_ONLY_SCOPES)
    names = tool_names(key)
    assert names == {spec.name for spec in TOOLS.values() if spec.annotations.readOnlyHint}
    response = call(key, "create_deal", {"title": "Nope"})
    assert response.status_code == 200  # an API key cannot step up: the answer is the tool error
    result = response.json()["result"]
    assert result["isError"] is True
    payload = result["structuredContent"]
    assert payload["code"] == "FORBIDDEN" and payload["errorCategory"] == "permission"
    assert payload["isRetryable"] is False and "retryAfterMs" not in payload
    assert payload["message"] == "Forbidden: create_deal needs the scope deals:write, which this credential " \
                                 "was not granted"
    assert payload["details"] == {"required_scope": "deals:write", "tool": "create_deal"}
    assert json.loads(result["content"][0]["text"]) == payload
    assert not ApiKey.objects.filter(scopes__contains="deals:write", name="scoped").exists()


def test_read_only_key_is_refused_writes_by_the_rest_api(user, account):
    key = key_with(user, account, scopes.READ_ONLY_SCOPES)
    client = Client(headers={"Authorization": f"Bearer {key}"})
    assert client.get("/api/v1/deals/").status_code == 200
    refused = client.post("/api/v1/deals/", {"title": "Nope"}, content_type="application/json")
    assert refused.status_code == 403
    assert refused.json() == {"code": "FORBIDDEN", "message": "Forbidden: this needs the scope deals:write, which "
                              "this credential was not granted", "details": {"required_scope": "deals:write"}}
    challenge = refused["WWW-Authenticate"]
    assert challenge.startswith('Bearer error="insufficient_scope"')
    assert 'scope="deals:read deals:write lenders:read placements:read account:read"' in challenge
    assert 'resource_metadata="http://testserver/.well-known/oauth-protected-resource"' in challenge
    assert client.post("/api/v1/deals/1/lender-searches/", {}, content_type="application/json").status_code == 403


def test_a_key_without_lender_scopes_cannot_read_the_directory(user, account):
    key = key_with(user, account, {scopes.DEALS_READ})
    client = Client(headers={"Authorization": f"Bearer {key}"})
    refused = client.get("/api/v1/lenders/")
    assert refused.status_code == 403 and refused.json()["details"] == {"required_scope": "lenders:read"}
    assert tool_names(key) == {"list_deals", "get_deal", "list_deal_properties", "get_deal_financials", "get_account",
                               "get_pipeline", "get_deal_stage_history", "list_companies", "get_company",
                               "list_contacts", "summarize_deal", "list_notes", "get_deal_timeline",
                               "get_import", "list_imports", "list_deal_documents", "get_deal_document"}


def test_a_method_a_view_does_not_have_is_still_405(user, account):
    key = key_with(user, account, scopes.READ_ONLY_SCOPES)
    response = Client(headers={"Authorization": f"Bearer {key}"}).delete("/api/v1/lenders/")
    assert response.status_code == 405


# --- a read-only OAuth token ---------------------------------------------------------------------------
def test_read_only_token_sees_no_write_tool_and_gets_a_step_up_challenge(user):
    token = oauth_token(user, scopes.READ_ONLY_SCOPES)
    assert tool_names(token) == {spec.name for spec in TOOLS.values() if spec.annotations.readOnlyHint}
    response = call(token, "update_deal", {"deal_id": 1, "title": "Nope"})
    assert response.status_code == 403
    assert response["WWW-Authenticate"] == (
        'Bearer error="insufficient_scope", error_description="deals:write is needed for this tool", '
        'scope="deals:read deals:write lenders:read placements:read account:read", '
        'resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp"')
    # A client that does not step up still reads the contract's answer in the body.
    result = response.json()["result"]
    assert result["isError"] is True and result["structuredContent"]["code"] == "FORBIDDEN"
    assert result["structuredContent"]["details"]["required_scope"] == "deals:write"


def test_step_up_challenge_can_be_turned_off(user, settings):
    settings.LEV_OAUTH_STEP_UP_CHALLENGE = False
    token = oauth_token(user, {scopes.DEALS_READ})
    response = call(token, "search_lender_directory")
    assert response.status_code == 200
    payload = response.json()["result"]["structuredContent"]
    assert payload["code"] == "FORBIDDEN" and payload["details"]["required_scope"] == "lenders:read"


def test_token_scopes_apply_to_the_rest_api_too(user):
    token = oauth_token(user, {scopes.LENDERS_READ})
    client = Client(headers={"Authorization": f"Bearer {token}"})
    assert client.get("/api/v1/lenders/").status_code == 200
    refused = client.get("/api/v1/deals/")
    assert refused.status_code == 403 and refused.json()["details"] == {"required_scope": "deals:read"}


# --- credentials at /mcp ------------------------------------------------------------------------------
def test_no_credential_gets_the_discovery_challenge():
    response = mcp(None, "tools/list")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == (
        'Bearer scope="deals:read deals:write lenders:read searches:write placements:read placements:write '
        'account:read", '
        'resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp"')
    assert response.json()["code"] == "AUTH_ERROR"


@pytest.mark.parametrize("value", [
    "Bearer " + "a" * 10_000,
    "Bearer " + "é" * 20,
    "Bearer two words",
    "Bearer \x01\x02",
    "Bearer lev_sk_" + "x" * 600,
    "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.",
    "Bearer ",
])
def test_garbage_tokens_are_401_in_the_contract(value):
    for path in ("/mcp", "/api/v1/deals/"):
        response = Client().generic("POST" if path == "/mcp" else "GET", path, "{}", content_type="application/json",
                                    headers={**HEADERS, "Authorization": value})
        assert response.status_code == 401, (path, value[:20], response.content[:200])
        body = response.json()
        assert body["code"] == "AUTH_ERROR" and body["message"].startswith("Unauthorized:")
        assert "Traceback" not in response.content.decode()
        assert response["WWW-Authenticate"].startswith("Bearer ")


def test_tokens_in_the_query_string_are_never_read(user):
    token = oauth_token(user, scopes.ALL_SCOPES)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    response = Client().generic("POST", f"/mcp?access_token={token}", body, content_type="application/json",
                                headers=HEADERS)
    assert response.status_code == 401
    assert Client().get(f"/api/v1/deals/?access_token={token}").status_code == 401


# --- API keys get scopes -------------------------------------------------------------------------------
def test_keys_have_every_scope_unless_told_otherwise(user, account, api_key):
    assert ApiKey.objects.get().scope_set == scopes.ALL_SCOPES
    assert tool_names(api_key) == set(TOOLS)


@pytest.mark.parametrize(("args", "expected"), [
    ([], scopes.ALL_SCOPES),
    (["--read-only"], scopes.READ_ONLY_SCOPES),
    (["--scopes", "deals:read,lenders:read"], {"deals:read", "lenders:read"}),
    (["--scopes", "deals:read searches:write"], {"deals:read", "searches:write"}),
])
def test_create_api_key_with_scopes(user, account, args, expected):
    out = StringIO()
    call_command("create_api_key", user.username, *args, stdout=out)
    raw = out.getvalue().strip()
    # Every key also has what every credential has (seeing who it is: get_account).
    assert ApiKey.objects.get().scope_set == frozenset(expected) | scopes.ALWAYS_GRANTED
    assert tool_names(raw) == {spec.name for spec in TOOLS.values() if spec.scope in expected} | {"get_account"}


@pytest.mark.parametrize("args", [["--scopes", "deals:delete"], ["--scopes", ""], ["--scopes", " , "]])
def test_create_api_key_refuses_unknown_or_no_scopes(user, account, args):
    with pytest.raises(CommandError, match="--scopes"):
        call_command("create_api_key", user.username, *args, stdout=StringIO())
    assert not ApiKey.objects.exists()


def test_admin_edits_a_keys_scopes(admin_client, user, account, api_key):
    key = ApiKey.objects.get()
    page = admin_client.get(f"/admin/accounts/apikey/{key.pk}/change/")
    assert page.status_code == 200 and b'value="placements:write"' in page.content
    response = admin_client.post(f"/admin/accounts/apikey/{key.pk}/change/", {
        "user": user.pk, "account": account.pk, "name": "narrowed", "scopes": ["deals:read", "lenders:read"]})
    assert response.status_code == 302, response.content[:500]
    key.refresh_from_db()
    assert key.scopes == "deals:read lenders:read"
    assert "create_deal" not in tool_names(api_key)
    # What every credential has is no box to untick: said in the help, and kept.
    assert b'value="account:read"' not in page.content and b"account:read" in page.content
    assert key.scope_set == {"deals:read", "lenders:read", "account:read"} and "get_account" in tool_names(api_key)
    assert admin_client.get("/admin/accounts/apikey/").status_code == 200
