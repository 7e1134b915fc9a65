"""Issue 19 item 5: every way a client's metadata gets in (RFC 7591 registration, an RFC 7592 update, a
Client ID Metadata Document) meets the same rules, and what a client says about itself cannot disguise
itself on the consent page. On the real database (PostgreSQL in CI's first run: a NUL stored there was
a 500)."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import get_application_model

from lev import limits
from tests.oauth.conftest import cimd_document
from tests.oauth.flow import REDIRECT_URI, Flow, public_client

pytestmark = pytest.mark.django_db

Application = get_application_model()
GOOD = {"client_name": "Claude", "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        "token_endpoint_auth_method": "none"}
RLO = "\u202e"
BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f"]
CONTROLS = ["\x00", "\x01", "\x1b", "\x7f", "\x85", "\x9f", "\u2028"]


def register(client, body) -> object:
    data = body if isinstance(body, bytes) else json.dumps(body)
    return client.post("/oauth/register/", data, content_type="application/json")


@pytest.fixture
def registered(client):
    response = register(client, GOOD)
    assert response.status_code == 201, response.content
    return response.json()


def put(registered, body, token=None):
    data = body if isinstance(body, bytes) else json.dumps(body)
    path = registered["registration_client_uri"].removeprefix("http://testserver")
    return Client().put(path, data, content_type="application/json",
                        HTTP_AUTHORIZATION=f"Bearer {token or registered['registration_access_token']}")


# --- RFC 7592 updates ---------------------------------------------------------------------------------
HOSTILE_UPDATES = {
    "http redirect to another host": ({**GOOD, "redirect_uris": ["http://evil.example/cb"]}, 400,
                                      "invalid_redirect_uri"),
    "implicit grant": ({**GOOD, "grant_types": ["implicit"], "response_types": ["token"]}, 400,
                       "invalid_client_metadata"),
    "password grant": ({**GOOD, "grant_types": ["password"]}, 400, "invalid_client_metadata"),
    "client_credentials grant": ({**GOOD, "grant_types": ["client_credentials"]}, 400, "invalid_client_metadata"),
    "300 redirect URIs": ({**GOOD, "redirect_uris": [f"https://a.example/{i}" for i in range(300)]}, 400,
                          "invalid_redirect_uri"),
    "200 KB body": ({**GOOD, "client_uri": "https://a.example/" + "x" * 200_000}, 413, "invalid_client_metadata"),
    "NUL in client_name": ({**GOOD, "client_name": "Claude\x00"}, 400, "invalid_client_metadata"),
    "RLO in client_name": ({**GOOD, "client_name": f"Claude{RLO}exe.fdp"}, 400, "invalid_client_metadata"),
    "long client_name": ({**GOOD, "client_name": "x" * 101}, 400, "invalid_client_metadata"),
    "no redirect URI": ({**GOOD, "redirect_uris": []}, 400, "invalid_redirect_uri"),
    "javascript redirect": ({**GOOD, "redirect_uris": ["javascript:alert(1)"]}, 400, "invalid_redirect_uri"),
    "another client's id": ({**GOOD, "client_id": "someone-else"}, 400, "invalid_client_metadata"),
    "becomes confidential": ({**GOOD, "token_endpoint_auth_method": "client_secret_basic"}, 400,
                             "invalid_client_metadata"),
    "not an object": ([GOOD], 400, "invalid_client_metadata"),
}


@pytest.mark.parametrize("case", HOSTILE_UPDATES, ids=list(HOSTILE_UPDATES))
def test_an_update_meets_the_rules_of_a_registration(registered, case):
    body, status, error = HOSTILE_UPDATES[case]
    before = Application.objects.values().get(client_id=registered["client_id"])
    response = put(registered, body)
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"] == error and response.json()["error_description"]
    assert Application.objects.values().get(client_id=registered["client_id"]) == before


def test_a_lone_surrogate_is_refused_not_a_500(registered, client):
    body = json.dumps({**GOOD, "client_name": "X"}).replace('"X"', '"\\ud800"').encode()
    assert put(registered, body).status_code == 400
    assert register(client, body).status_code == 400


def test_a_valid_update_is_stored(registered, user):
    response = put(registered, {**GOOD, "client_name": "Claude 2", "redirect_uris": ["https://claude.example/cb"]})
    assert response.status_code == 200, response.content
    app = Application.objects.get(client_id=registered["client_id"])
    assert app.name == "Claude 2" and app.redirect_uris == "https://claude.example/cb"


def test_an_update_without_its_registration_token_is_refused(registered):
    assert put(registered, GOOD, token="not-the-token").status_code == 401
    assert put(registered, {**GOOD, "client_name": "\x00"}, token="not-the-token").status_code == 401


# --- registration: no control or bidirectional formatting character in any string ----------------------
@pytest.mark.parametrize("char", CONTROLS + BIDI, ids=[f"U+{ord(c):04X}" for c in CONTROLS + BIDI])
@pytest.mark.parametrize("where", ["client_name", "logo_uri", "scope", "software_id", "nested", "key", "redirect"])
def test_registration_refuses_control_and_bidi_characters_in_any_string(client, char, where):
    body = dict(GOOD)
    if where == "nested":
        body["jwks"] = {"keys": [{"kid": f"k{char}1"}]}
    elif where == "key":
        body[f"x{char}"] = "y"
    elif where == "redirect":
        body["redirect_uris"] = [f"https://a.example/cb{char}"]
    else:
        body[where] = f"value{char}value"
    response = register(client, body)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_client_metadata"
    assert not Application.objects.exists()


def test_registration_still_takes_names_in_any_script(client):
    for name in ["שלום Agent", "وكيل", "Agent 🤖", "Agent\u200d👩‍💻"]:  # right-to-left text and joiners are text
        assert register(client, {**GOOD, "client_name": name}).status_code == 201, name


def test_registration_body_and_redirect_uris_are_bounded(client):
    assert register(client, {**GOOD, "pad": "x" * limits.OAUTH_REGISTRATION_BODY_MAX_BYTES}).status_code == 413
    many = {**GOOD, "redirect_uris": [f"https://a.example/{i}" for i in range(limits.OAUTH_REDIRECT_URIS_MAX + 1)]}
    assert register(client, many).json()["error"] == "invalid_redirect_uri"
    assert not Application.objects.exists()


# --- the consent page ----------------------------------------------------------------------------------
def test_a_stored_bidi_name_is_shown_neutralised(user):
    """A name that got in before these rules (or an admin typed): shown without its formatting characters."""
    app = public_client(name=f"Trusted{RLO}exe.evil")
    page = Flow(user=user, client_id=app.client_id).consent_page()
    assert page.status_code == 200
    html = page.content.decode()
    assert not any(c in html for c in BIDI)
    assert "<bdi>Trustedexe.evil</bdi>" in html
    assert "<title>Connect Trustedexe.evil to Lev</title>" in html


def test_a_metadata_document_with_a_bidi_name_is_refused(user, documents):
    url = documents.url("/agent.json")
    documents.publish("/agent.json", cimd_document(url, name=f"Acme{RLO}tnegA"))
    page = Flow(user=user, client_id=url).consent_page()
    assert page.status_code == 400 and documents.requests == ["/agent.json"]
    assert RLO not in page.content.decode()
    assert not Application.objects.exists()


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\u2066"])
def test_a_metadata_document_with_control_characters_anywhere_is_refused(user, documents, char):
    url = documents.url("/agent.json")
    documents.publish("/agent.json", cimd_document(url, logo_uri=f"https://a.example/logo{char}.png"))
    assert Flow(user=user, client_id=url).consent_page().status_code == 400
    assert not Application.objects.exists()


def test_connected_apps_show_names_neutralised(user):
    app = public_client(name=f"Trusted{RLO}exe.evil")
    flow = Flow(user=user, client_id=app.client_id)
    flow.tokens()
    html = flow.browser.get("/oauth/connected-apps/").content.decode()
    assert "<bdi>Trustedexe.evil</bdi>" in html and RLO not in html


def test_a_stored_metadata_document_client_is_shown_neutralised(user):
    """A client known from its metadata document before these rules (its cached row is used as is)."""
    url = "https://agent.example/client.json"
    Application.objects.create(
        client_id=url, name=f"Acme{RLO}tnegA", client_type=Application.CLIENT_PUBLIC, client_secret="",
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE, redirect_uris=REDIRECT_URI,
        registration_source=Application.RegistrationSource.CIMD,
        cimd_expires_at=timezone.now() + dt.timedelta(hours=1),
    )
    page = Flow(user=user, client_id=url).consent_page()
    assert page.status_code == 200
    html = page.content.decode()
    assert "<bdi>AcmetnegA</bdi>" in html and "<bdi>agent.example</bdi>" in html
    assert not any(c in html for c in BIDI)


@pytest.mark.parametrize(("method", "path"), [("get", "/oauth/register/"), ("patch", "/oauth/register/x/"),
                                              ("post", "/oauth/register/x/")])
def test_other_methods_get_a_json_error(client, method, path):
    response = getattr(client, method)(path)
    assert response.status_code == 405 and response.json()["error"] == "invalid_request"
    assert response["Allow"]


def test_the_sign_in_page_names_the_app_that_asks(user, client):
    """Signed out, the consent page sends the person to sign in; that page says which app asks (its
    registered name, neutralised) before a password is typed, and nothing when it comes from elsewhere."""
    app = public_client(name="Claude\u202e Desktop")  # a right-to-left override is never shown
    flow = Flow(user=user, client_id=app.client_id)
    flow.browser.logout()
    sent = flow.consent_page()
    assert sent.status_code == 302 and sent["Location"].startswith("/accounts/login/?next=")
    page = flow.browser.get(sent["Location"]).content.decode()
    assert "<strong><bdi>Claude Desktop</bdi></strong> asks to connect to Lev" in page and "\u202e" not in page
    assert "<title>Sign in to Lev to connect Claude Desktop</title>" in page

    for other in ("/accounts/login/", "/accounts/login/?next=/admin/",
                  "/accounts/login/?next=/oauth/authorize/%3Fclient_id%3Dnobody",
                  "/accounts/login/?next=https://evil.example/oauth/authorize/%3Fclient_id%3D" + app.client_id):
        plain = client.get(other)
        assert plain.status_code == 200 and "asks to connect" not in plain.content.decode(), other
    cimd = client.get("/accounts/login/?next=/oauth/authorize/%3Fclient_id%3Dhttps://agent.example/client.json")
    assert "<strong><bdi>agent.example</bdi></strong> asks to connect" in cimd.content.decode()
