"""Acceptance (issue #14): the official MCP Python SDK's OAuth client provider against a live server.

It discovers the metadata from /mcp's 401, registers (a Client ID Metadata Document served over https,
and separately Dynamic Client Registration), runs the authorization code flow with PKCE (the test signs
a person in and posts the consent form in the SDK's redirect handler), calls tools, refreshes the token,
steps up to a scope it lacked, and is refused once the person disconnects the app.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from asgiref.sync import sync_to_async
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from oauth2_provider.models import get_application_model, get_refresh_token_model

from lev.oauth.models import OAuthAuthorization
from tests.factories import DealFactory
from tests.oauth.conftest import cimd_document

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

PASSWORD = "correct horse battery staple 9"
CALLBACK = "http://127.0.0.1:8765/callback"
WRITE_SCOPES = {"deals:write", "searches:write", "placements:write"}


class FormReader(HTMLParser):
    """The consent form's fields as a browser would post them (hidden inputs, ticked boxes, the account)."""

    def __init__(self):
        super().__init__()
        self.fields: list[tuple[str, str]] = []
        self.client_name = ""
        self._select: str | None = None
        self._in_strong = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "input" and a.get("name") and (a.get("type") != "checkbox" or "checked" in a):
            self.fields.append((a["name"], a.get("value", "")))
        elif tag == "select":
            self._select = a.get("name")
        elif tag == "option" and self._select and a.get("value"):
            self.fields.append((self._select, a["value"]))
            self._select = None
        elif tag == "strong" and not self.client_name:
            self._in_strong = True

    def handle_data(self, data):
        if self._in_strong:
            self.client_name, self._in_strong = data.strip(), False


class Person:
    """The person at the browser: signed in to the site, answering consent pages."""

    def __init__(self, base_url: str, username: str):
        self.http = httpx.AsyncClient(base_url=base_url, timeout=30)
        self.username = username
        self.allow = True
        self.untick: set[str] = set()
        self.consents: list[dict] = []
        self._answer: tuple[str, str | None] | None = None
        self.issuer: str | None = None  # the redirect's RFC 9207 `iss` (the 1.x SDK ignores it, 2.x checks it)

    async def sign_in(self) -> None:
        page = await self.http.get("/accounts/login/")
        token = page.cookies["csrftoken"]
        answer = await self.http.post("/accounts/login/", data={
            "username": self.username, "password": PASSWORD, "csrfmiddlewaretoken": token, "next": "/"})
        assert answer.status_code == 302, answer.text[:300]

    async def redirect_handler(self, authorization_url: str) -> None:
        page = await self.http.get(authorization_url)
        assert page.status_code == 200, page.text[:500]
        form = FormReader()
        form.feed(page.text)
        fields = [(k, v) for k, v in form.fields if not (k == "scope_choice" and v in self.untick)]
        self.consents.append({"client_name": form.client_name, "url": authorization_url,
                              "scopes": [v for k, v in fields if k == "scope_choice"]})
        fields.append(("allow", "1") if self.allow else ("deny", "1"))
        data: dict[str, list[str]] = {}
        for key, value in fields:
            data.setdefault(key, []).append(value)
        answer = await self.http.post("/oauth/authorize/", data=data,
                                      headers={"X-CSRFToken": self.http.cookies["csrftoken"]})
        assert answer.status_code == 302, answer.text[:500]
        query = parse_qs(urlsplit(answer.headers["Location"]).query)
        if "code" not in query:
            raise RuntimeError(f"authorization refused: {query.get('error')}")
        self._answer = (query["code"][0], query.get("state", [None])[0])
        self.issuer = query.get("iss", [None])[0]

    async def callback_handler(self) -> tuple[str, str | None]:
        answer, self._answer = self._answer, None
        assert answer is not None
        return answer

    async def disconnect_all(self) -> int:
        """Press every Disconnect button of the connected-apps page; how many there were."""
        page = await self.http.get("/oauth/connected-apps/")
        assert page.status_code == 200
        buttons = re.findall(r'name="revoke" value="(\d+)"', page.text)
        for value in buttons:
            answer = await self.http.post("/oauth/connected-apps/", data={"revoke": value},
                                          headers={"X-CSRFToken": self.http.cookies["csrftoken"]})
            assert answer.status_code == 302
        return len(buttons)


class MemoryStorage:
    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


def provider(server_url: str, person: Person, storage: MemoryStorage, metadata_url: str | None = None):
    return OAuthClientProvider(
        server_url=server_url,
        client_metadata=OAuthClientMetadata(
            client_name="Acme Agent", redirect_uris=[CALLBACK], grant_types=["authorization_code", "refresh_token"],
            response_types=["code"], token_endpoint_auth_method="none"),
        storage=storage, redirect_handler=person.redirect_handler, callback_handler=person.callback_handler,
        client_metadata_url=metadata_url,
    )


