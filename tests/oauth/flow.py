"""The OAuth authorization code flow driven in-process (Django's test client), for the authorization
server's tests; tests/oauth/test_sdk_e2e.py runs it with the official MCP client against a live server."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from django.test import Client
from oauth2_provider.models import get_application_model

REDIRECT_URI = "http://127.0.0.1:8765/callback"
MCP_RESOURCE = "http://testserver/mcp"


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def public_client(name: str = "Test Agent", redirect_uri: str = REDIRECT_URI):
    Application = get_application_model()
    return Application.objects.create(
        name=name, client_type=Application.CLIENT_PUBLIC, client_secret="",
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE, redirect_uris=redirect_uri,
    )


@dataclass
class Flow:
    """One person's browser (signed in) and one client's side of the flow."""

    user: object
    client_id: str
    redirect_uri: str = REDIRECT_URI
    browser: Client = field(default_factory=Client)
    verifier: str = ""
    state: str = ""

    def __post_init__(self):
        self.browser.force_login(self.user)

    def authorize_params(self, **overrides) -> dict[str, str]:
        self.verifier, challenge = pkce_pair()
        self.state = secrets.token_urlsafe(8)
        params = {"response_type": "code", "client_id": self.client_id, "redirect_uri": self.redirect_uri,
                  "code_challenge": challenge, "code_challenge_method": "S256", "state": self.state,
                  "scope": "deals:read deals:write lenders:read searches:write", "resource": MCP_RESOURCE}
        params.update(overrides)
        return {k: v for k, v in params.items() if v is not None}

    def consent_page(self, **overrides):
        return self.browser.get("/oauth/authorize/", self.authorize_params(**overrides))

    def consent(self, page, *, allow: bool = True, scopes: list[str] | None = None, account=None):
        """Post the consent form of `page`: the hidden fields as rendered, the chosen scopes and account."""
        form = page.context["form"]
        data = {name: value for name, value in form.initial.items() if value is not None}
        chosen = scopes if scopes is not None else [name for name, _ in page.context["scope_choices"]]
        data["scope_choice"] = chosen
        memberships = page.context["memberships"]
        data["account"] = account if account is not None else (memberships[0].account_id if memberships else "")
        data["allow" if allow else "deny"] = "1"
        return self.browser.post("/oauth/authorize/", data)

    def code(self, **overrides) -> str:
        page = self.consent_page(**overrides)
        assert page.status_code == 200, page.content[:500]
        answer = self.consent(page)
        assert answer.status_code == 302, answer.content[:500]
        query = parse_qs(urlsplit(answer["Location"]).query)
        assert "code" in query, answer["Location"]
        assert query["state"] == [self.state]
        return query["code"][0]

    def exchange(self, code: str, **overrides):
        data = {"grant_type": "authorization_code", "code": code, "redirect_uri": self.redirect_uri,
                "client_id": self.client_id, "code_verifier": self.verifier, "resource": MCP_RESOURCE}
        data.update(overrides)
        return Client().post("/oauth/token/", {k: v for k, v in data.items() if v is not None})

    def tokens(self, **overrides) -> dict:
        response = self.exchange(self.code(**overrides))
        assert response.status_code == 200, response.content
        return response.json()

    def refresh(self, refresh_token: str, **overrides):
        data = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": self.client_id}
        data.update(overrides)
        return Client().post("/oauth/token/", {k: v for k, v in data.items() if v is not None})
