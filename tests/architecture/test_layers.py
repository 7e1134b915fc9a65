"""The layers point one way: mcp_tools → deals → lenders → lev (docs/architecture.md).

Every import of every module of the four packages is read from its source — at module level and inside
functions, `import x` and `from x import y` — and the test fails on

* an upward arrow: a package importing one above it (lev importing lenders, lenders importing deals, …);
* a circle inside a package: modules that import each other, directly or round a loop.

Reading the source (not the modules Python has loaded) sees the imports a function makes only when it
runs, which is where an upward arrow used to hide.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("lev", "lenders", "deals", "mcp_tools")  # bottom to top
RANK = {name: rank for rank, name in enumerate(LAYERS)}


def _modules() -> dict[str, Path]:
    found = {}
    for package in LAYERS:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imported(name: str, module: str | None, node: ast.AST) -> list[str]:
    """The modules an import statement reaches: for `from a.b import c`, a.b.c when c is a module."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    assert isinstance(node, ast.ImportFrom)
    if node.level:  # relative: resolve against the importing module's package
        base = name.split(".")
        is_package = MODULES[name].name == "__init__.py"
        base = base[: len(base) - node.level + (1 if is_package else 0)]
        module = ".".join(base + ([node.module] if node.module else []))
    targets = []
    for alias in node.names:
        full = f"{module}.{alias.name}"
        targets.append(full if full in MODULES else module)
    return targets


def _imports() -> dict[str, list[tuple[str, int]]]:
    graph: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _imported(name, getattr(node, "module", None), node):
                    graph[name].append((target, node.lineno))
    return graph


GRAPH = _imports()


def _layer(module: str) -> str | None:
    top = module.split(".")[0]
    return top if top in RANK else None


def test_the_reader_sees_imports_inside_functions():
    # lev.health registers what the apps give it and imports them nowhere, not even in a function:
    # the reader must find function-level imports for this test to mean anything.
    assert any(target == "lev.accounts.schema" for target, _ in GRAPH["lev.accounts.apps"])


@pytest.mark.parametrize("package", LAYERS)
def test_no_package_imports_one_above_it(package):
    upward = [
        f"{module}:{line} imports {target}"
        for module, targets in GRAPH.items() if _layer(module) == package
        for target, line in targets
        if _layer(target) and RANK[_layer(target)] > RANK[package]
    ]
    assert not upward, "upward imports:\n" + "\n".join(upward)


def _cycles(package: str) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), between the package's own modules.
    A package's __init__ is left out: importing a submodule runs it, but an empty one imports nothing."""
    nodes = [m for m in MODULES if _layer(m) == package]
    edges = {m: sorted({t for t, _ in GRAPH.get(m, []) if t in MODULES and _layer(t) == package and t != m})
             for m in nodes}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in nodes:
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("package", LAYERS)
def test_no_import_circle_inside_a_package(package):
    assert not _cycles(package), f"import circles in {package}: {_cycles(package)}"
