"""What a client may declare about itself, however it registers (RFC 7591 or a metadata document)."""

from __future__ import annotations

from typing import Any

from lev import limits
from lev.oauth.validators import redirect_uri_problem

AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
GRANT_TYPES = {"authorization_code", "refresh_token"}


def client_metadata_problem(data: Any) -> str | None:
    """Why this client metadata is refused (`invalid_client_metadata` / `invalid_redirect_uri`), or None.

    Bounds the parts a person sees or the server stores (the name on the consent page, the redirect
    URIs), and allows only what this server does: the authorization code grant (with refresh tokens)
    to https or loopback redirect URIs."""
    if not isinstance(data, dict):
        return "client metadata must be a JSON object"
    name = data.get("client_name", "")
    if not isinstance(name, str) or len(name) > limits.OAUTH_CLIENT_NAME_MAX:
        return f"client_name must be text of at most {limits.OAUTH_CLIENT_NAME_MAX} characters"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return "client_name may not contain control characters"
    uris = data.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > limits.OAUTH_REDIRECT_URIS_MAX:
        return f"redirect_uris must list 1 to {limits.OAUTH_REDIRECT_URIS_MAX} URLs"
    for uri in uris:
        problem = redirect_uri_problem(uri)
        if problem:
            return f"each redirect URI {problem}"
    grant_types = data.get("grant_types", ["authorization_code"])
    if not isinstance(grant_types, list) or not set(grant_types) <= GRANT_TYPES or \
            "authorization_code" not in grant_types:
        return "grant_types may list only authorization_code and refresh_token, and must list authorization_code"
    response_types = data.get("response_types", ["code"])
    if response_types != ["code"]:
        return 'response_types must be ["code"]'
    method = data.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in AUTH_METHODS:
        return f"token_endpoint_auth_method must be one of: {', '.join(AUTH_METHODS)}"
    return None


def error_code(problem: str) -> str:
    return "invalid_redirect_uri" if "redirect URI" in problem or "redirect_uris" in problem \
        else "invalid_client_metadata"
