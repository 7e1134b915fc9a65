"""The official MCP Python SDK 2.x client against a live /mcp (issue 21, "Real clients, both eras").

The project pins `mcp<2` (django-mcp-server needs it), so the 2.x client lives in a venv of its own,
.tools/sdk2 (gitignored), made here when missing, and runs tests/mcp_tools/sdk2_client.py there.
The 1.x client's end-to-end tests are test_tools_e2e.py and the OAuth ones tests/oauth/test_sdk_e2e.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories import DealFactory

ROOT = Path(__file__).resolve().parents[2]
SDK2 = ROOT / ".tools" / "sdk2"
SDK2_PYTHON = SDK2 / "bin" / "python"
# The newest 2.x on PyPI when this was written (2026-11); exact, so the test measures one client.
SDK2_VERSION = "2.3.0"
# What the 2.x client negotiates with /mcp today: it asks for 2026-07-28 first (server/discover), is
# refused (/mcp speaks the handshake-based revisions only) and falls back to `initialize`.
# When /mcp speaks 2026-07-28 (issue 21's modern era), this becomes "2026-07-28".
NEGOTIATED_TODAY = "2025-11-25"

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def sdk2_python() -> Path:
    """.tools/sdk2 with mcp==SDK2_VERSION, created or updated when it is not there yet."""
    stamp = SDK2 / f".mcp-{SDK2_VERSION}"
    if not stamp.exists():
        if not SDK2_PYTHON.exists():
            subprocess.run([sys.executable, "-m", "venv", str(SDK2)], check=True, timeout=300)
        subprocess.run([str(SDK2_PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        f"mcp=={SDK2_VERSION}"], check=True, timeout=600)
        stamp.touch()
    return SDK2_PYTHON


def test_the_2x_client_falls_back_to_2025_11_25_lists_tools_and_calls_get_deal(live_server, api_key, account):
    python = sdk2_python()
    deal = DealFactory(account=account, title="Harbor Point")
    done = subprocess.run(
        [str(python), str(ROOT / "tests" / "mcp_tools" / "sdk2_client.py"), f"{live_server.url}/mcp", api_key,
         str(deal.id)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["sdk"] == SDK2_VERSION
    assert report["protocol_version"] == NEGOTIATED_TODAY
    assert report["server"] == "lev"
    assert {"get_deal", "list_deals", "create_deal", "archive_deal"} <= set(report["tools"])
    assert report["get_deal"]["isError"] is False
    got = report["get_deal"]["structuredContent"]["deal"]
    assert got["id"] == deal.id and got["title"] == "Harbor Point"
