from django.urls import path

from mcp_tools.views import McpView

urlpatterns = [
    path("mcp", McpView.as_view(), name="mcp"),
]
