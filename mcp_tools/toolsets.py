"""Toolsets and read-only mode: which tools one connection sees, chosen by the client.

The full catalogue costs an agent its context window before it has done anything; a client that
needs part of it asks for that part, on every request (the endpoint is stateless), in either of the
two ways GitHub's MCP server offers:

* headers: `X-MCP-Toolsets: deals,placements` (comma-separated, whitespace ignored) and
  `X-MCP-Readonly: true` (empty, false, f, no, n, 0 and off, in any case, mean false);
* the URL: `/mcp/x/deals`, `/mcp/x/deals,placements`, `/mcp/x/deals/readonly`, `/mcp/readonly`.

A tool is listed and callable when its toolset is selected (every one when none is named), when it
only reads in read-only mode, and when the credential's scopes allow it: the narrowest of them wins.
A URL and a header that both name toolsets select the ones both name. An unknown toolset is a 400
naming the known ones (a typo must not silently leave an agent without its tools).

The toolsets are the modules of `mcp_tools.tools` that hold tools (account, companies, deals, documents,
lenders, notes, pipeline, placements; `common` holds none): the module a tool is written in is the toolset
it is listed in.

The selection of the request being answered is also `current()` while the endpoint answers it (the
view binds it), so a tool can say what its connection chose (`get_account`).
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass

from lev.errors import ValidationFailed
from mcp_tools.registry import TOOLS, ToolSpec

TOOLSETS_HEADER = "X-MCP-Toolsets"
READONLY_HEADER = "X-MCP-Readonly"
READONLY_SEGMENT = "readonly"
_FALSE = frozenset({"", "false", "f", "no", "n", "0", "off"})


def toolset_of(spec: ToolSpec) -> str:
    return spec.fn.__module__.rsplit(".", 1)[-1]


def toolsets() -> tuple[str, ...]:
    """Every toolset, in name order."""
    return tuple(sorted({toolset_of(spec) for spec in TOOLS.values()}))


@dataclass(frozen=True)
class Selection:
    """The part of the catalogue a request asked for: `names` None is every toolset."""

    names: frozenset[str] | None = None
    read_only: bool = False

    def allows(self, spec: ToolSpec) -> bool:
        return (self.names is None or toolset_of(spec) in self.names) and \
            (not self.read_only or bool(spec.annotations.readOnlyHint))

    def describe(self) -> str:
        chosen = ", ".join(sorted(self.names)) if self.names is not None else "every toolset"
        return chosen + (", read-only" if self.read_only else "")


EVERYTHING = Selection()

_current: contextvars.ContextVar[Selection] = contextvars.ContextVar("mcp_selection", default=EVERYTHING)


def current() -> Selection:
    """The selection of the MCP request being answered (EVERYTHING outside one)."""
    return _current.get()


def bind(selection: Selection) -> contextvars.Token:
    return _current.set(selection)


def unbind(token: contextvars.Token) -> None:
    _current.reset(token)


def _names(text: str, where: str) -> frozenset[str]:
    names = frozenset(part.strip().lower() for part in text.split(",") if part.strip())
    unknown = sorted(names - set(toolsets()))
    if unknown or not names:
        known = ", ".join(toolsets())
        problem = f"names no toolset of this server ({', '.join(unknown)})" if unknown else "names no toolset"
        raise ValidationFailed(
            {where: [f"{problem}; the toolsets are: {known}"]},
            message=f"Validation failed: {where} {problem}; the toolsets are: {known}",
        )
    return names


def selection_of(headers, url_toolsets: str | None = None, url_read_only: bool = False) -> Selection:
    """The selection of one request: its URL's toolsets and read-only segment, and its headers."""
    names: frozenset[str] | None = None
    if url_toolsets is not None:
        names = _names(url_toolsets, "url")
    header = headers.get(TOOLSETS_HEADER)
    if header is not None and header.strip():
        chosen = _names(header, TOOLSETS_HEADER)
        names = chosen if names is None else names & chosen
    read_only = url_read_only or (headers.get(READONLY_HEADER, "").strip().lower() not in _FALSE)
    return Selection(names, read_only)
