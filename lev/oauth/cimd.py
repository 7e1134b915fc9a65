"""Fetching Client ID Metadata Documents (a client_id that is an https URL to the client's metadata).

django-oauth-toolkit's SafeMetadataFetcher does the fetch: https only, every address the host resolves
to must be public (no private, loopback, link-local, CGNAT, metadata-service or IPv6-embedded private
addresses), the connection goes to the address that was checked (no second lookup to rebind), no
redirects, one deadline for the whole fetch (CIMD_FETCH_TIMEOUT_SECONDS), a size cap
(CIMD_MAX_DOCUMENT_SIZE), JSON only, and a failure backoff per URL.

Development and tests may also fetch from this machine: with LEV_OAUTH_CIMD_ALLOW_LOOPBACK (refused in
production) a client_id whose host resolves only to loopback addresses is fetched from there, still over
https with the same limits, trusting LEV_OAUTH_CIMD_CA_FILE (a local CA) besides the system's CAs.
Private and link-local addresses stay refused either way.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl

import urllib3
from django.conf import settings
from oauth2_provider import cimd
from oauth2_provider.settings import oauth2_settings

from lev.oauth.registration import client_metadata_problem


def _loopback_addresses(host: str, port: int) -> list[str]:
    """The host's addresses when every one is a loopback address, else []."""
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError):
        return []
    ips = [info[4][0] for info in infos]
    if ips and all(ipaddress.ip_address(ip.split("%")[0]).is_loopback for ip in ips):
        return ips
    return []


class LevMetadataFetcher(cimd.SafeMetadataFetcher):
    def fetch(self, client_id):
        document, max_age = self._fetch(client_id)
        # The same bounds as a registration (the consent page shows the name; the URIs are stored).
        problem = client_metadata_problem({"token_endpoint_auth_method": "none", **document})
        if problem:
            raise cimd.CIMDError(f"client metadata refused: {problem}")
        return document, max_age

    def _fetch(self, client_id):
        if settings.LEV_OAUTH_CIMD_ALLOW_LOOPBACK:
            parsed = cimd._validate_client_id_url(client_id)
            port = parsed.port or 443
            ips = _loopback_addresses(parsed.hostname, port)
            if ips:
                return self._fetch_loopback(parsed, port, ips[0])
        return super().fetch(client_id)

    def _fetch_loopback(self, parsed, port: int, ip: str):
        timeout = oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        context = ssl.create_default_context()
        if settings.LEV_OAUTH_CIMD_CA_FILE:
            context.load_verify_locations(cafile=settings.LEV_OAUTH_CIMD_CA_FILE)
        pool = urllib3.HTTPSConnectionPool(
            host=ip, port=port, timeout=urllib3.Timeout(connect=timeout, read=timeout, total=timeout),
            retries=False, maxsize=1, ssl_context=context, server_hostname=parsed.hostname,
        )
        path = parsed.path + (f"?{parsed.query}" if parsed.query else "")
        try:
            response = pool.urlopen("GET", path, headers={"Host": parsed.netloc, "Accept": "application/json"},
                                    redirect=False, preload_content=False)
            try:
                return self._read_document(response)
            finally:
                response.release_conn()
        except urllib3.exceptions.HTTPError as exc:
            raise cimd.CIMDError(f"could not fetch client_id document: {exc}") from exc
        finally:
            pool.close()
