"""Arguments for MCP tools, derived from each tool's published inputSchema: valid ones (every
value the schema allows) and hostile ones (what an attacker or a confused model might send)."""

from __future__ import annotations

import copy
import datetime as dt
import itertools
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
                "placement_id": "placement_ids", "term_sheet_id": "term_sheet_ids", "stage_id": "stage_ids",
                "company_id": "company_ids"}


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
    properties/required/additionalProperties, anyOf, enum, one type or a list of types, $ref to $defs,
    string with length, pattern and date format, integer and number with bounds and a `not` range, boolean,
    null, array with maxItems).
    Written here because hypothesis-jsonschema no longer runs on current hypothesis; an unknown
    keyword fails loudly, so a new kind of argument is never fuzzed with values it does not allow."""
    defs = schema.get("$defs", {}) if defs is None else defs
    known = {"title", "description", "default", "examples", "$defs"}
    if "not" in schema:
        # A range the value must stay out of (a percent's fraction gap, issue 22): the values of the
        # rest of the schema, less those the `not` schema holds.
        excluded = validator(schema["not"])
        rest = {key: value for key, value in schema.items() if key != "not"}
        return from_schema(rest, defs).filter(lambda value: not excluded.is_valid(value))
    if "$ref" in schema:
        return from_schema(defs[schema["$ref"].split("/")[-1]], defs)
    if "anyOf" in schema:
        return st.one_of([from_schema(option, defs) for option in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):  # "type": ["string", "null"]: a value of any of the types
        return st.one_of([from_schema({**schema, "type": one}, defs) for one in kind])
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

# Numbers no float holds (issue #19): integers of 310 digits and more (json.dumps writes them out in
# full; Python reads up to 4,300 digits) and literals past a float's range, which Python's json reads
# as infinity. A money argument given one raised OverflowError and /mcp answered HTTP 500. Literals are
# placeholders written into the JSON text by `encode`, as json.dumps cannot write them.
HUGE_LITERALS = ["1e400", "-1e400", "1E+999", "-2.5e308", "1" + "0" * 400 + ".0", "1.7976931348623159e308"]
_LITERAL = "\u2063NUMBER:{}\u2063"
huge_numbers = st.one_of(
    st.integers(min_value=10**309, max_value=10**4000),
    st.integers(min_value=-(10**4000), max_value=-(10**309)),
    st.sampled_from([10**309, -(10**309), 10**400, -(10**400), 2**1024, 10**4299]),
    st.sampled_from([_LITERAL.format(literal) for literal in HUGE_LITERALS]),
)

hostile_values = st.one_of(
    st.sampled_from(HOSTILE_STRINGS),
    st.sampled_from(HOSTILE_NUMBERS),
    st.sampled_from(NON_FINITE),
    huge_numbers,
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
    such tokens: the body is then malformed), DEEP replaced by 3,000 nested arrays and the
    placeholders of HUGE_LITERALS by the number literals they stand for."""
    text = json.dumps(message)  # allow_nan: writes NaN / Infinity / -Infinity tokens
    for literal in HUGE_LITERALS:
        text = text.replace(json.dumps(_LITERAL.format(literal)), literal)
    return text.replace(json.dumps(DEEP), "[" * DEEP_LEVELS + "]" * DEEP_LEVELS)


def as_sent(value: Any) -> Any:
    """`value` as the server reads it: each HUGE_LITERALS placeholder as the number Python's json
    makes of its literal (1e400 is infinity), for judging which arguments the schema allows."""
    if isinstance(value, str):
        for literal in HUGE_LITERALS:
            if value == _LITERAL.format(literal):
                return json.loads(literal)
        return value
    if isinstance(value, dict):
        return {key: as_sent(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_sent(item) for item in value]
    return value


def numeric_paths(schema: dict[str, Any], defs: dict[str, Any] | None = None,
                  path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """The path of every integer and number a value of `schema` can hold that a client may send:
    properties, array items (index 0), $ref (to `defs`: a tool schema's $defs, or an OpenAPI
    document's components.schemas) and allOf/anyOf/oneOf branches; readOnly ones left out.
    (`properties.0.units` is ("properties", 0, "units").)"""
    defs = schema.get("$defs", {}) if defs is None else defs
    if "$ref" in schema:
        return numeric_paths(defs[schema["$ref"].split("/")[-1]], defs, path)
    found = [found for key in ("allOf", "anyOf", "oneOf") for option in schema.get(key, [])
             for found in numeric_paths(option, defs, path)]
    kinds = schema.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds}  # "type": ["integer", "null"] too
    if kinds & {"integer", "number"} and not schema.get("readOnly"):
        found.append(path)
    elif "array" in kinds:
        found += numeric_paths(schema.get("items", {}), defs, (*path, 0))
    for name, sub in schema.get("properties", {}).items():
        found += numeric_paths(sub, defs, (*path, name))
    return list(dict.fromkeys(found))


def dotted(path: tuple[str | int, ...]) -> str:
    """A path as the API and the tools name it in `details.fields` ("properties.0.units")."""
    return ".".join(str(step) for step in path)


def put(arguments: dict[str, Any], path: tuple[str | int, ...], value: Any) -> None:
    """Set `value` at `path`, making the lists and objects on the way where they are missing."""
    holder: Any = arguments
    for step, following in itertools.pairwise(path):
        fresh: Any = [] if isinstance(following, int) else {}
        if isinstance(step, int):
            if not holder:
                holder.append(fresh)
            elif not isinstance(holder[0], type(fresh)):
                holder[0] = fresh
            holder = holder[0]
        else:
            if not isinstance(holder.get(step), type(fresh)):
                holder[step] = fresh
            holder = holder[step]
    if isinstance(path[-1], int):
        holder[:1] = [value]
    else:
        holder[path[-1]] = value


@st.composite
def huge_number_arguments(draw: st.DrawFn, schema: dict[str, Any], world: Any) -> tuple[Any, list[str]]:
    """A valid argument set with one or two of its numbers (top level or nested) replaced by a
    number no float holds; also the dotted names of the replaced arguments."""
    arguments = copy.deepcopy(dict(draw(valid_arguments(schema, world))))
    paths = draw(st.lists(st.sampled_from(numeric_paths(schema)), min_size=1, max_size=2,
                          unique_by=lambda path: path[0]))
    for path in paths:
        put(arguments, path, draw(huge_numbers))
    return arguments, [dotted(path) for path in paths]