async def session_do(server_url: str, auth: OAuthClientProvider, fn):
    async with (
        httpx.AsyncClient(auth=auth, timeout=30) as http,
        streamable_http_client(server_url, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        # The 1.x client speaks the handshake era only: it asks for its newest, 2025-11-25, and gets it.
        assert (await session.initialize()).protocolVersion == "2025-11-25"
        return await fn(session)


def describe(error: BaseException) -> str:
    """An exception with the exceptions it groups or was raised from (the SDK raises inside task groups)."""
    parts = [repr(error)]
    for inner in getattr(error, "exceptions", ()):
        parts.append(describe(inner))
    if error.__cause__ is not None:
        parts.append(describe(error.__cause__))
    return " | ".join(parts)


def payload(result) -> dict:
    return json.loads(result.content[0].text)


@pytest.fixture
def person_user(user):
    user.set_password(PASSWORD)
    user.save()
    return user


def test_cimd_client_connects_by_url_refreshes_and_is_refused_after_revocation(live_server, person_user, account,
                                                                               documents):
    DealFactory(account=account, title="Harbor Point")
    metadata_url = documents.publish("/agent/client.json", cimd_document(documents.url("/agent/client.json"),
                                                                         name="Acme Agent (CIMD)"))
    server_url = f"{live_server.url}/mcp"
    person = Person(live_server.url, person_user.username)
    storage = MemoryStorage()
    auth = provider(server_url, person, storage, metadata_url)

    async def scenario():
        await person.sign_in()

        async def first(session):
            tools = {t.name for t in (await session.list_tools()).tools}
            deals = payload(await session.call_tool("list_deals", {}))
            return tools, deals

        tools, deals = await session_do(server_url, auth, first)
        assert {"list_deals", "create_deal"} <= tools
        assert [d["title"] for d in deals["deals"]] == ["Harbor Point"]

        # The client was never registered: the server fetched its document and showed its name.
        assert documents.requests == ["/agent/client.json"]
        assert person.consents[0]["client_name"] == "Acme Agent (CIMD)"
        app = await sync_to_async(get_application_model().objects.get)(client_id=metadata_url)
        assert app.registration_source == "cimd"
        assert "resource=" in person.consents[0]["url"] and "code_challenge_method=S256" in person.consents[0]["url"]

        # The access token expires: the SDK refreshes it; the refresh token rotates.
        first_tokens = storage.tokens
        auth.context.token_expiry_time = time.time() - 1
        created = await session_do(server_url, auth, lambda s: s.call_tool("create_deal", {"title": "Via OAuth"}))
        assert not created.isError, payload(created)
        assert storage.tokens.access_token != first_tokens.access_token
        assert storage.tokens.refresh_token != first_tokens.refresh_token
        assert len(person.consents) == 1  # refreshed, not asked again

        # The person disconnects the app: the tokens stop working at once, the refresh token too.
        assert await person.disconnect_all() == 1
        headers = {"Authorization": f"Bearer {storage.tokens.access_token}", "Accept": "application/json",
                   "Content-Type": "application/json"}
        refused = await person.http.post("/mcp", headers=headers,
                                         content=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
        assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["WWW-Authenticate"]
        renewed = await person.http.post("/oauth/token/", data={
            "grant_type": "refresh_token", "refresh_token": storage.tokens.refresh_token, "client_id": metadata_url})
        assert renewed.status_code == 400 and renewed.json()["error"] == "invalid_grant"

        # The SDK, refused, starts over; the person denies this time, so the call fails.
        person.allow = False
        with pytest.raises(BaseException) as refused_again:
            await session_do(server_url, auth, lambda s: s.call_tool("list_deals", {}))
        assert "access_denied" in describe(refused_again.value), describe(refused_again.value)
        await person.http.aclose()

    asyncio.run(scenario())
    assert not get_refresh_token_model().objects.filter(revoked__isnull=True).exists()


def test_dcr_client_registers_and_steps_up_to_a_write_scope(live_server, person_user, account):
    server_url = f"{live_server.url}/mcp"
    person = Person(live_server.url, person_user.username)
    storage = MemoryStorage()
    auth = provider(server_url, person, storage)  # no metadata URL: Dynamic Client Registration
    person.untick = WRITE_SCOPES  # the person allows reading only

    async def scenario():
        await person.sign_in()
        tools = await session_do(server_url, auth, lambda s: s.list_tools())
        names = {t.name for t in tools.tools}
        assert "list_deals" in names and "get_lender" in names
        assert not {"create_deal", "update_deal", "archive_deal", "search_lenders_for_deal"} & names
        assert all(t.annotations.readOnlyHint for t in tools.tools)

        # A write tool anyway: 403 insufficient_scope; the SDK asks the person again for the scope named
        # in the challenge, who now allows it, and the call goes through.
        person.untick = set()
        created = await session_do(server_url, auth, lambda s: s.call_tool("create_deal", {"title": "Stepped up"}))
        assert not created.isError, payload(created)
        assert len(person.consents) == 2
        assert "deals:write" in person.consents[1]["scopes"]
        await person.http.aclose()

    asyncio.run(scenario())
    app = get_application_model().objects.get(client_id=storage.client.client_id)
    assert app.registration_source == "dcr" and app.name == "Acme Agent"
    assert set(OAuthAuthorization.objects.order_by("-pk").first().scope.split()) >= {"deals:read", "deals:write"}
