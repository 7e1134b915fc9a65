from django.urls import path

from mcp_tools.views import McpView

# One endpoint; the other addresses choose part of its catalogue (mcp_tools.toolsets).
urlpatterns = [
    path("mcp", McpView.as_view(), name="mcp"),
    path("mcp/readonly", McpView.as_view(), {"read_only": True}, name="mcp-readonly"),
    path("mcp/x/<str:toolsets>", McpView.as_view(), name="mcp-toolsets"),
    path("mcp/x/<str:toolsets>/readonly", McpView.as_view(), {"read_only": True}, name="mcp-toolsets-readonly"),
]
