"""django-oauth-toolkit's validator and server, narrowed to what this site allows.

* PKCE S256 only: `plain` is refused when the client asks for the code (before the consent page).
* Redirect URIs: https, or http on a loopback host (a native client's local callback); matched exactly.
* Resource indicators (RFC 8707): a code and its tokens are bound to this site (`lev.resource`), to
  `/mcp` when the client names no resource; a resource that is not this site's is `invalid_target`.
* The account the person chose at consent is kept with the code (`OAuthAuthorization`) and bound to the
  refresh-token family at the exchange, so every token of it resolves to (user, account, scopes).
"""

from __future__ import annotations

import hashlib
import ipaddress
from urllib.parse import urlsplit

from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2 import Server
from oauthlib.oauth2.rfc6749 import errors
from oauthlib.oauth2.rfc6749.grant_types.authorization_code import code_challenge_method_s256

from lev import limits
from lev.accounts.models import Membership
from lev.resource import default_resource, is_site_resource

LOOPBACK_NAMES = {"localhost"}


def code_checksum(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


class S256OnlyServer(Server):
    """oauthlib's server whose authorization-code grant knows one PKCE method: S256."""

    def __init__(self, request_validator, *args, **kwargs):
        super().__init__(request_validator, *args, **kwargs)
        self.auth_grant._code_challenge_methods = {"S256": code_challenge_method_s256}


def is_loopback_host(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def redirect_uri_problem(uri: str) -> str | None:
    """Why a redirect URI may not be registered or used, or None. OAuth 2.1 and the MCP specification:
    https, or http to a loopback address; no fragment; no user information."""
    if not isinstance(uri, str) or not uri or len(uri) > limits.OAUTH_REDIRECT_URI_MAX:
        return f"must be a URL of at most {limits.OAUTH_REDIRECT_URI_MAX} characters"
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError:
        return "is not a valid URL"
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in uri):
        return "may not contain spaces or control characters"
    if parts.fragment or "#" in uri:
        return "may not contain a fragment"
    if parts.username is not None:
        return "may not contain user information"
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and is_loopback_host(parts.hostname):
        return None
    return "must use https, or http on localhost / a loopback address"


class LevOAuth2Validator(OAuth2Validator):
    def is_pkce_required(self, client_id, request):
        return True

    def validate_redirect_uri(self, client_id, redirect_uri, request, *args, **kwargs):
        if redirect_uri_problem(redirect_uri) is not None:
            return False
        return super().validate_redirect_uri(client_id, redirect_uri, request, *args, **kwargs)

    def validate_client_id(self, client_id, request, *args, **kwargs):
        # A client_id no client could have (a URL past the column's width, control characters) is an
        # unknown client, never a lookup or a fetch.
        if not isinstance(client_id, str) or len(client_id) > limits.OAUTH_CLIENT_ID_MAX:
            return False
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in client_id):
            return False
        return super().validate_client_id(client_id, request, *args, **kwargs)

    # --- resource indicators ---------------------------------------------------------------------
    def _bind_to_this_site(self, request) -> None:
        resources = getattr(request, "resource", None) or []
        if isinstance(resources, str):
            resources = resources.split()
        for value in resources:
            if not is_site_resource(value, request):
                raise errors.CustomOAuth2Error(
                    error="invalid_target",
                    description="This authorization server issues tokens only for this site's MCP endpoint "
                                f"({default_resource(request)}).",
                    request=request,
                )
        # Kept as sent: django-oauth-toolkit compares a token request's resources with the code's as text.
        request.resource = list(resources) or [default_resource(request)]

    def _create_authorization_code(self, request, code, expires=None):
        from lev.oauth.models import OAuthAuthorization

        self._bind_to_this_site(request)
        account_id = getattr(request, "lev_account_id", None)
        if account_id is None:
            # The consent form always names the account. Without it (an application an admin marked
            # "skip authorization") the grant is for the person's only account, or refused.
            accounts = list(Membership.objects.filter(user=request.user).values_list("account_id", flat=True)[:2])
            if len(accounts) != 1:
                raise errors.AccessDeniedError(description="No account was chosen for this grant.", request=request)
            account_id = accounts[0]
        grant = super()._create_authorization_code(request, code, expires)
        OAuthAuthorization.objects.create(
            user=request.user, account_id=account_id, application=request.client, grant=grant, scope=grant.scope,
            code_checksum=code_checksum(code["code"]),
        )
        return grant

    def validate_code(self, client_id, code, client, request, *args, **kwargs):
        if super().validate_code(client_id, code, client, request, *args, **kwargs):
            return True
        self._revoke_tokens_of_a_used_code(code, client)
        return False

    @staticmethod
    def _revoke_tokens_of_a_used_code(code, client) -> None:
        """RFC 6749 §4.1.2 (and OAuth 2.1 §4.1.3): a code presented after its exchange was copied; the tokens
        that exchange issued are revoked, access and refresh (the whole family), at once in this process."""
        from lev.oauth.models import OAuthAuthorization
        from lev.oauth.services import authorization_revoke

        if not isinstance(code, str) or not code or len(code) > 255:
            return
        authorization = OAuthAuthorization.objects.filter(
            code_checksum=code_checksum(code), application=client, token_family__isnull=False,
            revoked_at__isnull=True,
        ).first()
        if authorization is not None:
            authorization_revoke(authorization=authorization)

    def _check_and_set_request_resource(self, request):
        super()._check_and_set_request_resource(request)
        self._bind_to_this_site(request)

    def _create_refresh_token(self, request, refresh_token_code, access_token, previous_refresh_token):
        from lev.oauth.models import OAuthAuthorization

        refresh_token = super()._create_refresh_token(request, refresh_token_code, access_token,
                                                      previous_refresh_token)
        if previous_refresh_token is None and request.grant_type == "authorization_code":
            # The code's exchange starts the family: the consent is now bound to it, not to the code.
            bound = OAuthAuthorization.objects.filter(
                grant__code=request.code, grant__application=request.client, token_family__isnull=True,
            ).update(token_family=refresh_token.token_family, grant=None)
            if not bound:
                raise errors.InvalidGrantError(description="The authorization is no longer valid.", request=request)
        return refresh_token
