from django.apps import AppConfig


class McpToolsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "mcp_tools"

    def ready(self) -> None:
        from lev.health import register_fields
        from mcp_tools import metrics, tools  # noqa: F401  (registers every tool and the MCP metrics)
        from mcp_tools.resilience import breaker_state, last_probe

        # /health shows the MCP layer's view of the API: the last probe and the shared breaker.
        register_fields(lambda: {"lev_api": last_probe(), "circuit_breaker": breaker_state()})
