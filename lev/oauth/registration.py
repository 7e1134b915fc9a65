"""What a client may declare about itself, however it registers (RFC 7591, an RFC 7592 update, or a metadata
document): one set of rules, so no path stores what another refuses."""

from __future__ import annotations

import unicodedata
from typing import Any

from lev import limits
from lev.invisible import BIDI_CONTROLS, LINE_SEPARATORS
from lev.oauth.validators import redirect_uri_problem

AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
GRANT_TYPES = {"authorization_code", "refresh_token"}

# Characters that change how text around them is shown rather than being shown: the bidirectional
# formatting characters (U+202E RIGHT-TO-LEFT OVERRIDE makes "Evil\u202Egpj.exe" read "Evilexe.jpg") and
# the line and paragraph separators (lev.invisible, the admin's list too). A client's name is shown to a
# person deciding whether to trust it.


def is_forbidden_char(char: str) -> bool:
    """A control character (C0, DEL, C1), a lone surrogate (no UTF-8 form: PostgreSQL cannot store it),
    a bidirectional formatting character or a line/paragraph separator."""
    return (char in BIDI_CONTROLS or char in LINE_SEPARATORS
            or unicodedata.category(char) in ("Cc", "Cs"))


def neutralise(text: Any) -> str:
    """`text` as shown to a person: without the characters `is_forbidden_char` names (for a name stored
    before these rules or made by an admin; registration refuses them)."""
    return "".join(c for c in str(text) if not is_forbidden_char(c))


def string_problem(data: Any) -> str | None:
    """Why some string in this JSON value (a key or a value, at any depth) is refused, or None."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if any(is_forbidden_char(c) for c in value):
                return f"{path or 'the metadata'} may not contain control or bidirectional formatting characters"
        elif isinstance(value, dict):
            for key, item in value.items():
                name = key if not path else f"{path}.{key}"
                if any(is_forbidden_char(c) for c in key):
                    return "field names may not contain control or bidirectional formatting characters"
                stack.append((name, item))
        elif isinstance(value, list):
            stack.extend((path, item) for item in value)
    return None


def client_metadata_error(data: Any) -> tuple[str, str] | None:
    """(RFC 7591 error code, description) for refused client metadata, or None.

    Bounds the parts a person sees or the server stores (the name on the consent page, the redirect
    URIs), and allows only what this server does: the authorization code grant (with refresh tokens)
    to https or loopback redirect URIs."""
    if not isinstance(data, dict):
        return "invalid_client_metadata", "client metadata must be a JSON object"
    problem = string_problem(data)
    if problem:
        return "invalid_client_metadata", problem
    name = data.get("client_name", "")
    if not isinstance(name, str) or len(name) > limits.OAUTH_CLIENT_NAME_MAX:
        return "invalid_client_metadata", \
            f"client_name must be text of at most {limits.OAUTH_CLIENT_NAME_MAX} characters"
    uris = data.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > limits.OAUTH_REDIRECT_URIS_MAX:
        return "invalid_redirect_uri", f"redirect_uris must list 1 to {limits.OAUTH_REDIRECT_URIS_MAX} URLs"
    for uri in uris:
        problem = redirect_uri_problem(uri)
        if problem:
            return "invalid_redirect_uri", f"each redirect URI {problem}"
    grant_types = data.get("grant_types", ["authorization_code"])
    if not isinstance(grant_types, list) or not set(grant_types) <= GRANT_TYPES or \
            "authorization_code" not in grant_types:
        return "invalid_client_metadata", \
            "grant_types may list only authorization_code and refresh_token, and must list authorization_code"
    response_types = data.get("response_types", ["code"])
    if response_types != ["code"]:
        return "invalid_client_metadata", 'response_types must be ["code"]'
    method = data.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in AUTH_METHODS:
        return "invalid_client_metadata", f"token_endpoint_auth_method must be one of: {', '.join(AUTH_METHODS)}"
    return None


def client_metadata_problem(data: Any) -> str | None:
    """The description of `client_metadata_error`, or None."""
    error = client_metadata_error(data)
    return error[1] if error else None
