from django.apps import AppConfig


class ConformanceConfig(AppConfig):
    """The MCP conformance suite's diagnostic tools (`fixture`): installed by test and conformance
    settings only (lev/settings.py), answered on /mcp only while LEV_MCP_CONFORMANCE_FIXTURE is on."""

    name = "mcp_tools.conformance"
    label = "mcp_conformance"

    def ready(self) -> None:
        from mcp_tools import extra_tools
        from mcp_tools.conformance import fixture

        extra_tools.register(fixture)
