"""The authorization server: metadata, the code flow's rules and refusals, consent for one account,
connected apps, registration (RFC 7591) and client metadata documents. In-process (Django's client);
the official MCP client runs the same flow against a live server in test_sdk_e2e.py."""

from __future__ import annotations

import datetime as dt
import json
import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model

from lev.accounts.models import Membership
from lev.oauth.models import OAuthAuthorization
from tests.factories import AccountFactory, DealFactory, MembershipFactory, UserFactory
from tests.faults import Listener
from tests.lev.test_settings import STRONG_KEY, run_manage
from tests.oauth.conftest import cimd_document
from tests.oauth.flow import MCP_RESOURCE, REDIRECT_URI, Flow, public_client
from tests.oauth.tls import Reply

pytestmark = pytest.mark.django_db

AccessToken = get_access_token_model()
RefreshToken = get_refresh_token_model()


def bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def redirect_query(response) -> dict[str, list[str]]:
    assert response.status_code == 302, response.content[:300]
    location = response["Location"]
    assert location.startswith(REDIRECT_URI), location
    return parse_qs(urlsplit(location).query)


@pytest.fixture
def app(db):
    return public_client()


@pytest.fixture
def flow(user, app):
    return Flow(user=user, client_id=app.client_id)


# --- metadata -----------------------------------------------------------------------------------
def test_authorization_server_metadata_advertises_what_the_server_does(client):
    meta = client.get("/.well-known/oauth-authorization-server").json()
    assert meta["issuer"] == "http://testserver"
    assert meta["authorization_endpoint"] == "http://testserver/oauth/authorize/"
    assert meta["token_endpoint"] == "http://testserver/oauth/token/"
    assert meta["registration_endpoint"] == "http://testserver/oauth/register/"
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["client_id_metadata_document_supported"] is True
    assert meta["response_types_supported"] == ["code"]
    assert meta["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert set(meta["scopes_supported"]) == {"deals:read", "deals:write", "lenders:read", "searches:write",
                                             "placements:read", "placements:write", "account:read"}
    assert "none" in meta["token_endpoint_auth_methods_supported"]


@pytest.mark.parametrize(("path", "resource"), [
    ("/.well-known/oauth-protected-resource/mcp", "http://testserver/mcp"),
    ("/.well-known/oauth-protected-resource", "http://testserver"),
])
def test_protected_resource_metadata_names_the_resource_its_server_and_scopes(client, path, resource):
    meta = client.get(path).json()
    assert meta["resource"] == resource
    assert meta["authorization_servers"] == ["http://testserver"]
    assert meta["scopes_supported"][:2] == ["deals:read", "deals:write"]
    assert meta["bearer_methods_supported"] == ["header"]


def test_metadata_uses_the_configured_public_address(client, settings):
    settings.LEV_PUBLIC_URL = "https://lev.example.com"
    meta = client.get("/.well-known/oauth-protected-resource/mcp").json()
    assert meta["resource"] == "https://lev.example.com/mcp"
    assert meta["authorization_servers"] == ["https://lev.example.com"]


# --- the code flow ------------------------------------------------------------------------------
def test_code_flow_issues_short_lived_tokens_bound_to_mcp_for_the_chosen_account(flow, account, client):
    DealFactory(account=account, title="Ours")
    DealFactory(title="Someone else's")
    tokens = flow.tokens()
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 3600
    assert tokens["scope"] == "deals:read deals:write lenders:read searches:write"
    stored = AccessToken.objects.get()
    assert stored.resource == [MCP_RESOURCE]
    assert stored.token == ""  # only the digest is stored (RFC 9700 token storage)
    authorization = OAuthAuthorization.objects.get()
    assert authorization.account == account and authorization.grant is None
    assert authorization.token_family == RefreshToken.objects.get().token_family
    deals = client.get("/api/v1/deals/", **bearer(tokens["access_token"])).json()
    assert [d["title"] for d in deals["results"]] == ["Ours"]


def test_a_client_that_names_no_resource_gets_a_token_for_mcp(flow):
    flow.tokens(resource=None)
    assert AccessToken.objects.get().resource == [MCP_RESOURCE]


def test_a_resource_of_another_server_is_invalid_target(flow):
    query = redirect_query(flow.consent_page(resource="https://evil.example/mcp"))
    assert query["error"] == ["invalid_target"] and query["state"] == [flow.state]
    assert not OAuthAuthorization.objects.exists()


