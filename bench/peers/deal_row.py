"""The one deal read every peer server answers `get_deal` with: the same row, the same columns, the same
JSON payload as Lev's `get_deal` (`{"deal": ...}` as `deals.serializers.DealSerializer` writes it), as the
same MCP result (the compact JSON text and the same object as structuredContent).

Standard library only: the peers import it from their own virtualenvs (bench/peers/run.py puts this
folder on their PYTHONPATH), the django-mcp-server peer and the tests from ours.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

# One SELECT: the deal and what its payload names (stage, owner, sponsor, borrower), by primary key.
SQL = """
SELECT d.id, d.title, d.loan_amount, d.loan_type, d.transaction_type, d.business_plan, d.description,
       d.estimated_close_date, s.id, s.key, s.name, s.kind, u.id, u.username, sp.id, sp.name, sp.kind,
       b.id, b.name, b.kind, d.archived, d.archived_at, d.created_at, d.updated_at
  FROM deals_deal d
  JOIN deals_stage s ON s.id = d.stage_id
  LEFT JOIN auth_user u ON u.id = d.owner_id
  LEFT JOIN deals_company sp ON sp.id = d.sponsor_id
  LEFT JOIN deals_company b ON b.id = d.borrower_id
 WHERE d.id = %s
"""


def _when(value: dt.datetime | None) -> str | None:
    """DRF's DateTimeField: ISO 8601 in UTC, "+00:00" written "Z"."""
    if value is None:
        return None
    text = value.astimezone(dt.UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _ref(id_: int | None, **fields: Any) -> dict[str, Any] | None:
    return None if id_ is None else {"id": id_, **fields}


def payload(row: tuple) -> dict[str, Any]:
    """`{"deal": ...}` from a row of SQL, field for field as Lev's get_deal answers."""
    (id_, title, loan_amount, loan_type, transaction_type, business_plan, description, close_date,
     stage_id, stage_key, stage_name, stage_kind, owner_id, owner_name, sponsor_id, sponsor_name, sponsor_kind,
     borrower_id, borrower_name, borrower_kind, archived, archived_at, created_at, updated_at) = row
    return {"deal": {
        "id": id_, "title": title,
        "loan_amount": float(loan_amount) if isinstance(loan_amount, Decimal) else loan_amount,
        "loan_type": loan_type, "transaction_type": transaction_type, "business_plan": business_plan,
        "description": description, "estimated_close_date": close_date.isoformat() if close_date else None,
        "stage": {"id": stage_id, "key": stage_key, "name": stage_name, "kind": stage_kind},
        "owner": _ref(owner_id, username=owner_name),
        "sponsor": _ref(sponsor_id, name=sponsor_name, kind=sponsor_kind),
        "borrower": _ref(borrower_id, name=borrower_name, kind=borrower_kind),
        "archived": archived, "archived_at": _when(archived_at),
        "created_at": _when(created_at), "updated_at": _when(updated_at),
    }}


def text(value: dict[str, Any]) -> str:
    """The tool result's text as Lev writes it (mcp_tools/budget.py: compact, UTF-8)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


NOT_FOUND = "Deal not found."
