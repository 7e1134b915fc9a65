from django.apps import AppConfig


class McpToolsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "mcp_tools"

    def ready(self) -> None:
        from django.conf import settings

        from lev.endpoints import register_endpoint
        from lev.health import register_fields
        from mcp_tools import metrics, tools  # noqa: F401  (registers every tool and the MCP metrics)
        from mcp_tools.jsonrpc import unreadable_body
        from mcp_tools.resilience import breaker_state, last_probe
        from mcp_tools.urls import ENDPOINT_MIDDLEWARE, ENDPOINT_PATH, ENDPOINT_REPLACEMENTS

        # /health shows the MCP layer's view of the API: the last probe and the shared breaker.
        register_fields(lambda: {"lev_api": last_probe(), "circuit_breaker": breaker_state()})
        # /mcp to the ground: its own lean handler, its body bound, a body it cannot read a JSON-RPC
        # parse error, a mistyped address under it the API's JSON 404, and a protected resource of its
        # own (the identifier MCP clients bind their tokens to).
        register_endpoint(ENDPOINT_PATH, body_limit=lambda: settings.LEV_MCP_MAX_BODY_BYTES,
                          unreadable=unreadable_body, middleware=ENDPOINT_MIDDLEWARE,
                          replacements=ENDPOINT_REPLACEMENTS, protected_resource=True)
