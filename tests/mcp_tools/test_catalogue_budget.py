"""The catalogue an agent pays for (issue 21): every tool's tools/list entry within its byte budget,
and the compaction (mcp_tools/catalogue.py) losing nothing an agent needs to call it.

The baseline is each tool's bytes before compaction (bench/catalogue_baseline.json, from main on
2026-11-24); `bench/catalogue.py` prints the same numbers with token estimates. A tool that grows past
its budget fails here: shorten its docstring or argument descriptions (or, if it truly needs more, say
why in the baseline file's history, not by raising the budget quietly)."""

from __future__ import annotations

import re
from typing import Annotated, Any

import pytest
from pydantic import Field, TypeAdapter, ValidationError

from bench.catalogue import BUDGET, baseline, measure
from lev import limits
from mcp_tools.registry import TOOLS
from mcp_tools.server import get_server

# A tool added after the baseline has no bytes of its own to shrink from: it gets this many.
NEW_TOOL_BYTES = 2000
# New tools that need more, each saying why (not a quiet raise of the budget).
NEW_TOOL_BYTES_STATED = {
    # A program's whole box and terms (issue 38), every one read by the ranking's filters, its fit or the
    # sizing: 24 arguments, the 51 states' enum alone 431 bytes (add_term_sheet, a quote's terms: 2830),
    # and the rules over two arguments its description must state (tests/fuzz: CROSS_ARGUMENT_RULES).
    "add_lender_program": 4000,
}
# Tools that take no argument: their schema has nothing to lose but the refusal of unknown ones.
NO_ARGUMENTS = {"get_account", "get_pipeline"}
# What a schema says that a caller relies on: compared, keyword by keyword, between pydantic's schema
# and the published one. (Titles and `default: null` are dropped on purpose; descriptions are edited
# by hand and held to the budget instead.)
MEANING = {"type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
           "maxLength", "pattern", "format", "minItems", "maxItems", "required", "additionalProperties", "$ref",
           "default"}


def test_every_tool_is_within_its_budget_and_the_catalogue_within_the_total():
    sizes, before = measure(), baseline()
    over = {name: (info["bytes"], int(before[name] * BUDGET)) for name, info in sizes.items()
            if name in before and info["bytes"] > before[name] * BUDGET}
    assert not over, f"tools over their budget, {BUDGET:.0%} of their baseline bytes (now, budget): {over}"
    new = {name: info["bytes"] for name, info in sizes.items() if name not in before}
    allowed = {name: NEW_TOOL_BYTES_STATED.get(name, NEW_TOOL_BYTES) for name in new}
    assert all(size <= allowed[name] for name, size in new.items()), f"new tools over their bytes: {new}, {allowed}"
    total = sum(int(info["bytes"]) for info in sizes.values())
    budget = sum(before[name] * BUDGET for name in sizes if name in before) + sum(allowed.values())
    assert total <= budget, (total, budget)
    assert len(sizes) == len(TOOLS)


