"""A tool call's arguments, checked before the tool runs: what cannot be JSON (lone surrogates, nesting
deeper than any argument has, integers past Python's digit limit) is named here, the rest is validated
as JSON by the tool's pydantic model in strict mode (`mcp_tools.calls`), and pydantic's errors become
plain-language messages after the argument's name ("loan_amount must be at least 1").
"""

from __future__ import annotations

import json
import math
from typing import Any

import pydantic

from lev import limits

# pydantic error types -> messages that follow an argument name ("loan_amount must be ...").
_MESSAGES = {
    "missing": "is required",
    "extra_forbidden": "is not a known argument",
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
    "int_parsing": "must be a whole number",
    "int_type": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_parsing": "must be a number",
    "float_type": "must be a number",
    "finite_number": "must be a finite number",
    "bool_parsing": "must be true or false",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "string_unicode": "must be valid Unicode text",
    "string_too_short": "may not be empty",
    "string_too_long": "must be at most {max_length} characters",
    "string_pattern_mismatch": "has the wrong format",
    "date_parsing": "must be a date in YYYY-MM-DD format",
    "date_from_datetime_parsing": "must be a date in YYYY-MM-DD format",
    "date_type": "must be a date in YYYY-MM-DD format",
    "list_type": "must be a list",
    "too_long": "may list at most {max_length} items",
    "model_type": "must be an object",
    "dict_type": "must be an object",
    "json_invalid": "is not valid JSON",
}
# A wrong JSON type is named, so "must be a whole number, not true or false" says what went wrong.
_TYPE_ERRORS = {"int_type", "float_type", "bool_type", "string_type", "date_type", "list_type", "model_type",
                "dict_type"}
# Patterns of lev.limits -> what a value that misses them lacks.
_PATTERN_MESSAGES = {
    limits.TEXT_PATTERN: "may not contain control characters",
    limits.NON_BLANK_TEXT_PATTERN: "may not be blank or contain control characters",
    limits.ZIP_PATTERN: "must be a 5-digit ZIP code (or ZIP+4)",
    limits.IDEMPOTENCY_KEY_PATTERN: f"must be 1 to {limits.IDEMPOTENCY_KEY_MAX} visible ASCII characters "
                                    "(no spaces or control characters)",
    limits.EMAIL_PATTERN: "must be an email address such as name@lender.com",
}
# Tool arguments are at most a list of objects deep; anything much deeper is garbage, refused before
# it is serialized (so no RecursionError).
MAX_ARGUMENT_DEPTH = 8


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if value is None:
        return "null"
    return {str: "a string", int: "a number", float: "a number", list: "a list", dict: "an object"}.get(
        type(value), "another type")


def printable(name: str) -> str:
    """An argument name as it may appear in an answer: control and surrogate characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


def arg_errors(exc: pydantic.ValidationError) -> dict[str, list[str]]:
    """Name each bad argument (dotted path for nested ones) with a plain-language message."""
    fields: dict[str, list[str]] = {}
    for error in exc.errors():
        # pydantic adds union branches and validator names to the location; keep field names
        # and list indexes only.
        loc = [str(p) for p in error.get("loc", ()) if isinstance(p, int) or p.isidentifier()]
        loc = [p for p in loc if p not in ("str", "int", "float", "bool", "date", "list", "dict", "none")]
        name = ".".join(loc) or "arguments"
        kind = error.get("type", "")
        ctx = {k: int(v) if isinstance(v, float) and v.is_integer() else v
               for k, v in (error.get("ctx") or {}).items()}
        if kind in _TYPE_ERRORS and isinstance(error.get("input"), float) and not math.isfinite(error["input"]):
            # 1e400 and the like read as infinity, for an integer argument too: not "a number".
            message = _MESSAGES["finite_number"]
        elif kind == "literal_error":
            message = "must be one of: " + str(ctx.get("expected", "")).replace("'", "").replace(" or ", ", ")
        elif kind == "string_pattern_mismatch" and ctx.get("pattern") in _PATTERN_MESSAGES:
            message = _PATTERN_MESSAGES[ctx["pattern"]]
        elif kind in _MESSAGES:
            try:
                message = _MESSAGES[kind].format(**ctx)
            except (KeyError, IndexError):
                message = _MESSAGES[kind].split(" {")[0]
            if kind in _TYPE_ERRORS and "input" in error:
                message += f", not {_json_kind(error['input'])}"
        else:
            text = error.get("msg") or "is invalid"
            message = text[0].lower() + text[1:]
        if message not in fields.get(name, []):
            fields.setdefault(name, []).append(message)
    return fields


def _unreadable(name: str, value: Any) -> dict[str, list[str]]:
    """Errors for what no schema check can name: lone surrogates (not encodable, so not JSON pydantic
    can read) and nesting deeper than any argument has. Walks iteratively: depth is what is checked."""
    fields: dict[str, list[str]] = {}
    stack: list[tuple[str, Any, int]] = [(name, value, 0)]
    while stack:
        path, item, depth = stack.pop()
        if depth > MAX_ARGUMENT_DEPTH:
            fields.setdefault(name, ["is nested too deeply"])
            continue
        if isinstance(item, dict):
            for key, child in item.items():
                if not _is_utf8(key):
                    fields.setdefault(printable(path), ["holds a key that is not valid Unicode text "
                                                         "(a lone surrogate)"])
                else:
                    stack.append((f"{path}.{key}", child, depth + 1))
        elif isinstance(item, list):
            stack.extend((f"{path}.{index}", child, depth + 1) for index, child in enumerate(item))
        elif isinstance(item, str) and not _is_utf8(item):
            fields.setdefault(printable(path), ["must be valid Unicode text (it holds a lone surrogate)"])
    return fields


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _integral_numbers(value: Any) -> Any:
    """5.0 as 5: JSON Schema calls any number without a fraction an integer, and a JSON parser may
    hand it over as a float. (A float argument takes an integer in strict mode too.)"""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_integral_numbers(item) for item in value]
    if isinstance(value, dict):
        return {key: _integral_numbers(item) for key, item in value.items()}
    return value


def arguments_json(arguments: dict[str, Any]) -> tuple[str | None, dict[str, list[str]]]:
    """The arguments as one JSON object, for pydantic's strict JSON validation, or the errors of
    the arguments that cannot be written as JSON (each named)."""
    parts: list[str] = []
    fields: dict[str, list[str]] = {}
    for name, value in arguments.items():
        problems = _unreadable(name, value)
        if problems:
            fields.update(problems)
            continue
        try:
            parts.append(f"{json.dumps(name)}:{json.dumps(_integral_numbers(value))}")
        except ValueError:  # an integer past Python's int/str digit limit
            fields[name] = ["is too large a number"]
    return ("{" + ",".join(parts) + "}", fields) if not fields else (None, fields)
