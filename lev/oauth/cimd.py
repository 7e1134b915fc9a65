"""Fetching Client ID Metadata Documents (a client_id that is an https URL to the client's metadata).

django-oauth-toolkit resolves such a client (`oauth2_provider.cimd`: the URL's form, the document's
`client_id`, a failure backoff per URL, a cap on fetches in flight); this fetcher does the fetch itself,
hardened against SSRF:

* **only globally routable unicast addresses** (`address_permitted`): ipaddress's `is_global`, and not
  multicast, reserved, unspecified, loopback, link-local or private, and not in `NON_PUBLIC_NETWORKS` (the
  IETF protocol assignments 192.0.0.0/24 — where cloud metadata services such as 192.0.0.192 live —,
  CGNAT, benchmarking, documentation, 6to4, Class E and broadcast, …), stated here rather than left to
  the Python version's tables; an IPv4-mapped or NAT64 IPv6 address is judged by the IPv4 it carries;
* **checked at connect time**, on the address the socket connects to (`GuardedHTTPSConnection`): the host
  is resolved once, every address it resolves to must be permitted (a mixed answer is refused whole), and
  each address is checked again immediately before `connect()` — there is no earlier lookup that DNS
  rebinding could answer differently;
* **no redirects** (a 3xx is refused, never followed), so no second address is ever connected to;
* https with the system's CAs, one deadline for the whole fetch (CIMD_FETCH_TIMEOUT_SECONDS), a size cap
  (CIMD_MAX_DOCUMENT_SIZE), JSON only, and the registration rules (`lev.oauth.registration`).

Development and tests may also fetch from this machine: with LEV_OAUTH_CIMD_ALLOW_LOOPBACK (refused in
production) loopback addresses are permitted too, still over https with the same limits, trusting
LEV_OAUTH_CIMD_CA_FILE (a local CA) besides the system's CAs. Every other non-public address stays refused.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time

import urllib3
from django.conf import settings
from oauth2_provider import cimd
from oauth2_provider.settings import oauth2_settings
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError

from lev.oauth.registration import client_metadata_problem

# Refused whatever ipaddress's tables say in this Python version (they have changed between patch releases).
NON_PUBLIC_NETWORKS = tuple(ipaddress.ip_network(network) for network in (
    "0.0.0.0/8",          # "this network"
    "10.0.0.0/8",         # private
    "100.64.0.0/10",      # shared address space (CGNAT)
    "127.0.0.0/8",        # loopback
    "169.254.0.0/16",     # link-local (169.254.169.254: cloud metadata)
    "172.16.0.0/12",      # private
    "192.0.0.0/24",       # IETF protocol assignments (192.0.0.192: cloud metadata)
    "192.0.2.0/24",       # documentation
    "192.88.99.0/24",     # 6to4 relay anycast (deprecated)
    "192.168.0.0/16",     # private
    "198.18.0.0/15",      # benchmarking
    "198.51.100.0/24",    # documentation
    "203.0.113.0/24",     # documentation
    "224.0.0.0/4",        # multicast
    "240.0.0.0/4",        # reserved (Class E), 255.255.255.255 broadcast
    "::/96",              # unspecified, loopback, IPv4-compatible (deprecated)
    "64:ff9b:1::/48",     # local-use IPv4/IPv6 translation
    "100::/64",           # discard-only
    "2001::/23",          # IETF protocol assignments (Teredo, ORCHID, benchmarking, …)
    "2001:db8::/32",      # documentation
    "2002::/16",          # 6to4 (embeds any IPv4)
    "3fff::/20",          # documentation
    "5f00::/16",          # segment routing SIDs
    "fc00::/7",           # unique local
    "fe80::/10",          # link-local
    "fec0::/10",          # site-local (deprecated)
    "ff00::/8",           # multicast
))
NAT64 = ipaddress.ip_network("64:ff9b::/96")


class NonPublicAddress(cimd.CIMDError):
    """The guard refused an address before any connection to it was attempted."""


def address_permitted(address: str, *, allow_loopback: bool = False) -> bool:
    """True only for a globally routable unicast address (or, with `allow_loopback`, a loopback one)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if allow_loopback and ip.is_loopback:
        return True
    if isinstance(ip, ipaddress.IPv6Address) and ip in NAT64:  # judged by the IPv4 the gateway connects to
        ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if (not ip.is_global or ip.is_multicast or ip.is_reserved or ip.is_unspecified or ip.is_loopback
            or ip.is_link_local or ip.is_private):
        return False
    return not any(ip in network for network in NON_PUBLIC_NETWORKS if network.version == ip.version)


