"""Argument types and pagination shared by the tools."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from lev.enums import ASSET_TYPES, BUSINESS_PLANS, LENDER_TYPES, LOAN_TYPES, TRANSACTION_TYPES, US_STATES
from mcp_tools.errors import validation_failure


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


def _upper(value: Any) -> Any:
    return value.strip().upper() if isinstance(value, str) else value


# Enums are matched case-insensitively; the schema lists the canonical lowercase values.
LoanType = Annotated[Literal[LOAN_TYPES], BeforeValidator(_lower)]  # type: ignore[valid-type]
TransactionType = Annotated[Literal[TRANSACTION_TYPES], BeforeValidator(_lower)]  # type: ignore[valid-type]
BusinessPlan = Annotated[Literal[BUSINESS_PLANS], BeforeValidator(_lower)]  # type: ignore[valid-type]
AssetType = Annotated[Literal[ASSET_TYPES], BeforeValidator(_lower)]  # type: ignore[valid-type]
LenderType = Annotated[Literal[LENDER_TYPES], BeforeValidator(_lower)]  # type: ignore[valid-type]
StateCode = Annotated[Literal[US_STATES], BeforeValidator(_upper)]  # type: ignore[valid-type]

Money = Annotated[float, Field(gt=0, description="US dollars, greater than 0.")]
Limit = Annotated[int, Field(ge=1, le=100, description="Items per page (default 20, max 100).")]
Cursor = Annotated[
    str | None,
    Field(description="Opaque next_cursor from the previous page; omit for the first page."),
]


def encode_cursor(page: int, limit: int) -> str:
    raw = json.dumps({"p": page, "l": limit}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None, limit: int) -> tuple[int, int]:
    """(page, page size) for a cursor; the first page for None. The cursor fixes the page size."""
    if not cursor:
        return 1, limit
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
        page, size = int(data["p"]), int(data["l"])
        if page < 1 or not 1 <= size <= 100:
            raise ValueError
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise validation_failure(
            {"cursor": ["is not a cursor this server issued; pass next_cursor back unchanged"]}
        ) from None
    return page, size


def page_result(key: str, body: dict[str, Any], page: int, size: int, items: list[Any]) -> dict[str, Any]:
    """A REST page (`count`, `next`) as the tools' page shape."""
    has_more = bool(body.get("next"))
    return {
        key: items,
        "total": body.get("count", len(items)),
        "has_more": has_more,
        "next_cursor": encode_cursor(page + 1, size) if has_more else None,
    }


def drop_none(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}