def test_a_token_request_for_another_resource_than_the_codes_is_invalid_target(flow):
    response = flow.exchange(flow.code(), resource="http://testserver")
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert response.json()["error"] == "invalid_target"
    assert not AccessToken.objects.exists()


def test_plain_pkce_and_missing_pkce_are_refused_before_consent(flow):
    query = redirect_query(flow.consent_page(code_challenge="x" * 43, code_challenge_method="plain"))
    assert query["error"] == ["invalid_request"]
    query = redirect_query(flow.consent_page(code_challenge=None, code_challenge_method=None))
    assert query["error"] == ["invalid_request"]
    assert not OAuthAuthorization.objects.exists()


def test_wrong_code_verifier_is_refused(flow):
    response = flow.exchange(flow.code(), code_verifier="A" * 60)
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"
    assert not AccessToken.objects.exists()


@pytest.mark.parametrize("uri", [
    "http://127.0.0.1:8765/callback/",         # one character more
    "http://localhost:8765/callback",          # another host name for the same place
    "https://evil.example/callback",
    "http://127.0.0.1:8765/callback?x=1",
    "http://127.0.0.1:8765/Callback",
])
def test_a_redirect_uri_that_is_not_the_registered_one_gets_no_code(flow, uri):
    page = flow.consent_page(redirect_uri=uri)
    assert page.status_code == 400  # shown to the person, never sent to the unregistered address
    assert b"invalid_request" in page.content or b"Mismatching redirect URI" in page.content
    assert not page.has_header("Location")


def test_a_loopback_redirect_uri_may_name_any_port(flow):
    """The one exception to exact matching (RFC 8252 §7.3, OAuth 2.1): a native client listens on whatever
    port it gets, so a loopback IP address's port is not compared."""
    flow.redirect_uri = "http://127.0.0.1:9999/callback"
    assert flow.tokens()["access_token"]


def test_a_code_is_exchanged_once_only(flow):
    code = flow.code()
    assert flow.exchange(code).status_code == 200
    again = flow.exchange(code)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


def mcp_tools_list(token: str):
    return Client().post("/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
                         content_type="application/json", HTTP_ACCEPT="application/json, text/event-stream",
                         HTTP_MCP_PROTOCOL_VERSION="2025-06-18", **bearer(token))


def test_a_reused_code_revokes_the_tokens_of_its_first_exchange(flow, settings):
    """RFC 6749 §4.1.2: a code presented twice was copied, so what its first exchange issued is revoked —
    at once, although this process's credential cache had the access token as valid (issue 19 item 8)."""
    settings.LEV_AUTH_CACHE_SECONDS = 60
    code = flow.code()
    first = flow.exchange(code).json()
    assert mcp_tools_list(first["access_token"]).status_code == 200  # and now cached as valid
    again = flow.exchange(code)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    refused = mcp_tools_list(first["access_token"])
    assert refused.status_code == 401 and "invalid_token" in refused["WWW-Authenticate"]
    assert flow.refresh(first["refresh_token"]).json()["error"] == "invalid_grant"
    assert OAuthAuthorization.objects.get().revoked_at is not None


def test_a_reused_code_revokes_the_refreshed_tokens_too(flow):
    code = flow.code()
    first = flow.exchange(code).json()
    renewed = flow.refresh(first["refresh_token"]).json()
    assert flow.exchange(code).status_code == 400
    assert mcp_tools_list(renewed["access_token"]).status_code == 401
    assert flow.refresh(renewed["refresh_token"]).status_code == 400


def test_an_unknown_or_other_clients_code_revokes_nothing(flow, user):
    code = flow.code()
    tokens = flow.exchange(code).json()
    other = Flow(user=user, client_id=public_client(name="Other").client_id)
    assert other.exchange(code, code_verifier=flow.verifier).status_code == 400  # another client presents it
    assert flow.exchange("never-issued").status_code == 400
    assert mcp_tools_list(tokens["access_token"]).status_code == 200


def test_refresh_rotates_and_a_reused_refresh_token_revokes_the_family(flow, client):
    first = flow.tokens()
    renewed = flow.refresh(first["refresh_token"])
    assert renewed.status_code == 200
    second = renewed.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert client.get("/api/v1/deals/", **bearer(first["access_token"])).status_code == 401
    assert client.get("/api/v1/deals/", **bearer(second["access_token"])).status_code == 200
    # The old refresh token again (stolen?): refused, and the whole family with it (RFC 9700).
    replay = flow.refresh(first["refresh_token"])
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert client.get("/api/v1/deals/", **bearer(second["access_token"])).status_code == 401
    assert flow.refresh(second["refresh_token"]).status_code == 400


