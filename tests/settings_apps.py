"""Loaded before pytest-django reads the settings (`-p tests.settings_apps` in pytest's addopts): the test run
installs the MCP conformance suite's diagnostic tools (`mcp_tools.conformance`, lev/settings.py), which
production never does, so a test can turn them on with LEV_MCP_CONFORMANCE_FIXTURE. Servers the tests start
inherit it; installed, the app answers nothing while that setting is off."""

from __future__ import annotations

import os

os.environ.setdefault("LEV_MCP_CONFORMANCE_APP", "1")
