"""Tools answered at the protocol level by an app installed beside `mcp_tools`: today only the MCP
conformance suite's diagnostic tools (`mcp_tools.conformance`, installed by test and conformance settings,
never by production's). Such an app registers a provider from its `AppConfig.ready()`; both revisions'
dispatchers ask the providers before the tool registry. With none installed, nothing changes.

A provider has `listed(result, *, modern_era) -> result` (tools/list with its tools added),
`owns(name, *, modern_era) -> bool`, `call_legacy(name) -> str` (a 2025-11-25 result's JSON) and
`call_modern(request, message, server_info) -> HttpResponse` (a whole 2026-07-28 answer).
"""

from __future__ import annotations

from typing import Any

_providers: list[Any] = []


def register(provider: Any) -> None:
    if provider not in _providers:
        _providers.append(provider)


def listed(result: dict[str, Any], *, modern_era: bool) -> dict[str, Any]:
    for provider in _providers:
        result = provider.listed(result, modern_era=modern_era)
    return result


def owner(name: Any, *, modern_era: bool) -> Any:
    """The provider answering a tools/call of `name`, or None (the tool registry's, or unknown)."""
    return next((p for p in _providers if p.owns(name, modern_era=modern_era)), None)