def test_refreshed_tokens_keep_the_account_and_scopes(flow, user, client):
    other = AccountFactory(name="Second Fund")
    MembershipFactory(account=other, user=user)
    DealFactory(account=other, title="In the second fund")
    page = flow.consent_page()
    answer = flow.consent(page, account=other.pk, scopes=["deals:read"])
    code = redirect_query(answer)["code"][0]
    tokens = flow.exchange(code).json()
    assert tokens["scope"] == "deals:read"
    renewed = flow.refresh(tokens["refresh_token"]).json()
    assert renewed["scope"] == "deals:read"
    deals = client.get("/api/v1/deals/", **bearer(renewed["access_token"])).json()
    assert [d["title"] for d in deals["results"]] == ["In the second fund"]


# --- consent ------------------------------------------------------------------------------------
def test_signing_in_comes_first(app):
    flow = Flow(user=UserFactory(), client_id=app.client_id)
    flow.browser.logout()
    page = flow.consent_page()
    assert page.status_code == 302 and page["Location"].startswith("/accounts/login/?next=/oauth/authorize/")
    login = Client().get("/accounts/login/")
    assert login.status_code == 200 and b"Sign in to Lev" in login.content
    assert b"<script" not in login.content and b"<link" not in login.content


def test_consent_page_names_the_client_the_scopes_and_the_accounts(flow, user, account):
    MembershipFactory(account=AccountFactory(name="Second Fund"), user=user, role=Membership.Role.VIEWER)
    page = flow.consent_page()
    html = unescape(page.content.decode())
    assert page.status_code == 200
    assert "Test Agent" in html and "127.0.0.1" in html
    for text in ("See your account's deals", "Create, change and archive", "Start lender searches"):
        assert text in html
    assert "placements:write" not in html  # not asked for, not shown
    assert '<select id="account" name="account" required>' in html
    assert "Acme Capital" in html and "Second Fund (viewer)" in html
    assert "<script" not in html and "<link" not in html and "<img" not in html and "@import" not in html


def test_deny_sends_access_denied_and_grants_nothing(flow):
    query = redirect_query(flow.consent(flow.consent_page(), allow=False))
    assert query["error"] == ["access_denied"] and "code" not in query
    assert not OAuthAuthorization.objects.exists()


def test_an_account_the_person_is_not_in_is_refused(flow):
    stranger = AccountFactory(name="Not mine")
    answer = flow.consent(flow.consent_page(), account=stranger.pk)
    assert answer.status_code == 400 and b"Choose one of your accounts" in answer.content
    assert not OAuthAuthorization.objects.exists()


def test_allowing_nothing_is_refused(flow):
    answer = flow.consent(flow.consent_page(), scopes=[])
    assert answer.status_code == 400 and b"at least one permission" in answer.content


def test_scopes_the_client_did_not_ask_for_cannot_be_added_at_consent(flow):
    page = flow.consent_page(scope="deals:read")
    code = redirect_query(flow.consent(page, scopes=["deals:read", "deals:write"]))["code"][0]
    assert flow.exchange(code).json()["scope"] == "deals:read"


def test_a_person_in_no_account_cannot_allow(app):
    flow = Flow(user=UserFactory(), client_id=app.client_id)
    page = flow.consent_page()
    assert b"not a member of any account" in page.content and b'name="allow"' not in page.content
    answer = flow.consent(page)
    assert answer.status_code == 400


# --- tokens at the resource -----------------------------------------------------------------------
def test_expired_token_is_refused_as_a_session_that_expired(flow, client):
    tokens = flow.tokens()
    AccessToken.objects.update(expires=timezone.now() - dt.timedelta(seconds=1))
    response = client.get("/api/v1/deals/", **bearer(tokens["access_token"]))
    assert response.status_code == 401
    assert response.json()["message"] == "Unauthorized: your session has expired. Please sign in again."


def test_token_for_another_audience_is_refused(flow, client):
    tokens = flow.tokens()
    AccessToken.objects.update(resource=["https://other.example/mcp"])
    response = client.get("/api/v1/deals/", **bearer(tokens["access_token"]))
    assert response.status_code == 401 and "another resource" in response.json()["message"]
    AccessToken.objects.update(resource=[])  # bound to nothing is bound to no one here either
    assert client.get("/api/v1/deals/", **bearer(tokens["access_token"])).status_code == 401