def guarded_connection(host: str, port: int, timeout: float, *, allow_loopback: bool) -> socket.socket:
    """A TCP connection to `host`, made only to permitted addresses (NonPublicAddress otherwise, before any
    connect). One lookup; every address it gives must be permitted; each is checked again as it is
    connected to. `timeout` bounds all attempts together."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    if not infos:
        raise NonPublicAddress("client_id host did not resolve to any address")
    for *_, sockaddr in infos:
        if not address_permitted(sockaddr[0], allow_loopback=allow_loopback):
            raise NonPublicAddress(f"client_id host resolves to a non-public address ({sockaddr[0]})")
    deadline = time.monotonic() + timeout
    error: OSError = TimeoutError("timed out")
    for family, socktype, proto, _, sockaddr in infos:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        if not address_permitted(sockaddr[0], allow_loopback=allow_loopback):  # the address connect() gets
            raise NonPublicAddress(f"refused to connect to a non-public address ({sockaddr[0]})")
        sock = socket.socket(family, socktype, proto)
        try:
            sock.settimeout(remaining)
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            sock.close()
            error = exc
        except BaseException:
            sock.close()
            raise
    raise error


class GuardedHTTPSConnection(urllib3.connection.HTTPSConnection):
    """urllib3's https connection whose socket is made by `guarded_connection` (SNI, certificate checks and
    the Host header keep the URL's host name)."""

    def _new_conn(self) -> socket.socket:
        timeout = self.timeout if isinstance(self.timeout, (int, float)) else \
            oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        try:
            return guarded_connection(self._dns_host, self.port, timeout,
                                      allow_loopback=settings.LEV_OAUTH_CIMD_ALLOW_LOOPBACK)
        except socket.gaierror as exc:
            raise NameResolutionError(self.host, self, exc) from exc
        except TimeoutError as exc:
            raise ConnectTimeoutError(self, f"Connection to {self.host} timed out.") from exc
        except OSError as exc:
            raise NewConnectionError(self, f"Failed to establish a new connection: {exc}") from exc


class GuardedHTTPSConnectionPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = GuardedHTTPSConnection


class LevMetadataFetcher(cimd.SafeMetadataFetcher):
    def fetch(self, client_id):
        document, max_age = self._fetch(client_id)
        # The same bounds as a registration (the consent page shows the name; the URIs are stored).
        problem = client_metadata_problem({"token_endpoint_auth_method": "none", **document})
        if problem:
            raise cimd.CIMDError(f"client metadata refused: {problem}")
        return document, max_age

    def _fetch(self, client_id):
        parsed = cimd._validate_client_id_url(client_id)
        timeout = oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        context = ssl.create_default_context()
        if settings.LEV_OAUTH_CIMD_ALLOW_LOOPBACK and settings.LEV_OAUTH_CIMD_CA_FILE:
            context.load_verify_locations(cafile=settings.LEV_OAUTH_CIMD_CA_FILE)
        pool = GuardedHTTPSConnectionPool(
            host=parsed.hostname, port=parsed.port or 443, ssl_context=context, retries=False, maxsize=1,
            timeout=urllib3.Timeout(connect=timeout, read=timeout, total=timeout),
        )
        path = parsed.path + (f"?{parsed.query}" if parsed.query else "")
        try:
            response = pool.urlopen("GET", path, headers={"Accept": "application/json, application/*+json"},
                                    redirect=False, preload_content=False)
            try:
                return self._read_document(response)
            finally:
                response.release_conn()
        except urllib3.exceptions.HTTPError as exc:
            raise cimd.CIMDError(f"could not fetch client_id document: {exc}") from exc
        finally:
            pool.close()
