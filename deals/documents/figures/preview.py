"""The preview of a reading: each figure read beside the deal's value of the field it applies to and that
value's source. Shared by the REST answer and the admin page."""

from __future__ import annotations

from typing import Any

from deals.documents.figures.models import FIGURE_TARGETS
from deals.documents.figures.selectors import figure_sources
from deals.documents.figures.services import current_values
from deals.documents.models import DocumentVersion
from deals.models import Deal

# The figure of each reading kind -> the deal's field it applies to.
_APPLIES = {(kind, key): name for name, (kind, key) in FIGURE_TARGETS.items()}


def _decimal_text(value: Any) -> str | None:
    return None if value is None else str(value)


def figures_preview(*, deal: Deal, version: DocumentVersion) -> dict[str, Any]:
    extracted = version.extracted or {}
    current = current_values(deal=deal)
    sources = figure_sources(deal_id=deal.pk)
    figures = []
    for name, value in (extracted.get("figures") or {}).items():
        target = _APPLIES.get((extracted.get("kind"), name))
        figures.append({"name": name, "value": value, "field": target,
                        "current": _decimal_text(current.get(target)) if target else None,
                        "source": sources.get(target) if target else None})
    return {"document_id": version.document_id, "deal_id": deal.pk, "version": version.number,
            "file_name": version.file_name, "kind": extracted.get("kind"), "layout": extracted.get("layout"),
            "rows_read": extracted.get("rows_read", 0), "figures": figures,
            "problems": extracted.get("problems") or []}
