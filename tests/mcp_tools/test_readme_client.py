"""The README stays true: its Python client snippet runs as written against a live server, and its
tools table lists every tool the server announces, read or write as its annotations say."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_tools.registry import TOOLS
from mcp_tools.toolsets import toolsets

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def python_snippet() -> str:
    section = README.split("**Python** (the official SDK)", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_python_snippet_runs_as_written_against_a_live_server(live_server, api_key):
    snippet = python_snippet()
    assert 'URL = "http://127.0.0.1:8000/mcp"' in snippet and 'API_KEY = "lev_sk_…"' in snippet
    script = (snippet.replace("http://127.0.0.1:8000/mcp", f"{live_server.url}/mcp")
              .replace('"lev_sk_…"', json.dumps(api_key)))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == {"deals": [], "total": 0, "has_more": False, "next_cursor": None}


def test_the_tools_table_lists_every_tool_with_its_kind():
    rows = dict(re.findall(r"^\| `(\w+)` \| (read|write|write, destructive) \|", README, flags=re.MULTILINE))
    assert set(rows) == set(TOOLS), set(rows) ^ set(TOOLS)
    for name, spec in TOOLS.items():
        hints = spec.annotations
        kind = "read" if hints.readOnlyHint else "write, destructive" if hints.destructiveHint else "write"
        assert rows[name] == kind, name


def test_the_connect_section_names_the_servers_toolsets():
    """Issue 39: the Connect section named five toolsets where the server had seven. Each place the README
    lists them — the `/mcp/x/<toolsets>` address and "The toolsets are …" — names exactly the server's."""
    connect = README.split("## Connect an MCP client", 1)[1].split("\n## ", 1)[0]
    address = re.search(r"`/mcp/x/<toolsets>` \(([^)]*)\)", connect)
    assert address, "the Connect section's /mcp/x/<toolsets> list"
    listed = re.findall(r"`(\w+)`", address.group(1))
    sentence = connect.split("The toolsets are", 1)[1].split(";", 1)[0]
    described = re.findall(r"`(\w+)`(?: \(|,| and)", sentence)
    assert tuple(listed) == toolsets(), listed
    assert tuple(described) == toolsets(), described
