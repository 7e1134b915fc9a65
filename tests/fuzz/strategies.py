"""Arguments for MCP tools, derived from each tool's published inputSchema: valid ones (every
value the schema allows) and hostile ones (what an attacker or a confused model might send)."""

from __future__ import annotations

import copy
import datetime as dt
import json
import math
from typing import Any

from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker

# Placeholders replaced in the JSON text after encoding: values json.dumps cannot write or that the
# request must carry raw (3,000 levels of nesting; see `encode`).
DEEP = "\u2063DEEP-NESTING\u2063"
DEEP_LEVELS = 3000

ID_ARGUMENTS = {"deal_id": "deal_ids", "lender_id": "lender_ids", "search_id": "search_ids",
                "placement_id": "placement_ids", "term_sheet_id": "term_sheet_ids"}


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as the server enforces it: unknown arguments refused (the server does so; the
    published schema is checked to say so too), and `cursor` only ever a value the server issued,
    which no schema can describe, so here any cursor string counts as invalid."""
    strict = copy.deepcopy(schema)
    strict["additionalProperties"] = False
    if "cursor" in strict.get("properties", {}):
        strict["properties"]["cursor"] = {"type": "null"}
    return strict


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator(schema, format_checker=FormatChecker())


def from_schema(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> st.SearchStrategy[Any]:
    """Values of a JSON Schema, for the subset pydantic writes for tool arguments (object,
    properties/required/additionalProperties, anyOf, enum, $ref to $defs, string with length,
    pattern and date format, integer and number with bounds, boolean, null, array with maxItems).
    Written here because hypothesis-jsonschema no longer runs on current hypothesis; an unknown
    keyword fails loudly, so a new kind of argument is never fuzzed with values it does not allow."""
    defs = schema.get("$defs", {}) if defs is None else defs
    known = {"title", "description", "default", "examples", "$defs"}
    if "$ref" in schema:
        return from_schema(defs[schema["$ref"].split("/")[-1]], defs)
    if "anyOf" in schema:
        return st.one_of([from_schema(option, defs) for option in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    unknown = set(schema) - known - {
        "type", "properties", "required", "additionalProperties", "minLength", "maxLength", "pattern", "format",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "items", "maxItems", "minItems",
    }
    if unknown or kind not in {"object", "string", "integer", "number", "boolean", "null", "array"}:
        raise AssertionError(f"schema keywords the fuzzer does not know: {sorted(unknown)} {kind!r}")
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind in ("integer", "number"):
        low, high = schema.get("minimum"), schema.get("maximum")
        int_low = math.floor(schema["exclusiveMinimum"]) + 1 if "exclusiveMinimum" in schema else low
        int_high = math.ceil(schema["exclusiveMaximum"]) - 1 if "exclusiveMaximum" in schema else high
        integers = st.integers(min_value=None if int_low is None else math.ceil(int_low),
                               max_value=None if int_high is None else math.floor(int_high))
        if kind == "integer":
            return integers
        return integers | st.floats(
            min_value=schema.get("exclusiveMinimum", low), max_value=schema.get("exclusiveMaximum", high),
            exclude_min="exclusiveMinimum" in schema, exclude_max="exclusiveMaximum" in schema,
            allow_nan=False, allow_infinity=False,
        )
    if kind == "string":
        if schema.get("format") == "date":
            return st.dates(min_value=dt.date(1, 1, 1)).map(dt.date.isoformat)
        if "pattern" in schema:
            strings = st.from_regex(schema["pattern"], fullmatch=True)
        else:
            strings = st.text(min_size=schema.get("minLength", 0), max_size=schema.get("maxLength"))
        # Valid text is Unicode: no lone surrogates (hostile_arguments sends those).
        return strings.filter(lambda text: schema.get("minLength", 0) <= len(text) <= schema.get("maxLength", 10**9)
                              and not any(0xD800 <= ord(char) <= 0xDFFF for char in text))
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {}), defs), min_size=schema.get("minItems", 0),
                        max_size=schema.get("maxItems", 5))
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    return st.fixed_dictionaries(
        {name: from_schema(sub, defs) for name, sub in properties.items() if name in required},
        optional={name: from_schema(sub, defs) for name, sub in properties.items() if name not in required},
    )


def valid_arguments(schema: dict[str, Any], world: Any) -> st.SearchStrategy[dict[str, Any]]:
    """Every argument set the schema allows; ids point at existing rows half of the time."""
    strict = strict_schema(schema)
    strict["properties"] = {k: v for k, v in strict.get("properties", {}).items() if k != "cursor"}
    overrides = {
        name: st.one_of(st.none(), st.sampled_from(getattr(world, attr)))
        for name, attr in ID_ARGUMENTS.items() if name in strict["properties"]
    }

    def merge(pair: tuple[dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
        arguments, ids = pair
        return {**arguments, **{k: v for k, v in ids.items() if v is not None}}

    return st.tuples(from_schema(strict), st.fixed_dictionaries(overrides)).map(merge)


json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20)
)
nested_garbage = st.recursive(
    json_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)

HOSTILE_STRINGS = [
    "", " ", "\t\n ", "\x00", "a\x00b", "x" * 100_000, "é" * 5000, "\ud800", "a\udfffb", "\U0001f4a9" * 300,
    "[" * DEEP_LEVELS, '{"a":' * 1000, "[1]", "{}", '{"p":1e999,"l":20}', "null", "true", "0", "-1", "1e999",
    "NaN", "Infinity", "2024-02-30", "0000-00-00", "99999-12-31", "1970-01-01T00:00:00Z", "'; DROP TABLE deals;--",
    "../../../etc/passwd", "%00", "<script>alert(1)</script>", "${jndi:ldap://x}", "\u202e\u0000\ufeff",
    "eyJwIjoxZTk5OSwibCI6MjB9",  # base64 of a tampered cursor {"p":1e999,"l":20}
    "W1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tb",  # base64 of "[[[[..."
]
HOSTILE_NUMBERS = [
    0, -1, -0.0, 1, 10**20, -(10**20), 2**31, 2**63, 2**64, 10**400, 1e308, -1e308, 5e-324, 0.5, 1.0, 1e16 + 1,
]
NON_FINITE = [math.inf, -math.inf, math.nan]

hostile_values = st.one_of(
    st.sampled_from(HOSTILE_STRINGS),
    st.sampled_from(HOSTILE_NUMBERS),
    st.sampled_from(NON_FINITE),
    st.just(DEEP),
    st.booleans(),
    st.none(),
    st.text(),  # includes NUL and other control characters
    st.text(st.characters(categories=["Cs", "Co", "Cc", "Zs", "Mn"]), max_size=30),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    nested_garbage,
    st.lists(st.integers(), min_size=200, max_size=300),
)


@st.composite
def hostile_arguments(draw: st.DrawFn, schema: dict[str, Any], world: Any) -> Any:
    """A valid argument set broken in one to three ways, or no argument object at all."""
    properties = list(schema.get("properties", {}))
    required = list(schema.get("required", []))
    kind = draw(st.sampled_from(["values", "values", "values", "unknown", "missing", "not_an_object"]))
    if kind == "not_an_object":
        return draw(st.one_of(st.lists(json_scalars, max_size=3), json_scalars))
    arguments = dict(draw(valid_arguments(schema, world)))
    if kind == "missing" and required:
        arguments.pop(draw(st.sampled_from(required)), None)
    elif kind == "unknown":
        name = draw(st.one_of(st.sampled_from(["id", "account", "__proto__", "deal", "x" * 300, "", "\x00"]),
                              st.text(max_size=10)))
        if name not in properties:
            arguments[name] = draw(hostile_values)
    for name in draw(st.lists(st.sampled_from(properties), min_size=1, max_size=3, unique=True)) if properties else []:
        arguments[name] = draw(hostile_values)
    return arguments


def contains_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(contains_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(contains_non_finite(v) for v in value)
    return False


def contains_deep(value: Any) -> bool:
    if isinstance(value, str):
        return value == DEEP
    if isinstance(value, dict):
        return any(contains_deep(v) for v in value.values())
    if isinstance(value, list):
        return any(contains_deep(v) for v in value)
    return False


def encode(message: Any) -> str:
    """JSON text of a message, with raw NaN/Infinity where the values are non-finite (JSON has no
    such tokens: the body is then malformed) and DEEP replaced by 3,000 nested arrays."""
    text = json.dumps(message)  # allow_nan: writes NaN / Infinity / -Infinity tokens
    return text.replace(json.dumps(DEEP), "[" * DEEP_LEVELS + "]" * DEEP_LEVELS)
