"""`lev`, the ground, knows no endpoint an app above it serves (issue 40): the MCP endpoint's path, its
JSON-RPC and its error codes are `mcp_tools`' own, handed to the ground through the registration seam
(lev.endpoints: the path, its body bound, its unreadable-body answer, its middleware, whether it is an
OAuth protected resource). Read from the code: a string or number in `lev/` that spells them fails.
The composition root is exempt: settings (INSTALLED_APPS, the LEV_MCP_* settings' names) and the root
URLconf (which mounts mcp_tools.urls)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "lev"
COMPOSITION_ROOT = {ROOT / "settings.py", ROOT / "urls.py"}
JSON_RPC_CODES = {-32700, -32600, -32601, -32602, -32603, 32700, 32600, 32601, 32602, 32603}


def _docstrings(tree: ast.AST) -> set[int]:
    kept = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                kept.add(id(first.value))
    return kept


def spelled(path: Path, root: Path = ROOT.parent) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or id(node) in docs:
            continue
        value = node.value
        if isinstance(value, str) and ("/mcp" in value.lower() or "jsonrpc" in value.lower()):
            found.append(f"{path.relative_to(root)}:{node.lineno}: {value!r}")
        elif isinstance(value, int) and not isinstance(value, bool) and value in JSON_RPC_CODES:  # -32700: -(32700)
            found.append(f"{path.relative_to(root)}:{node.lineno}: {value}")
    return found


def test_lev_spells_no_endpoint_path_nor_json_rpc():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path in COMPOSITION_ROOT or "migrations" in path.parts:
            continue
        found += spelled(path)
    assert not found, "lev/ spells an app's endpoint (register it through lev.endpoints):\n" + "\n".join(found)


def test_the_check_finds_what_it_looks_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('"""/mcp in a docstring is prose."""\nPATH = "/mcp"\nCODE = -32700\n'
                      'def f():\n    """/mcp here too."""\n    return {"jsonrpc": "2.0"}\n')
    assert [line.split(": ", 1)[1] for line in spelled(sample, tmp_path)] == ["'/mcp'", "32700", "'jsonrpc'"]
