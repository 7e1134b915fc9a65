"""Scopes: what a credential (API key or OAuth access token) may do. A public contract.

Every MCP tool declares one scope (`@tool(scope=...)`, mcp_tools.registry) and every REST view one
scope per HTTP method (`required_scopes`, checked by lev.accounts.permissions.HasRequiredScope); tests fail when
a tool or a REST route has none. Both doors read the same table, so a read-only credential is
read-only everywhere. Plain data and functions: the settings read this table too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

DEALS_READ = "deals:read"
DEALS_WRITE = "deals:write"
LENDERS_READ = "lenders:read"
SEARCHES_WRITE = "searches:write"
PLACEMENTS_READ = "placements:read"
PLACEMENTS_WRITE = "placements:write"
ACCOUNT_READ = "account:read"

# name -> what a person is asked to allow (the consent page and docs/oauth.md show these). The order is
# the order they are shown and written in.
SCOPES: dict[str, str] = {
    DEALS_READ: "See your account's deals, their properties and financials, and your companies and contacts",
    DEALS_WRITE: "Create, change and archive your account's deals, properties and financials, and keep your "
                 "companies and contacts and your own lenders and programs",
    LENDERS_READ: "Search the lender directory and your own lenders, and read lender search results",
    SEARCHES_WRITE: "Start lender searches for your account's deals",
    PLACEMENTS_READ: "See placements of your deals with lenders and their term sheets",
    PLACEMENTS_WRITE: "Create and update placements and term sheets, and choose the winning term sheet",
    ACCOUNT_READ: "See who you are here: your user, account and role, this connection's permissions and "
                  "the rate limits left",
}
ALL_SCOPES: frozenset[str] = frozenset(SCOPES)
# Granted to every credential, asked for or not, and never offered as a choice (consent page, admin):
# knowing who you are and what you may do is part of holding a credential. `get_account` and
# GET /api/v1/account/ need it; a person cannot take it away, so it is not stored with a key or token.
ALWAYS_GRANTED: frozenset[str] = frozenset({ACCOUNT_READ})
# The scopes a person or an admin chooses among.
CHOOSABLE: dict[str, str] = {name: text for name, text in SCOPES.items() if name not in ALWAYS_GRANTED}
READ_ONLY_SCOPES: frozenset[str] = frozenset({DEALS_READ, LENDERS_READ, PLACEMENTS_READ, ACCOUNT_READ})


def as_text(scopes: Iterable[str]) -> str:
    """Scopes as OAuth writes them: space-separated, in the table's order."""
    chosen = set(scopes)
    return " ".join(name for name in SCOPES if name in chosen)


def parse(text: str | Iterable[str]) -> frozenset[str]:
    """Scopes from a space- or comma-separated text (or a list); ValueError names an unknown one."""
    items = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    unknown = sorted(set(items) - ALL_SCOPES)
    if unknown:
        raise ValueError(f"unknown scope {unknown[0]!r}; the scopes are: {', '.join(SCOPES)}")
    return frozenset(items)


def known(text: str) -> frozenset[str]:
    """The scopes a stored scope text grants: those of this table in it, and ALWAYS_GRANTED; anything
    else in it grants nothing."""
    return (frozenset(text.split()) & ALL_SCOPES) | ALWAYS_GRANTED


def granted(credential: Any) -> frozenset[str]:
    """The scopes of a request's credential (`request.auth`): an API key's or an OAuth token's.

    A user signed in to the site itself (session, no bearer credential) acts with every scope, as the
    user; a credential that says nothing of scopes grants none."""
    if credential is None:
        return ALL_SCOPES
    return getattr(credential, "scope_set", frozenset())


def missing_scope_message(scope: str) -> str:
    return f"Forbidden: this needs the scope {scope}, which this credential was not granted"