def facts(schema: Any, defs: dict[str, Any], path: str = "") -> dict[str, Any]:
    """path -> the value of every MEANING keyword, with a nullable property written one way (pydantic's
    anyOf with {"type": "null"} and the compact "type": [..., "null"] both read as `nullable`)."""
    found: dict[str, Any] = {}
    if not isinstance(schema, dict):
        return found
    options = schema.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        found[f"{path}/nullable"] = True
        rest = [option for option in options if option != {"type": "null"}]
        outer = {key: value for key, value in schema.items() if key != "anyOf"}
        schema = {**outer, **rest[0]} if len(rest) == 1 else {**outer, "anyOf": rest}
    kind = schema.get("type")
    if isinstance(kind, list) and "null" in kind:
        found[f"{path}/nullable"] = True
        kinds = [k for k in kind if k != "null"]
        schema = {**schema, "type": kinds[0] if len(kinds) == 1 else kinds}
        if "enum" in schema:
            schema["enum"] = [value for value in schema["enum"] if value is not None]
    for key, value in schema.items():
        if key == "default" and value is None:
            continue  # null is what an optional argument left out is anyway
        if key in MEANING:
            found[f"{path}/{key}"] = value
        elif key == "properties":
            for name, sub in value.items():
                found.update(facts(sub, defs, f"{path}/properties/{name}"))
        elif key == "$defs":
            for name, sub in value.items():
                found.update(facts(sub, defs, f"{path}/$defs/{name}"))
        elif key == "items":
            found.update(facts(value, defs, f"{path}/items"))
        elif key == "anyOf":
            for index, sub in enumerate(value):
                found.update(facts(sub, defs, f"{path}/anyOf/{index}"))
    return found


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_the_published_schema_keeps_every_type_enum_bound_pattern_and_required_name(name):
    tool = get_server().tools_by_name[name]
    pydantic_schema = {**tool.fn_metadata.arg_model.model_json_schema(by_alias=True), "additionalProperties": False}
    published = next(t for t in get_server().tools_list_result["tools"] if t["name"] == name)["inputSchema"]
    expected, got = facts(pydantic_schema, {}), facts(published, {})
    assert got == expected
    if name in NO_ARGUMENTS:
        assert published == {"type": "object", "properties": {}, "additionalProperties": False}
        return
    # Not vacuous: the tools' arguments have bounds and enums to lose.
    assert any(key.endswith(("/maximum", "/enum", "/maxLength")) for key in expected), name


def test_the_catalogue_keeps_what_an_agent_reads():
    listed = {t["name"]: t for t in get_server().tools_list_result["tools"]}
    for name, spec in TOOLS.items():
        tool = listed[name]
        assert tool["title"] == spec.annotations.title and tool["description"].strip(), name
        hints = tool["annotations"]
        assert (hints["readOnlyHint"], hints["destructiveHint"], hints["idempotentHint"]) == (
            spec.annotations.readOnlyHint, spec.annotations.destructiveHint, spec.annotations.idempotentHint), name
        assert "title" not in tool["inputSchema"] and "\n    " not in tool["description"], name
    # Format examples an agent copies stay in the argument descriptions.
    create = listed["create_deal"]["inputSchema"]
    assert "YYYY-MM-DD" in create["properties"]["estimated_close_date"]["description"]
    assert "18500000" in create["properties"]["loan_amount"]["description"]
    assert "12345-6789" in create["$defs"]["PropertyInput"]["properties"]["zip"]["description"]


def test_the_short_non_blank_pattern_means_what_the_long_one_did():
    """NON_BLANK_TEXT_PATTERN's middle class is written short (it is in every schema with a required
    text): it must refuse exactly the whitespace and control characters the long form listed."""
    long_form = re.compile(rf"[^{limits.WHITESPACE}{limits.CONTROL_CHARACTERS}]")
    pattern = re.compile(limits.NON_BLANK_TEXT_PATTERN)
    differ = [hex(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF
              and bool(long_form.fullmatch(chr(code))) != bool(pattern.fullmatch(chr(code)))]
    assert not differ
    assert pattern.fullmatch(" a\t") and not pattern.fullmatch(" \u3000\t") and not pattern.fullmatch("a\x00")


def test_the_control_class_refuses_exactly_the_c0_controls_but_tab_newline_and_return():
    """CONTROL_CHARACTERS writes U+000B and U+000C as \\v and \\f (shorter in every schema): Python's re and
    pydantic's engine (the one that validates the tools' arguments) both read them so."""
    meant = {*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20)}
    refused = re.compile(f"[{limits.CONTROL_CHARACTERS}]")
    assert {code for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF and refused.fullmatch(chr(code))} == meant
    text = TypeAdapter(Annotated[str, Field(pattern=limits.TEXT_PATTERN)])
    for code in range(0x00, 0x100):
        try:
            text.validate_python(f"a{chr(code)}b")
            accepted = True
        except ValidationError:
            accepted = False
        assert accepted == (code not in meant), hex(code)
