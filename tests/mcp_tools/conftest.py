import pytest

from tests.mcp_helpers import McpCaller


@pytest.fixture
def mcp(live_server, api_key):
    """An MCP client of the live test server, authenticated as `user` of `account`."""
    return McpCaller(live_server.url, api_key)