def test_registration_access_tokens_are_no_access_tokens_here(client):
    registered = client.post("/oauth/register/", json.dumps({"redirect_uris": [REDIRECT_URI],
                                                             "token_endpoint_auth_method": "none"}),
                             content_type="application/json").json()
    response = client.get("/api/v1/deals/", **bearer(registered["registration_access_token"]))
    assert response.status_code == 401


def test_a_member_who_left_the_account_loses_access(flow, user, account, client):
    tokens = flow.tokens()
    Membership.objects.filter(user=user, account=account).delete()
    response = client.get("/api/v1/deals/", **bearer(tokens["access_token"]))
    assert response.status_code == 403 and response.json()["code"] == "FORBIDDEN"


# --- connected apps -------------------------------------------------------------------------------
def test_connected_apps_lists_and_revokes_a_grant(flow, user, client):
    tokens = flow.tokens()
    page = flow.browser.get("/oauth/connected-apps/")
    html = unescape(page.content.decode())
    assert "Test Agent" in html and "Acme Capital" in html and "See your account's deals" in html
    authorization = OAuthAuthorization.objects.get()
    answer = flow.browser.post("/oauth/connected-apps/", {"revoke": str(authorization.pk)})
    assert answer.status_code == 302
    assert client.get("/api/v1/deals/", **bearer(tokens["access_token"])).status_code == 401
    assert flow.refresh(tokens["refresh_token"]).status_code == 400
    assert "Test Agent" not in flow.browser.get("/oauth/connected-apps/").content.decode()
    authorization.refresh_from_db()
    assert authorization.revoked_at is not None


def test_another_persons_grant_cannot_be_revoked(flow, app):
    flow.tokens()
    mallory = Flow(user=MembershipFactory(account=AccountFactory()).user, client_id=app.client_id)
    pk = OAuthAuthorization.objects.get().pk
    for value in (str(pk), "x", "9" * 40, ""):
        assert mallory.browser.post("/oauth/connected-apps/", {"revoke": value}).status_code == 404
    assert OAuthAuthorization.objects.get().revoked_at is None


def test_admin_revokes_a_grant(flow, client, admin_client):
    tokens = flow.tokens()
    authorization = OAuthAuthorization.objects.get()
    response = admin_client.post("/admin/oauth/oauthauthorization/", {
        "action": "revoke", "_selected_action": [authorization.pk]})
    assert response.status_code == 302
    assert client.get("/api/v1/deals/", **bearer(tokens["access_token"])).status_code == 401


# --- Dynamic Client Registration (RFC 7591) --------------------------------------------------------
def register(client, body, **extra):
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post("/oauth/register/", data, content_type="application/json", **extra)


def test_registration_creates_a_public_client_that_can_connect(client, user):
    response = register(client, {"client_name": "Claude", "redirect_uris": [REDIRECT_URI],
                                 "grant_types": ["authorization_code", "refresh_token"],
                                 "response_types": ["code"], "token_endpoint_auth_method": "none"})
    assert response.status_code == 201
    body = response.json()
    assert body["token_endpoint_auth_method"] == "none" and "client_secret" not in body
    app = get_application_model().objects.get(client_id=body["client_id"])
    assert app.registration_source == "dcr" and app.name == "Claude"
    assert Flow(user=user, client_id=body["client_id"]).tokens()["access_token"]


