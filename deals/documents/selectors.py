"""Reads of a deal's documents, always scoped to one account: another account's document, or a document
on another account's deal, is NotFound exactly like a missing one; so is a removed document."""

from __future__ import annotations

from django.db.models import QuerySet

from deals.documents.models import Document, DocumentVersion
from deals.models import Deal
from lev.accounts.models import Account
from lev.errors import NotFound
from lev.limits import MAX_ID


def document_list(*, deal: Deal, kind: str | None = None) -> QuerySet[Document]:
    """The deal's live documents, the latest changed first, each with its current version."""
    qs = (Document.objects.filter(deal=deal, deleted_at__isnull=True)
          .select_related("current", "current__uploaded_by", "created_by"))
    if kind:
        qs = qs.filter(kind=kind)
    return qs.order_by("-updated_at", "-id")


def document_get(*, account: Account, document_id: int) -> Document:
    if not 0 < document_id <= MAX_ID:
        raise NotFound("Document", document_id)
    found = list(Document.objects.filter(account=account, pk=document_id, deleted_at__isnull=True)
                 .select_related("current", "current__uploaded_by", "created_by").order_by()[:1])
    if not found:
        raise NotFound("Document", document_id)
    return found[0]


def document_versions(*, document: Document) -> QuerySet[DocumentVersion]:
    """Its versions, newest first."""
    return document.versions.select_related("uploaded_by").order_by("-number")


def version_get(*, document: Document, number: int | None = None) -> DocumentVersion:
    """The document's version `number`, or its current one."""
    if number is None:
        number = document.versions_count
    version = document.versions.select_related("uploaded_by").filter(number=number).first()
    if version is None:
        raise NotFound("Document version", number)
    return version
