"""No module of mcp_tools reads or writes a library's private attribute (a leading underscore), but the
adapters (`mcp_tools/adapters/`, one per library, each listed in docs/architecture.md). Read from the
code: every `x._name` and every `getattr`/`setattr`/`hasattr`/`delattr` of a "_name" string, allowed
when mcp_tools itself defines that name (a function, class, argument or an attribute it assigns)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "mcp_tools"
ADAPTERS = ROOT / "adapters"
# The adapters' allowance: the private attributes they may touch, each with its reason in the adapter.
ADAPTER_ALLOWANCE = {"_mcp_server"}
_ATTRIBUTE_CALLS = {"getattr", "setattr", "hasattr", "delattr"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _trees() -> dict[Path, ast.AST]:
    return {path: ast.parse(path.read_text(), str(path)) for path in sorted(ROOT.rglob("*.py"))}


def _defined(trees: dict[Path, ast.AST]) -> set[str]:
    names: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return names


def touched(trees: dict[Path, ast.AST]) -> list[tuple[Path, int, str]]:
    """(file, line, name) of every private attribute read or written, by attribute or by string."""
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                found.append((path, node.lineno, node.attr))
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _ATTRIBUTE_CALLS
                  and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                  and isinstance(node.args[1].value, str) and _private(node.args[1].value)):
                found.append((path, node.lineno, node.args[1].value))
    return found


def test_no_module_of_mcp_tools_touches_a_librarys_private_attribute_outside_the_adapters():
    trees = _trees()
    own = _defined(trees)
    foreign = [(path, line, name) for path, line, name in touched(trees) if name not in own]
    outside = [f"{path.relative_to(ROOT.parent)}:{line} {name}" for path, line, name in foreign
               if ADAPTERS not in path.parents]
    assert not outside, "private attributes of a library outside mcp_tools/adapters/: " + ", ".join(outside)
    in_adapters = {name for path, _, name in foreign if ADAPTERS in path.parents}
    assert in_adapters <= ADAPTER_ALLOWANCE, f"the adapters touch more than their allowance: {in_adapters}"


def test_the_check_sees_an_attribute_and_a_string(tmp_path):
    tree = ast.parse("x = request._full_data\ny = getattr(request, '_full_data', None)\nz = obj.__dict__\n")
    assert [name for _, _, name in touched({tmp_path / "m.py": tree})] == ["_full_data", "_full_data"]
