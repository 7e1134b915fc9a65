"""Writes of a deal's documents (docs/documents.md). Keyword-only, atomic; callers pass the account's deal
(looked up in the caller's account: another account's deal never reaches here).

Every write takes the deal's row lock first (`deals.services._lock_deal`, as deals.placements.services
does), so two uploads to the same document take turns and get different version numbers, and two first
rent rolls of a deal make one document with two versions, not two documents.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from deals.documents import files
from deals.documents.models import Document, DocumentVersion
from deals.models import Deal
from deals.services import _lock_deal
from lev import limits
from lev.enums import DOCUMENT_KINDS
from lev.errors import UpstreamUnavailable, ValidationFailed

log = logging.getLogger(__name__)

# A deal has one of each: a new file of these kinds is the next version of the deal's live one.
SINGLE_KINDS = frozenset({"offering_memorandum", "rent_roll", "t12"})


def _user(user):
    return user if getattr(user, "pk", None) else None


@transaction.atomic
def document_add(*, deal: Deal, upload, kind: str = "other", name: str | None = None, user=None,
                 source: str = "upload", document: Document | None = None) -> DocumentVersion:
    """Keep `upload` (a Django File or UploadedFile) with the deal as a new version: of `document` when
    given (a document of this deal), else of the deal's live document of `kind` when the kind is
    single-valued (a new rent roll replaces the old, which stays as an older version), else of a new
    document. The file's name is made safe, its type sniffed from its bytes and checked against its
    extension, its size and sha256 computed while it streams; then it is stored through the deal
    documents' storage under a random name. Refused with ValidationFailed (413 for a file too large)."""
    if document is not None and (document.deal_id != deal.pk or document.deleted_at is not None):
        raise ValueError("the document is not a live document of this deal")  # callers look it up in the deal
    if kind not in DOCUMENT_KINDS:
        raise ValidationFailed({"kind": [f"must be one of {', '.join(DOCUMENT_KINDS)}"]})
    file_name = files.safe_file_name(getattr(upload, "name", None) or name)
    checked = files.inspect(upload, file_name)  # before any lock: reading a big file takes a while
    if name is not None:
        name = files.clean_text(name)[:limits.DOCUMENT_NAME_MAX]

    deal = _lock_deal(deal)
    if document is None and kind in SINGLE_KINDS:
        document = (Document.objects.select_for_update().filter(deal=deal, kind=kind, deleted_at__isnull=True)
                    .order_by("-updated_at", "-id").first())
    if document is None:
        document = Document.objects.create(account_id=deal.account_id, deal=deal, kind=kind,
                                           name=name or file_name, created_by=_user(user))
    else:
        document.refresh_from_db(from_queryset=Document.objects.select_for_update())
        if document.deleted_at is not None:
            raise ValidationFailed({"document_id": ["names a removed document"]})
    version = DocumentVersion(document=document, number=document.versions_count + 1, file_name=file_name,
                              size=checked.size, sha256=checked.sha256, content_type=checked.content_type,
                              source=source, uploaded_by=_user(user))
    try:
        version.file.save(file_name, upload, save=False)
    except Exception as exc:  # the storage is down or refuses: nothing is recorded
        log.warning("document storage failed for deal %s: %s", deal.pk, type(exc).__name__)
        raise UpstreamUnavailable("Service unavailable: the documents' storage could not keep the file; "
                                  "try again shortly.") from exc
    stored = version.file.name
    try:
        version.save()
        document.current = version
        document.versions_count = version.number
        if name:
            document.name = name
        document.save(update_fields=["current", "versions_count", "name", "updated_at"])
    except Exception:
        _delete_quietly(version.file.storage, stored)
        raise
    # (Django has no rollback hook: a caller whose own transaction later rolls back leaves the stored
    # file without a row; its random name is never reachable, and docs/documents.md says so.)
    return version


def _delete_quietly(storage, name: str) -> None:
    try:
        storage.delete(name)
    except Exception as exc:
        log.warning("could not delete an orphan document file: %s", type(exc).__name__)


@transaction.atomic
def document_remove(*, document: Document, user=None) -> Document:
    """Take the document off the deal's list (a soft delete): its versions and files stay, so a package
    already sent that names it still resolves. Removing it again changes nothing."""
    _lock_deal(document.deal)
    document.refresh_from_db(from_queryset=Document.objects.select_for_update())
    if document.deleted_at is None:
        document.deleted_at = timezone.now()
        document.save(update_fields=["deleted_at", "updated_at"])
    return document
