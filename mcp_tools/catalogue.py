"""The tool catalogue as `tools/list` publishes it: pydantic's schemas and the docstrings, compacted.

Every tool definition is read by the agent's model on every connection, so its bytes are context the
agent pays for (issue 21; bench/catalogue.py measures them, tests/mcp_tools/test_catalogue_budget.py
holds each tool to its budget). The compaction drops only what says nothing to a caller and keeps the
meaning of every schema exactly: every type, enum value, bound, pattern, format, default, required
name and description stays.

- `title` of every property and model: pydantic derives it from the name ("Loan Type" for loan_type);
- `"default": null`: an optional argument left out is null already;
- `anyOf: [{...}, {"type": "null"}]` becomes the one schema with "null" added to its `type` (and to
  its `enum`), which allows the same values;
- docstrings lose their indentation (`inspect.cleandoc`);
- the annotations' title, which repeats the tool's own `title`.

The tools validate their arguments with their pydantic models (`mcp_tools.calls`), never with the
published schema, so nothing here changes what a call accepts.
"""

from __future__ import annotations

import inspect
from typing import Any

from mcp.types import ToolAnnotations

NULL = {"type": "null"}


def compact_schema(schema: Any) -> Any:
    """A JSON Schema of pydantic's without what says nothing (see the module's docstring)."""
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    compacted: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue  # a name-derived label; "title" as a property name lives under "properties"
        if key == "default" and value is None:
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            compacted[key] = {name: compact_schema(sub) for name, sub in value.items()}
        else:
            compacted[key] = compact_schema(value)
    return _nullable(compacted)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """{"anyOf": [X, {"type": "null"}], ...} as X with "null" among its types, when X has one type."""
    options = schema.get("anyOf")
    if not (isinstance(options, list) and len(options) == 2 and options[1] == NULL):
        return schema
    value = options[0]
    if not isinstance(value.get("type"), str) or set(value) & set(schema) - {"anyOf"}:
        return schema  # a $ref, or keywords the outer schema has too: kept as it is
    merged = {key: item for key, item in value.items()}
    merged["type"] = [value["type"], "null"]
    if "enum" in merged:
        merged["enum"] = [*merged["enum"], None]
    merged.update((key, item) for key, item in schema.items() if key != "anyOf")
    return merged


def compact_description(text: str | None) -> str | None:
    return inspect.cleandoc(text) if text else text


def compact_annotations(annotations: ToolAnnotations | None) -> ToolAnnotations | None:
    """The hints without their title: the tool's `title` says it once."""
    return annotations.model_copy(update={"title": None}) if annotations is not None else None


def compact_tool(tool: Any) -> None:
    """Compact a registered tool (FastMCP's `Tool`) in place: what tools/list sends for it."""
    tool.parameters = compact_schema(tool.parameters)
    tool.description = compact_description(tool.description)
    tool.annotations = compact_annotations(tool.annotations)
