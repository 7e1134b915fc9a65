"""OpenAPI description of OAuth access tokens (drf-spectacular extension): the authorization code flow,
the scopes, and the one scope each operation needs."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension

from lev.accounts.permissions import required_scope
from lev.accounts.scopes import SCOPES


class OAuthTokenScheme(OpenApiAuthenticationExtension):
    target_class = "lev.oauth.authentication.OAuthTokenAuthentication"
    name = "OAuth2"

    def get_security_definition(self, auto_schema):
        return {
            "type": "oauth2",
            "description": "An OAuth 2.1 access token (authorization code with PKCE S256): "
                           "`Authorization: Bearer <token>`. See docs/oauth.md.",
            "flows": {"authorizationCode": {"authorizationUrl": "/oauth/authorize/", "tokenUrl": "/oauth/token/",
                                            "refreshUrl": "/oauth/token/", "scopes": dict(SCOPES)}},
        }

    def get_security_requirement(self, auto_schema):
        scope = required_scope(auto_schema.view, auto_schema.method)
        return {self.name: [scope] if scope else []}
