"""Reads of figures: a document of the account (another account's, or a removed one, is NOT_FOUND like a
missing one), a version of it, and a deal's figure sources as the financials' answer and the summary
show them."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from deals.documents.figures.models import FigureSource
from deals.documents.models import Document, DocumentVersion
from lev.errors import NotFound

MAX_ID = 2**63 - 1
_DATETIME = serializers.DateTimeField()


def document_get(*, account, document_id: int) -> Document:
    if not 0 < document_id <= MAX_ID:
        raise NotFound("Document", document_id)
    found = (Document.objects.select_related("deal", "current").filter(account=account, pk=document_id,
                                                                        deleted_at__isnull=True).first())
    if found is None:
        raise NotFound("Document", document_id)
    return found


def document_version_get(*, document: Document, number: int | None) -> DocumentVersion:
    """The version `number` of the document, else its current one; NOT_FOUND when it has no such version."""
    if number is None:
        if document.current is None:
            raise NotFound("Document version", f"{document.pk} (no file yet)")
        version = document.current
    else:
        version = DocumentVersion.objects.filter(document=document, number=number).first()
        if version is None:
            raise NotFound("Document version", f"{document.pk} version {number}")
    version.document = document
    return version


def source_output(source: FigureSource) -> dict[str, Any]:
    version = source.document_version
    return {"document_id": version.document_id, "version": version.number, "file_name": version.file_name,
            "applied_at": _DATETIME.to_representation(source.applied_at)}


def figure_sources(*, deal_id: int | None) -> dict[str, dict[str, Any]]:
    """The deal's applied figures' sources: field -> {document_id, version, file_name, applied_at}. One query."""
    if deal_id is None:
        return {}
    rows = (FigureSource.objects.filter(deal_id=deal_id).select_related("document_version")
            .order_by("field"))
    return {source.field: source_output(source) for source in rows}
