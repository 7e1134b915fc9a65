from django.apps import AppConfig


class McpToolsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "mcp_tools"
