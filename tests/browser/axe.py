"""axe-core (Deque's accessibility engine, from npm) run inside a Playwright page.

axe-core is installed, pinned, into .tools/axe (git-ignored) by Node 22's npm — bench/conformance.py's
installer (`ensure_node`, its npm cli), the way the conformance suite and the MCP Inspector are — when
missing or another version. It is a browser script: `run_axe(page)` injects `axe.min.js` into the page
(`page.add_script_tag(path=…)`, an inline script the site's CSP would refuse: the page's browser context
is made with `bypass_csp=True` — AXE_CONTEXT; the CSP itself is checked by test_admin_browser.py) and
returns the violations axe reports with impact serious or critical.

`axe_script()` fails the test under CI=true when axe cannot be installed, and skips elsewhere (no npm,
no registry), saying why — the same rule as the browser itself (tests/browser/test_admin_browser.py).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bench import conformance

# The newest release when this was written (4.14.1, 2026-11-16); exact, so a run measures one rule set —
# a new axe release adds and tightens rules: bump it deliberately and fix what the new rules find.
AXE_PACKAGE, AXE_VERSION = "axe-core", "4.14.1"
AXE_PREFIX = conformance.TOOLS / "axe"
AXE_DIR = AXE_PREFIX / "node_modules" / AXE_PACKAGE
AXE_SCRIPT = AXE_DIR / "axe.min.js"
SERIOUS = ("serious", "critical")
AXE_CONTEXT = {"bypass_csp": True}  # chromium.new_context(**AXE_CONTEXT, viewport=…): lets the script in

RUN = """async (options) => {
  const results = await axe.run(document, options);
  return results.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => ({target: n.target.join(' '), impact: n.impact, summary: n.failureSummary}))
  }));
}"""


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"axe-core cannot be installed in CI: {reason}")
    pytest.skip(reason)


def axe_script() -> Path:
    """axe.min.js of AXE_VERSION under .tools/axe, installed when missing (fails under CI, else skips)."""
    if conformance._installed_version(AXE_DIR / "package.json") == AXE_VERSION and AXE_SCRIPT.is_file():
        return AXE_SCRIPT
    try:
        npm_cli = conformance._npm_cli()
    except SystemExit as missing:
        _unavailable(f"{AXE_PACKAGE} needs npm to install it: {missing}")
    try:
        node = conformance.ensure_node(npm_cli)
        AXE_PREFIX.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(node), npm_cli, "install", "--prefix", str(AXE_PREFIX), *conformance.NPM_QUIET,
                        f"{AXE_PACKAGE}@{AXE_VERSION}"], check=True, capture_output=True, timeout=600)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as failed:
        detail = getattr(failed, "stderr", b"") or b""
        _unavailable(f"could not install {AXE_PACKAGE}@{AXE_VERSION} from the npm registry: {failed} "
                     f"{detail.decode(errors='replace')[-500:]}")
    if conformance._installed_version(AXE_DIR / "package.json") != AXE_VERSION or not AXE_SCRIPT.is_file():
        _unavailable(f"npm did not install {AXE_PACKAGE}@{AXE_VERSION} into {AXE_PREFIX}")
    return AXE_SCRIPT


def run_axe(page, script: Path) -> list[dict]:
    """The page's serious and critical violations: [{id, impact, help, nodes: [{target, impact, summary}]}],
    every rule on the whole document (none excluded)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(script))
    found = page.evaluate(RUN, {"resultTypes": ["violations"]})
    serious = []
    for violation in found:
        nodes = [node for node in violation["nodes"] if (node["impact"] or violation["impact"]) in SERIOUS]
        if nodes:
            serious.append({**violation, "nodes": nodes})
    return serious


def describe(page_name: str, violations: list[dict]) -> list[str]:
    """One line per failing element: rule id, impact, the element's selector, the page."""
    return [f"{v['id']} ({node['impact'] or v['impact']}) at {node['target']} on {page_name}: {v['help']}"
            for v in violations for node in v["nodes"]]
