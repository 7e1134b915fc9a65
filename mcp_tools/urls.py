from django.urls import path

from mcp_tools.toolsets import READONLY_SEGMENT
from mcp_tools.views import McpView

# One endpoint (registered with the ground, lev.endpoints, by McpToolsConfig.ready); the other
# addresses choose part of its catalogue (mcp_tools.toolsets).
ENDPOINT_PATH = "/mcp"

# The middleware /mcp's requests go through (lev.handlers.EndpointHandler). Kept:
# * RequestIdMiddleware: the request id, the access log line, the JSON error body for any error page and
#   the ALLOWED_HOSTS refusal in that body; ApiErrorMiddleware: JSON for a 404 and for an exception.
# * SecurityMiddleware, CSPMiddleware, XFrameOptionsMiddleware: the headers a client sees on every
#   /mcp answer (nosniff, Referrer-Policy, Cross-Origin-Opener-Policy, HSTS over https, the content
#   security policy, X-Frame-Options); CommonMiddleware: its Content-Length and DISALLOWED_USER_AGENTS.
#   tests/deploy/test_mcp_lean_middleware.py compares every header of every kind of /mcp answer with
#   the full stack's, under the production server.
# * HistoryRequestMiddleware: django-simple-history's user of a change a tool makes (request.user,
#   which DRF sets when McpView authenticates).
# Not run, because /mcp uses none of it: WhiteNoise (static files only), sessions and authentication
# (McpView authenticates the Authorization header itself, as DRF; no cookie is read or set), CSRF (a DRF
# view is exempt, and a bearer credential is not ambient), messages (pages only) and axes (it refuses
# locked-out sign-ins, which only the sign-in pages make; API keys and OAuth tokens never go through
# django.contrib.auth.authenticate()).
ENDPOINT_MIDDLEWARE = (
    "lev.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "lev.middleware.CommonMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "lev.middleware.ApiErrorMiddleware",
)
# /mcp serves no pages, so django-csp's header has no nonce there and is one string: built once
# (lev.middleware.FixedContentSecurityPolicy) rather than on every answer.
ENDPOINT_REPLACEMENTS = {"csp.middleware.CSPMiddleware": "lev.middleware.FixedContentSecurityPolicy"}
urlpatterns = [
    path("mcp", McpView.as_view(), name="mcp"),
    path(f"mcp/{READONLY_SEGMENT}", McpView.as_view(), {"read_only": True}, name="mcp-readonly"),
    path("mcp/x/<str:toolsets>", McpView.as_view(), name="mcp-toolsets"),
    path(f"mcp/x/<str:toolsets>/{READONLY_SEGMENT}", McpView.as_view(), {"read_only": True},
         name="mcp-toolsets-readonly"),
]
