from django.apps import AppConfig


class McpToolsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "mcp_tools"

    def ready(self) -> None:
        from mcp_tools import metrics, tools  # noqa: F401  (registers every tool and the MCP metrics)
