"""Errors have one code list: outside tests and migrations, each error code string is spelled in one
module, `lev/errors.py` (the `ErrorCode` enum); everything else names `ErrorCode.NOT_FOUND`.

The sources are read (every string constant of every Python file, f-string parts included), not the
loaded modules, so a literal `"NOT_FOUND"` in a module no test imports is seen too. Prose that
mentions a code inside a longer string (a docstring, a help text) is documentation, not a second
spelling of the code, and is allowed.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from lev.errors import ErrorCode

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / "lev" / "errors.py"
# The contract's codes (ARCHITECTURE.md, "The error contract") and the API's own METHOD_NOT_ALLOWED:
# the enum must keep them all, so the scan below can never be narrowed by dropping a member.
CONTRACT_CODES = {"VALIDATION_ERROR", "NOT_FOUND", "CONFLICT", "BUSINESS_RULE", "AUTH_ERROR", "FORBIDDEN",
                  "RATE_LIMITED", "UPSTREAM_UNAVAILABLE", "INTERNAL_ERROR", "METHOD_NOT_ALLOWED"}


def _sources() -> list[Path]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if parts[0] == "tests" or "migrations" in parts or any(
                p.startswith(".") or p.endswith(".egg-info") or p in ("node_modules", "__pycache__") for p in parts):
            continue
        found.append(path)
    return found


def code_literals(paths: list[Path]) -> dict[str, list[str]]:
    """code -> ["path:line", ...] for every string constant that is exactly an error code."""
    codes = {code.value for code in ErrorCode}
    spelled: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in codes:
                where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                spelled[node.value].append(f"{where}:{node.lineno}")
    return spelled


def test_the_enum_holds_every_code():
    assert {code.value for code in ErrorCode} == CONTRACT_CODES
    assert all(code.name == code.value for code in ErrorCode)


def test_each_error_code_is_spelled_only_in_lev_errors():
    sources = _sources()
    # The walk found the packages (an empty or misrooted walk would pass vacuously).
    assert {"lev", "lenders", "deals", "mcp_tools"} <= {p.relative_to(ROOT).parts[0] for p in sources}
    spelled = code_literals(sources)
    home = str(HOME.relative_to(ROOT))
    outside = {code: [at for at in places if not at.startswith(home + ":")] for code, places in spelled.items()}
    outside = {code: places for code, places in outside.items() if places}
    assert not outside, f"error codes spelled outside {home} (use lev.errors.ErrorCode): {outside}"
    # ... and once there, in the enum.
    assert {code: len(places) for code, places in spelled.items()} == dict.fromkeys(CONTRACT_CODES, 1)


def test_the_scan_sees_a_literal(tmp_path):
    """The check would notice: a module spelling a code is reported (in a dict, a call, anywhere)."""
    module = tmp_path / "stray.py"
    module.write_text('def f(x):\n    return {"code": "NOT_FOUND", "m": f"{x}"} if x else g("CONFLICT")\n')
    assert code_literals([module]) == {"NOT_FOUND": [f"{module}:2"], "CONFLICT": [f"{module}:2"]}
