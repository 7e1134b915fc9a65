import pytest

from tests.oauth.tls import DocumentServer


@pytest.fixture
def documents(tmp_path, settings):
    """An https server on 127.0.0.1 for Client ID Metadata Documents, trusted by the site (development
    settings: loopback documents allowed, the server's CA trusted)."""
    server = DocumentServer(tmp_path)
    settings.LEV_OAUTH_CIMD_ALLOW_LOOPBACK = True
    settings.LEV_OAUTH_CIMD_CA_FILE = str(server.ca_file)
    yield server
    server.close()


def cimd_document(client_id: str, name: str = "Acme Agent", redirect_uri: str = "http://127.0.0.1:8765/callback",
                  **extra) -> dict:
    return {"client_id": client_id, "client_name": name, "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": "none", **extra}
