"""A deal's documents: the offering memorandum, rent roll, T-12, photos, term sheets and anything else
the team keeps with the deal (docs/documents.md).

Imported by `deals.models`, so models of the `deals` app. A Document is one slot of the deal (its kind
and name); each file put in it is a DocumentVersion, numbered from 1. A new rent roll is a new version of
the deal's rent roll: the document shows its latest version, and the earlier ones stay in its history.
The files are kept on `STORAGES["deal_documents"]` (the local file system on the embedded default,
S3-compatible object storage in production), under a random name: the user's file name is kept in
`file_name` only, and no file is ever served from a public URL (deals.documents.api authorises each
download). A document belongs to its deal's account; another account never reaches it.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.files.storage import Storage
from django.db import models
from django.db.models import Q

from lev import limits
from lev.enums import DOCUMENT_KINDS, DOCUMENT_SOURCES, choices


class DocumentsStorage(Storage):
    """STORAGES["deal_documents"] as it is configured now. Django evaluates a FileField's storage callable
    once, when the model class is made; this stand-in looks the storage up on each call instead, so a
    change of STORAGES (the S3 and file-system variants of the same tests, a deployment's settings read
    after import) is the storage the files go to. Every public method of Django's Storage API is passed
    on; `backend` is the storage itself (deals.documents.api serves a file-system file itself and
    redirects to a signed URL otherwise)."""

    @property
    def backend(self) -> Storage:
        from django.core.files.storage import storages

        return storages["deal_documents"]

    def open(self, name, mode="rb"):
        return self.backend.open(name, mode)

    def save(self, name, content, max_length=None):
        return self.backend.save(name, content, max_length=max_length)

    def get_valid_name(self, name):
        return self.backend.get_valid_name(name)

    def get_alternative_name(self, file_root, file_ext):
        return self.backend.get_alternative_name(file_root, file_ext)

    def get_available_name(self, name, max_length=None):
        return self.backend.get_available_name(name, max_length=max_length)

    def generate_filename(self, filename):
        return self.backend.generate_filename(filename)

    def path(self, name):
        return self.backend.path(name)

    def delete(self, name):
        return self.backend.delete(name)

    def exists(self, name):
        return self.backend.exists(name)

    def listdir(self, path):
        return self.backend.listdir(path)

    def size(self, name):
        return self.backend.size(name)

    def url(self, name, **kwargs):
        return self.backend.url(name, **kwargs)

    def get_accessed_time(self, name):
        return self.backend.get_accessed_time(name)

    def get_created_time(self, name):
        return self.backend.get_created_time(name)

    def get_modified_time(self, name):
        return self.backend.get_modified_time(name)


_DOCUMENTS_STORAGE = DocumentsStorage()


def documents_storage():
    """The deal documents' storage as it is configured now (DocumentsStorage): a FileField's `storage`
    callable, for the documents and for anything kept beside them (a lender reply's raw message)."""
    return _DOCUMENTS_STORAGE


def _upload_to(version: DocumentVersion, filename: str) -> str:
    # The account's and the deal's folder and a random name; the suffix only when it is plain.
    document = version.document
    suffix = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    name = uuid.uuid4().hex + (f".{suffix[:8]}" if suffix.isalnum() and suffix.isascii() else "")
    return f"{document.account_id}/{document.deal_id}/{name}"


class Document(models.Model):
    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="documents")
    deal = models.ForeignKey("deals.Deal", on_delete=models.CASCADE, related_name="documents")
    kind = models.CharField(max_length=24, choices=choices(DOCUMENT_KINDS), default="other")
    # What the team calls it ("Rent roll", "Offering memorandum"); the latest version's file name by default.
    name = models.CharField(max_length=limits.DOCUMENT_NAME_MAX)
    # The newest version (null only while the first one is being written).
    current = models.ForeignKey("deals.DocumentVersion", null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="+")
    versions_count = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Removed from the deal's list; its versions stay (a package already sent may name it).
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        constraints = [models.CheckConstraint(condition=Q(kind__in=DOCUMENT_KINDS), name="document_kind_valid")]
        indexes = [
            models.Index(fields=["deal", "kind"], name="document_deal_kind"),
            models.Index(fields=["account", "-updated_at"], name="document_account_updated"),
        ]

    def __str__(self) -> str:
        return self.name


class DocumentVersion(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    file = models.FileField(storage=documents_storage, upload_to=_upload_to, max_length=255)
    # The name the file was uploaded (or attached to an email) with, made safe: no path, no control or
    # bidi characters (deals.documents.files).
    file_name = models.CharField(max_length=limits.DOCUMENT_FILE_NAME_MAX)
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    # Read from the bytes, not from the name or what the client said (deals.documents.files).
    content_type = models.CharField(max_length=100)
    source = models.CharField(max_length=8, choices=choices(DOCUMENT_SOURCES), default="upload")
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    uploaded_at = models.DateTimeField(auto_now_add=True)
    # What was read from a rent roll or T-12 (deals.documents.figures): {"figures": {...}, "problems":
    # [{"row": n, "message": ...}], "layout": ...}; null when nothing was read from it.
    extracted = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["document", "-number"]
        constraints = [models.UniqueConstraint(fields=["document", "number"], name="uniq_document_version_number")]

    def __str__(self) -> str:
        return f"{self.file_name} (version {self.number})"
