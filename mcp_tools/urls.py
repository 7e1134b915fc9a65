from django.urls import path

from mcp_tools.toolsets import READONLY_SEGMENT
from mcp_tools.views import McpView

# One endpoint (registered with the ground, lev.endpoints, by McpToolsConfig.ready); the other
# addresses choose part of its catalogue (mcp_tools.toolsets).
ENDPOINT_PATH = "/mcp"
urlpatterns = [
    path("mcp", McpView.as_view(), name="mcp"),
    path(f"mcp/{READONLY_SEGMENT}", McpView.as_view(), {"read_only": True}, name="mcp-readonly"),
    path("mcp/x/<str:toolsets>", McpView.as_view(), name="mcp-toolsets"),
    path(f"mcp/x/<str:toolsets>/{READONLY_SEGMENT}", McpView.as_view(), {"read_only": True},
         name="mcp-toolsets-readonly"),
]
