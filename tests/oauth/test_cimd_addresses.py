"""Issue 19 item 6: a Client ID Metadata Document is fetched only from a globally routable unicast address,
checked on the address the socket connects to (after the one DNS lookup; redirects are never followed).

Real fetches through the real fetcher, with no traffic to anything but this machine: a Python audit hook
(`socket.connect`) records every connection attempted while a test watches, and refuses any to a
non-loopback address — so a guard that failed would make the test fail, never reach 192.0.0.192."""

from __future__ import annotations

import ipaddress
import sys
import threading

import pytest
from oauth2_provider.cimd import CIMDError
from oauth2_provider.models import get_application_model

from lev.oauth import cimd
from tests.faults import Listener
from tests.oauth.conftest import cimd_document
from tests.oauth.flow import Flow
from tests.oauth.tls import DocumentServer, Reply

pytestmark = pytest.mark.django_db

# (host as written in a URL) — each must be refused in production without a connection attempt.
NON_PUBLIC = [
    "192.0.0.192", "192.0.0.9", "224.0.0.1", "239.255.255.250", "0.0.0.0", "127.0.0.1", "127.1.2.3", "10.0.0.1",
    "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "198.18.0.1", "192.88.99.1", "192.0.2.1",
    "240.0.0.1", "255.255.255.255", "[::1]", "[::]", "[::ffff:127.0.0.1]", "[::ffff:169.254.169.254]",
    "[::ffff:192.0.0.192]", "[::127.0.0.1]", "[64:ff9b::a9fe:a9fe]", "[2002:a9fe:a9fe::1]", "[2001::1]",
    "[fc00::1]", "[fd00:ec2::254]", "[fe80::1]", "[fec0::1]", "[ff02::1]", "[2001:db8::1]", "[100::1]",
    "2130706433", "0x7f.1", "017700000001",  # 127.0.0.1 spelled as inet_aton reads it
]
PUBLIC = ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"]


class Connections:
    """Connections attempted while watching; any to a non-loopback address is refused by the hook itself."""

    def __init__(self):
        self.attempts: list[tuple] = []
        self.watching = False


_connections = Connections()
_hook_lock = threading.Lock()
_hook_installed = False


def _audit(event: str, args: tuple) -> None:
    if event != "socket.connect" or not _connections.watching:
        return
    address = args[1]
    if isinstance(address, tuple):
        _connections.attempts.append(address)
        host = str(address[0]).split("%")[0]
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise ConnectionRefusedError(f"test: no traffic to {host}")


@pytest.fixture
def connections():
    global _hook_installed
    with _hook_lock:
        if not _hook_installed:
            sys.addaudithook(_audit)
            _hook_installed = True
    _connections.attempts = []
    _connections.watching = True
    yield _connections
    _connections.watching = False


@pytest.fixture
def production(settings):
    settings.LEV_OAUTH_CIMD_ALLOW_LOOPBACK = False
    settings.LEV_OAUTH_CIMD_CA_FILE = ""




@pytest.mark.parametrize("host", NON_PUBLIC)
def test_non_public_addresses_are_refused_by_the_guard_before_any_connection(production, connections, host):
    with pytest.raises(cimd.NonPublicAddress):
        cimd.LevMetadataFetcher().fetch(f"https://{host}/client.json")
    assert connections.attempts == []


@pytest.mark.parametrize("host", ["192.0.0.192", "224.0.0.1", "[::ffff:127.0.0.1]", "100.64.0.1"])
def test_the_consent_page_refuses_such_a_client_without_connecting(production, connections, user, host):
    page = Flow(user=user, client_id=f"https://{host}/client.json").consent_page()
    assert page.status_code == 400 and b"Invalid client_id" in page.content
    assert not any(a[1] == 443 for a in connections.attempts), connections.attempts  # (the database's are fine)
    assert not get_application_model().objects.exists()


@pytest.mark.parametrize("address", PUBLIC)
def test_globally_routable_unicast_addresses_are_permitted(address):
    assert cimd.address_permitted(address)


def _ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return False


@pytest.mark.parametrize("address", [h.strip("[]") for h in NON_PUBLIC if _ip_literal(h)])
def test_the_address_table(address):
    assert not cimd.address_permitted(address)
    assert cimd.address_permitted(address, allow_loopback=True) == \
        (ipaddress.ip_address(address).is_loopback or address == "::ffff:127.0.0.1")


def test_a_name_that_resolves_to_loopback_is_refused_in_production(production, connections, user):
    listener = Listener()
    try:
        with pytest.raises(cimd.NonPublicAddress):
            cimd.LevMetadataFetcher().fetch(f"https://localhost:{listener.port}/client.json")
        page = Flow(user=user, client_id=f"https://localhost:{listener.port}/other.json").consent_page()
        assert page.status_code == 400
        assert not any(a[1] == listener.port for a in connections.attempts)
        assert listener.connections == 0
    finally:
        listener.close()


def test_the_guard_refuses_at_connect_time_on_the_resolved_address(connections):
    listener = Listener()
    try:
        with pytest.raises(cimd.NonPublicAddress):
            cimd.guarded_connection("localhost", listener.port, 2, allow_loopback=False)
        assert connections.attempts == [] and listener.connections == 0
        # The same call with loopback permitted (development) does connect: the guard, not the listener,
        # made the difference.
        cimd.guarded_connection("localhost", listener.port, 2, allow_loopback=True).close()
        assert [a[1] for a in connections.attempts][:1] == [listener.port]
    finally:
        listener.close()


@pytest.mark.parametrize("target", ["https://192.0.0.192/latest/meta-data/", "https://169.254.169.254/",
                                    "https://[::ffff:127.0.0.1]:{port}/x.json", "https://localhost:{port}/x.json"])
def test_a_redirect_is_never_followed(documents, connections, user, tmp_path, target):
    """From an allowed server (loopback, with the development setting) to anywhere, even this machine."""
    other = Listener()
    try:
        documents.replies["/agent.json"] = Reply(302, b"", {"Location": target.format(port=other.port)})
        with pytest.raises(CIMDError, match="HTTP 302"):
            cimd.LevMetadataFetcher().fetch(documents.url("/agent.json"))
        assert documents.requests == ["/agent.json"]
        assert {a[1] for a in connections.attempts if a[1] in (443, other.port)} == set()
        assert other.connections == 0
    finally:
        other.close()


def test_the_development_setting_still_fetches_from_this_machine(documents, connections, user):
    url = documents.publish("/agent.json", cimd_document(documents.url("/agent.json")))
    page = Flow(user=user, client_id=url).consent_page()
    assert page.status_code == 200 and b"Acme Agent" in page.content
    assert any(a[1] == documents.port for a in connections.attempts)


def test_the_development_setting_is_off_means_this_machine_is_refused(production, connections, tmp_path, user):
    server = DocumentServer(tmp_path)
    try:
        url = server.publish("/agent.json", cimd_document(server.url("/agent.json")))
        assert Flow(user=user, client_id=url).consent_page().status_code == 400
        assert server.requests == [] and not any(a[1] == server.port for a in connections.attempts)
    finally:
        server.close()