@pytest.mark.parametrize(("body", "error"), [
    (b"{not json", "invalid_client_metadata"),
    (b"[]", "invalid_client_metadata"),
    (b"[" * 5000 + b"]" * 5000, "invalid_client_metadata"),
    ({"redirect_uris": "http://127.0.0.1/cb"}, "invalid_redirect_uri"),
    ({"redirect_uris": []}, "invalid_redirect_uri"),
    ({"redirect_uris": [REDIRECT_URI] * 11}, "invalid_redirect_uri"),
    ({"redirect_uris": ["javascript:alert(1)"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["http://evil.example/cb"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["https://ok.example/cb#frag"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["https://user@ok.example/cb"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["https://ok.example/" + "a" * 3000]}, "invalid_redirect_uri"),
    ({"redirect_uris": [7]}, "invalid_redirect_uri"),
    ({"redirect_uris": [REDIRECT_URI], "client_name": "x" * 101}, "invalid_client_metadata"),
    ({"redirect_uris": [REDIRECT_URI], "client_name": {"a": 1}}, "invalid_client_metadata"),
    ({"redirect_uris": [REDIRECT_URI], "grant_types": ["client_credentials"]}, "invalid_client_metadata"),
    ({"redirect_uris": [REDIRECT_URI], "grant_types": ["implicit"]}, "invalid_client_metadata"),
    ({"redirect_uris": [REDIRECT_URI], "response_types": ["token"]}, "invalid_client_metadata"),
    ({"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"),
])
def test_bad_registrations_are_rfc7591_errors(client, body, error):
    response = register(client, body)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == error and response.json()["error_description"]
    assert not get_application_model().objects.exists()


def test_an_oversized_registration_is_refused_unread(client):
    response = register(client, {"redirect_uris": [REDIRECT_URI], "pad": "x" * 20_000})
    assert response.status_code == 413 and response.json()["error"] == "invalid_client_metadata"


def test_registration_is_rate_limited_per_address(client, settings):
    settings.LEV_OAUTH_REGISTRATION_RATE = "2/hour"
    body = {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}
    assert register(client, body).status_code == 201
    assert register(client, body).status_code == 201
    refused = register(client, body)
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert refused.json()["error"] == "rate_limited"
    assert register(client, body, REMOTE_ADDR="192.0.2.7").status_code == 201  # another address
    assert get_application_model().objects.count() == 3


# --- Client ID Metadata Documents ------------------------------------------------------------------
def test_a_client_metadata_document_registers_the_client_on_first_sight(user, documents):
    client_id = documents.publish("/agent.json", cimd_document(documents.url("/agent.json")))
    flow = Flow(user=user, client_id=client_id)
    page = flow.consent_page()
    assert page.status_code == 200 and b"Acme Agent" in page.content and b"localhost" in page.content
    assert flow.exchange(redirect_query(flow.consent(page))["code"][0]).status_code == 200
    assert get_application_model().objects.get(client_id=client_id).registration_source == "cimd"




@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "169.254.169.254", "10.0.0.1",
                                  "192.168.1.1", "[::ffff:127.0.0.1]", "0.0.0.0"])
def test_client_ids_at_private_addresses_are_never_fetched(user, host, settings):
    settings.LEV_OAUTH_CIMD_ALLOW_LOOPBACK = False  # production's setting
    listener = Listener()
    client_id = f"https://{host}:{listener.port}/client.json"
    page = Flow(user=user, client_id=client_id).consent_page()
    assert page.status_code == 400 and b"Invalid client_id" in page.content
    assert listener.connections == 0
    assert not get_application_model().objects.exists()
    listener.sock.close()


@pytest.mark.parametrize("client_id", [
    "http://localhost/client.json",           # not https
    "https://localhost",                      # no path
    "https://user@localhost/client.json",     # user information
    "https://localhost/client.json#x",        # fragment
    "https://" + "a" * 300 + ".example/c",    # longer than any client id
    "https://localhost/\x00",
])
def test_malformed_client_ids_are_unknown_clients(user, client_id, documents):
    page = Flow(user=user, client_id=client_id).consent_page()
    assert page.status_code == 400
    assert documents.requests == []


@pytest.mark.parametrize("reply", [
    Reply(302, b"", {"Location": "https://169.254.169.254/latest/meta-data/"}),  # redirects are not followed
    Reply(200, b"x" * 20_000),                                                    # oversized
    Reply(200, b"{not json"),
    Reply(200, b"<html></html>", {"Content-Type": "text/html"}),
    Reply(404, b"{}"),
])
def test_bad_client_metadata_documents_are_refused(user, documents, reply):
    documents.replies["/bad.json"] = reply
    page = Flow(user=user, client_id=documents.url("/bad.json")).consent_page()
    assert page.status_code == 400 and documents.requests == ["/bad.json"]
    assert not get_application_model().objects.exists()


@pytest.mark.parametrize("change", [
    {"client_id": "https://other.example/agent.json"},        # names another URL
    {"redirect_uris": ["http://evil.example/callback"]},      # not https, not loopback
    {"client_name": "x" * 500},
    {"token_endpoint_auth_method": "client_secret_basic"},   # documents are for public clients
])
def test_client_metadata_documents_meet_the_registration_rules(user, documents, change):
    url = documents.url("/agent.json")
    documents.publish("/agent.json", {**cimd_document(url), **change})
    page = Flow(user=user, client_id=url).consent_page()
    assert page.status_code == 400
    assert not get_application_model().objects.exists()


def test_a_document_redirect_uri_is_matched_exactly(user, documents):
    url = documents.publish("/agent.json", cimd_document(documents.url("/agent.json")))
    page = Flow(user=user, client_id=url, redirect_uri="http://127.0.0.1:8765/other").consent_page()
    assert page.status_code == 400 and not page.has_header("Location")


@pytest.mark.parametrize("host", ["169.254.169.254", "10.0.0.1", "172.16.0.1", "[fd00::1]", "[fe80::1]"])
def test_development_setting_allows_loopback_only(user, documents, host):
    """LEV_OAUTH_CIMD_ALLOW_LOOPBACK (on here) lets a document on this machine in, nothing else private."""
    page = Flow(user=user, client_id=f"https://{host}/client.json").consent_page()
    assert page.status_code == 400 and b"Invalid client_id" in page.content
    assert not get_application_model().objects.exists()


def test_loopback_documents_are_refused_in_production():
    result = run_manage("check", LEV_ENV="production", SECRET_KEY=STRONG_KEY, ALLOWED_HOSTS="lev.example.com",
                        LEV_OAUTH_CIMD_ALLOW_LOOPBACK="true")
    assert result.returncode != 0
    assert "LEV_OAUTH_CIMD_ALLOW_LOOPBACK is for local development only" in result.stderr


def test_a_tampered_consent_form_is_refused_with_a_page(flow):
    answer = flow.browser.post("/oauth/authorize/", {"allow": "1", "account": "1"})
    assert answer.status_code == 400 and b"incomplete" in answer.content
    assert not OAuthAuthorization.objects.exists()


@pytest.mark.parametrize("client_id", ["no-such-client", "https://agent.example/never-registered.json", "\u00e9"])
def test_a_consent_form_naming_an_unknown_client_is_refused_with_a_page(flow, client_id):
    # Found by the OAuth fuzz suite: the form was valid, the toolkit's lookup of the client was a 500.
    answer = flow.browser.post("/oauth/authorize/", {**flow.authorize_params(client_id=client_id), "allow": "1",
                                                     "account": "1", "scope_choice": ["deals:read"]})
    assert answer.status_code == 400 and b"not registered" in answer.content
    assert not OAuthAuthorization.objects.exists()


def test_approval_prompt_auto_still_asks_the_person(flow):
    flow.tokens()
    page = flow.consent_page(approval_prompt="auto")
    assert page.status_code == 200 and b'name="allow"' in page.content
    assert OAuthAuthorization.objects.count() == 1


def test_an_application_that_skips_consent_gets_the_only_account_or_nothing(flow, app, user, account):
    app.skip_authorization = True
    app.save()
    query = redirect_query(flow.consent_page())
    assert "code" in query and OAuthAuthorization.objects.get().account == account
    MembershipFactory(account=AccountFactory(), user=user)  # now two: which one is not for the app to say
    query = redirect_query(flow.consent_page())
    assert query["error"] == ["access_denied"] and OAuthAuthorization.objects.count() == 1


def test_an_app_connected_three_times_is_one_row_and_one_disconnect(flow, user, client):
    """A client that signs in again (or runs on a second machine) makes a grant each time: the person
    sees one connected app per app and account, and disconnecting it stops every one of its grants."""
    tokens = [flow.tokens() for _ in range(3)]
    assert OAuthAuthorization.objects.filter(revoked_at__isnull=True).count() == 3
    html = unescape(flow.browser.get("/oauth/connected-apps/").content.decode())
    assert html.count('name="revoke"') == 1 and html.count("Test Agent") == 1
    assert "connected 3 times" in html
    value = re.search(r'name="revoke" value="(\d+)"', html).group(1)
    assert flow.browser.post("/oauth/connected-apps/", {"revoke": value}).status_code == 302
    assert not OAuthAuthorization.objects.filter(revoked_at__isnull=True).exists()
    for issued in tokens:
        assert client.get("/api/v1/deals/", **bearer(issued["access_token"])).status_code == 401
        assert flow.refresh(issued["refresh_token"]).status_code == 400
    assert "Test Agent" not in flow.browser.get("/oauth/connected-apps/").content.decode()
