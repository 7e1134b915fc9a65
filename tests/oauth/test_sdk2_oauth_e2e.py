"""The official MCP Python SDK 2.x client over OAuth against a live /mcp (issue 21, "Real clients, both eras").

Its OAuthClientProvider discovers the metadata from /mcp's 401, registers (a Client ID Metadata Document,
or Dynamic Client Registration), runs the authorization code flow with PKCE, and then speaks the era it
negotiates: 2026-07-28 in its default "auto" mode, 2025-11-25 when it does the initialize handshake. It
runs in the 2.x venv (tests/oauth/sdk2_oauth_client.py); the person at the browser is
tests/oauth/test_sdk_e2e.py's Person, here in the test process, answering the script over its stdio.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from oauth2_provider.models import get_application_model

from tests.factories import DealFactory
from tests.mcp_tools.test_sdk2_client import SDK2_VERSION, sdk2_python
from tests.oauth.conftest import cimd_document
from tests.oauth.test_sdk_e2e import Person, person_user  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SCRIPT = Path(__file__).with_name("sdk2_oauth_client.py")


async def run_client(server_url: str, person: Person, mode: str, deal_id: int, metadata_url: str | None) -> dict:
    """Run the 2.x client script; open each authorization URL it asks for as `person` and hand it the redirect."""
    await person.sign_in()
    args = [str(sdk2_python()), str(SCRIPT), server_url, mode, str(deal_id)] + ([metadata_url] if metadata_url else [])
    proc = await asyncio.create_subprocess_exec(*args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    try:
        async with asyncio.timeout(120):
            while line := await proc.stdout.readline():
                message = json.loads(line)
                if "result" in message:
                    await proc.wait()
                    return message["result"]
                await person.redirect_handler(message["authorize"])
                code, state = await person.callback_handler()
                proc.stdin.write(json.dumps({"code": code, "state": state, "iss": person.issuer}).encode() + b"\n")
                await proc.stdin.drain()
            await proc.wait()
            raise AssertionError(f"the client exited {proc.returncode}: {(await proc.stderr.read()).decode()[-3000:]}")
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await person.http.aclose()


@pytest.mark.parametrize(("mode", "registration", "negotiated"), [
    ("auto", "cimd", "2026-07-28"),
    ("legacy", "dcr", "2025-11-25"),
])
def test_the_2x_client_connects_by_oauth_and_speaks_the_era_it_negotiates(live_server, person_user, account, documents,  # noqa: F811
                                                                          mode, registration, negotiated):
    deal = DealFactory(account=account, title="Harbor Point")
    metadata_url = None
    if registration == "cimd":
        metadata_url = documents.publish("/agent2/client.json", cimd_document(documents.url("/agent2/client.json"),
                                                                              name="Acme Agent 2 (CIMD)"))
    person = Person(live_server.url, person_user.username)

    report = asyncio.run(run_client(f"{live_server.url}/mcp", person, mode, deal.id, metadata_url))

    assert report["sdk"] == SDK2_VERSION
    assert report["protocol_version"] == negotiated
    assert {"get_deal", "list_deals", "create_deal", "archive_deal"} <= set(report["tools"])
    assert report["get_deal"]["isError"] is False
    got = report["get_deal"]["structuredContent"]["deal"]
    assert got["id"] == deal.id and got["title"] == "Harbor Point"
    assert "deals:read" in report["scope"].split()
    # One consent, for the client as registered; the authorization request named the resource, with PKCE.
    assert len(person.consents) == 1
    assert person.issuer == live_server.url  # RFC 9207: the 2.x client refuses a redirect without it
    consent = person.consents[0]
    query = parse_qs(urlsplit(consent["url"]).query)
    assert query["resource"] == [f"{live_server.url}/mcp"] and query["code_challenge_method"] == ["S256"]
    app = get_application_model().objects.get(client_id=query["client_id"][0])
    assert app.registration_source == registration
    assert consent["client_name"] == ("Acme Agent 2 (CIMD)" if registration == "cimd" else "Acme Agent 2")
