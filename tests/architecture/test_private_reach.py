"""No reaching into the libraries (issue 40): product code never reads or writes a private attribute (a
leading underscore) of Django, DRF, asgiref, gunicorn, django-mcp-server or the MCP SDK, never overrides
one of their private methods, never imports a private name of theirs, and never replaces an object's
`__class__` or `__dict__`. Where a library offers no public hook for something the product truly needs,
the reach is contained in an adapter module (a module under an `adapters` package), at most
ADAPTER_ALLOWANCE of them in the whole product, each listed in docs/architecture.md.

What counts is read from the code, not a hand list: the private names are every `_name` the installed
libraries define (a `def _name`, a `._name` they use, a `_name =` they assign); a product access of such a
name counts unless the product defines that name itself (its own private helper of the same name), in
which case only an override of it in a class with a library base counts. A few underscored names the
libraries document as public API are not private (DOCUMENTED, each with where it is documented).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("lev", "deals", "lenders", "mcp_tools")
LIBRARIES = ("django", "rest_framework", "asgiref", "gunicorn", "mcp_server", "mcp")
ADAPTER_ALLOWANCE = 3
# Underscored names that are the libraries' documented, public API.
DOCUMENTED = {
    "_meta",  # Django: the Model _meta API (docs/ref/models/meta)
    "_default_manager", "_base_manager",  # Django: Model._default_manager (docs/topics/db/managers)
    "_state",  # Django: Model._state.adding / .db (docs/ref/models/instances, "Customizing model loading")
    "_request",  # DRF: "the underlying HttpRequest ... request._request" (api-guide/requests)
    "_make", "_replace", "_asdict", "_fields",  # collections.namedtuple's public methods
}
PRIVATE_NAME = re.compile(r"(?:\bdef\s+|\.|^\s*)(_[A-Za-z][A-Za-z0-9_]*)\b(?!__)", re.MULTILINE)


@cache
def library_private_names() -> frozenset[str]:
    names: set[str] = set()
    for library in LIBRARIES:
        spec = importlib.util.find_spec(library)
        for location in spec.submodule_search_locations or []:
            for path in Path(location).rglob("*.py"):
                names.update(PRIVATE_NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    return frozenset(name for name in names if not name.endswith("__")) - DOCUMENTED


def product_files() -> list[Path]:
    return [path for package in PRODUCT for path in sorted((ROOT / package).rglob("*.py"))
            if "migrations" not in path.parts]


def _is_adapter(path: Path) -> bool:
    return "adapters" in path.relative_to(ROOT).parts[:-1]


@cache
def _parsed() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(encoding="utf-8"), str(path)) for path in product_files()}


@cache
def product_defined() -> frozenset[str]:
    """The underscored names the product defines itself."""
    names: set[str] = set()
    for tree in _parsed().values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                  and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                names.add(node.attr)  # its own attribute (a write to another object's is a reach)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[0])
    return frozenset(n for n in names if n.startswith("_"))


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


@cache
def _module_text(module: str) -> str:
    spec = importlib.util.find_spec(module)
    return Path(spec.origin).read_text(encoding="utf-8") if spec and spec.origin else ""


def _overrides(path: Path, node: ast.ClassDef) -> list[tuple[int, str, str]]:
    """(line, what, library class) for each underscored method of the class that a library class it
    inherits from defines, and each underscored attribute of `self` it reads or writes that a library
    class it inherits from keeps (its module's code uses `self.<name>`): a subclass taking over a
    library's private state. The class, imported, answers what its bases are."""
    methods = [(item.lineno, item.name) for item in node.body
               if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
               and item.name.startswith("_") and not item.name.endswith("__")]
    state = sorted({(sub.lineno, sub.attr) for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) for sub in ast.walk(item)
                    if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self"
                    and sub.attr.startswith("_") and not sub.attr.endswith("__")})
    if not methods and not state:
        return []
    cls = getattr(importlib.import_module(_module_name(path)), node.name, None)
    # A mixin's library is the one of the classes it is mixed into (EndpointHandler(ChosenMiddleware, WSGIHandler)).
    family = [cls, *_subclasses(cls)] if isinstance(cls, type) else []
    bases = list(dict.fromkeys(base for member in family for base in member.__mro__[1:]
                               if base.__module__.split(".")[0] in LIBRARIES))

    def keeps(base: type, name: str) -> bool:
        return name in vars(base) or re.search(rf"\bself\.{name}\b", _module_text(base.__module__)) is not None

    out = []
    for line, name in methods:
        owner = next((base for base in bases if keeps(base, name)), None)
        if owner is not None:
            out.append((line, f"def {name}", f"{owner.__module__}.{owner.__qualname__}"))
    for line, name in state:
        owner = next((base for base in bases if name not in {m for _, m in methods} and name not in DOCUMENTED
                      and keeps(base, name)), None)
        if owner is not None:
            out.append((line, f"self.{name}", f"{owner.__module__}.{owner.__qualname__}"))
    return out


def reaches() -> list[tuple[str, int, str]]:
    """Every reach into the libraries: (file, line, what)."""
    private = library_private_names()
    own = product_defined()
    found = []
    for path, tree in _parsed().items():
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                name = node.attr
                if name in ("__class__", "__dict__") and not (isinstance(node.value, ast.Name)
                                                              and node.value.id in ("self", "cls")):
                    if isinstance(node.ctx, ast.Store) or name == "__dict__":
                        found.append((where, node.lineno, f".{name}"))
                    continue
                via_super = (isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                             and node.value.func.id == "super")
                if name in private and (name not in own or via_super):
                    found.append((where, node.lineno, f".{name}"))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                # getattr(x, "_name") / setattr / hasattr / delattr reach by string.
                args = node.args
                if (node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(args) >= 2
                        and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str)
                        and args[1].value in private and args[1].value not in own):
                    found.append((where, node.lineno, f"{node.func.id}(…, {args[1].value!r})"))
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in LIBRARIES:
                for alias in node.names:
                    if alias.name.startswith("_") or any(p.startswith("_") for p in node.module.split(".")):
                        found.append((where, node.lineno, f"from {node.module} import {alias.name}"))
        for node in tree.body:  # the module's classes: does one override a library's private method?
            if isinstance(node, ast.ClassDef):
                found.extend((where, line, f"{what} ({owner}'s)") for line, what, owner in _overrides(path, node))
    return sorted(set(found))


def test_no_product_module_reaches_into_a_library_outside_its_adapters():
    outside = [reach for reach in reaches() if not _is_adapter(ROOT / reach[0])]
    report = "\n".join(f"{file}:{line}: {what}" for file, line, what in outside)
    assert not outside, f"{len(outside)} reaches into libraries' private parts outside an adapter:\n{report}"


def test_at_most_three_adapter_modules_each_listed_in_the_architecture():
    adapters = defaultdict(int)
    for file, _line, _what in reaches():
        if _is_adapter(ROOT / file):
            adapters[file] += 1
    assert len(adapters) <= ADAPTER_ALLOWANCE, dict(adapters)
    architecture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for file in adapters:
        assert file in architecture, f"{file} is an adapter; docs/architecture.md must list it and say why"


def test_the_check_sees_a_reach():
    """The scanner is not blind: the names it must catch are private names of the libraries."""
    private = library_private_names()
    for name in ("_tool_manager", "_resource_closers", "_readable_fields", "_iterable_class", "_complete"):
        assert name in private, name
    assert "_meta" not in private and "_request" not in private
