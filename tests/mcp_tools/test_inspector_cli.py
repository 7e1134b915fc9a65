"""The official MCP Inspector CLI against a live /mcp, in each era it can negotiate (issue 21, "Real clients,
both eras"; docs/mcp-clients.md "Checked with the official clients").

The Inspector runs on Node 22 (installed into .tools/node by bench/conformance.py's installer) and is
installed, pinned, into .tools/inspector with that Node's npm, both when missing. Without npm or the npm
registry the test is skipped, saying so. `--protocol-era legacy` (the CLI's default for a URL) does the
initialize handshake, `modern` speaks 2026-07-28 (server/discover, then stateless requests); a 2026-07-28
result carries the server's `_meta["io.modelcontextprotocol/serverInfo"]`, a 2025-11-25 one has no `_meta`:
that is how the output tells which era was spoken.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from bench import conformance
from mcp_tools.registry import TOOLS
from mcp_tools.toolsets import toolset_of
from tests.factories import DealFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# The newest release when this was written (2026-11); exact, so the test measures one client.
INSPECTOR_PACKAGE, INSPECTOR_VERSION = "@modelcontextprotocol/inspector", "2.12.0"
INSPECTOR_PREFIX = conformance.TOOLS / "inspector"
INSPECTOR_DIR = INSPECTOR_PREFIX / "node_modules" / "@modelcontextprotocol" / "inspector"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    """The command that starts the Inspector CLI (installed when missing), or a skip saying why not."""
    try:
        npm_cli = conformance._npm_cli()
    except SystemExit as missing:
        pytest.skip(f"the Inspector CLI needs npm to install Node 22 and itself: {missing}")
    try:
        node = conformance.ensure_node(npm_cli)
        if conformance._installed_version(INSPECTOR_DIR / "package.json") != INSPECTOR_VERSION:
            INSPECTOR_PREFIX.mkdir(parents=True, exist_ok=True)
            # npm runs on Node 22 so the Inspector's dependencies resolve for it (on Node 20, npm resolved
            # the Inspector to 0.15.0, whose CLI has no --header).
            subprocess.run([str(node), npm_cli, "install", "--prefix", str(INSPECTOR_PREFIX), *conformance.NPM_QUIET,
                            f"{INSPECTOR_PACKAGE}@{INSPECTOR_VERSION}"], check=True, capture_output=True, timeout=600)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as failed:
        detail = getattr(failed, "stderr", b"") or b""
        pytest.skip(f"could not install Node {conformance.NODE_VERSION} or {INSPECTOR_PACKAGE}@{INSPECTOR_VERSION} "
                    f"from the npm registry: {failed} {detail.decode(errors='replace')[-500:]}")
    bin_entry = json.loads((INSPECTOR_DIR / "package.json").read_text())["bin"]["mcp-inspector"]
    return [str(node), str(INSPECTOR_DIR / bin_entry), "--cli"]


def run(inspector: list[str], url: str, key: str, era: str, *method: str) -> dict:
    done = subprocess.run([*inspector, url, "--transport", "http", "--header", f"Authorization: Bearer {key}",
                           "--protocol-era", era, "--format", "json", *method],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    # The doc's criterion for a good run: no error and no stack frame on stderr.
    assert "Error" not in done.stderr and "    at " not in done.stderr, done.stderr[-2000:]
    return json.loads(done.stdout)["result"]


@pytest.mark.parametrize(("era", "modern"), [("legacy", False), ("modern", True)])
def test_the_inspector_cli_lists_and_calls_in_each_era(inspector, live_server, api_key, account, era, modern):
    deal = DealFactory(account=account, title="Harbor Point")
    url = f"{live_server.url}/mcp"

    listed = run(inspector, url, api_key, era, "--method", "tools/list")
    assert sorted(tool["name"] for tool in listed["tools"]) == sorted(TOOLS)

    called = run(inspector, url, api_key, era, "--method", "tools/call", "--tool-name", "get_deal",
                 "--tool-arg", f"deal_id={deal.id}")
    assert called["isError"] is False
    assert called["structuredContent"]["deal"]["title"] == "Harbor Point"
    # 2026-07-28 results carry the server's name in _meta; 2025-11-25 results none.
    assert (META_SERVER_INFO in called.get("_meta", {})) is modern
    if modern:
        assert called["_meta"][META_SERVER_INFO]["name"] == "lev"

    readonly_deals = sorted(name for name, spec in TOOLS.items()
                            if toolset_of(spec) == "deals" and spec.annotations.readOnlyHint)
    narrowed = run(inspector, f"{url}/x/deals/readonly", api_key, era, "--method", "tools/list")
    assert sorted(tool["name"] for tool in narrowed["tools"]) == readonly_deals
