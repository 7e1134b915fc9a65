from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from deals.documents.models import Document, DocumentVersion
from lev import limits
from lev.enums import DOCUMENT_KINDS, DOCUMENT_SOURCES
from lev.serializers import EnumField, StrictSerializer, int_field, page_field, page_size_field, text_field

KIND_HELP = ("offering_memorandum, rent_roll, t12, photo, term_sheet, appraisal, financial_statement or other. "
             "A deal has one offering memorandum, rent roll and T-12: a new file of these kinds is the next "
             "version of the deal's one.")


def form_data(data: Any) -> dict[str, Any]:
    """A multipart form's fields as a plain dict (one value each), for a StrictSerializer."""
    if hasattr(data, "getlist"):
        return {key: data.get(key) for key in data}
    return data if isinstance(data, dict) else {}


@extend_schema_field({"type": "string", "format": "binary", "minLength": 1})
class UploadField(serializers.FileField):
    """A file part of a multipart body."""


# --- input --------------------------------------------------------------------------------------------
class DocumentUploadSerializer(StrictSerializer):
    file = UploadField(allow_empty_file=False, help_text="The file: at most LEV_DOCUMENT_UPLOAD_MAX_BYTES "
                                                         "(200 MB by default). Its type is read from its bytes.")
    kind = EnumField(DOCUMENT_KINDS, required=False, help_text=KIND_HELP + " Default other.")
    name = text_field(max_length=limits.DOCUMENT_NAME_MAX, required=False, allow_blank=False,
                      help_text="What the team calls it; the file's name by default.")
    document_id = int_field(min_value=1, max_value=limits.MAX_ID, allow_null=False,
                            help_text="Add the file as the next version of this document of the deal.")


class DocumentListQuerySerializer(StrictSerializer):
    kind = EnumField(DOCUMENT_KINDS, required=False, help_text="Only documents of this kind.")
    page = page_field()
    page_size = page_size_field()


class DownloadQuerySerializer(StrictSerializer):
    version = int_field(min_value=1, max_value=limits.MAX_ID, allow_null=False,
                        help_text="The version's number; the current version by default.")


# --- output -------------------------------------------------------------------------------------------
def _username(user) -> str | None:
    return user.get_username() if user is not None else None


class DocumentVersionSerializer(serializers.ModelSerializer):
    """One file of a document: its number, safe file name, size, sha256, the type read from its bytes,
    who added it and when."""

    uploaded_by = serializers.SerializerMethodField()
    download = serializers.SerializerMethodField()

    class Meta:
        model = DocumentVersion
        fields = ("number", "file_name", "size", "sha256", "content_type", "source", "uploaded_by_id",
                  "uploaded_by", "uploaded_at", "download")

    def get_uploaded_by(self, version: DocumentVersion) -> str | None:
        """Who added it (a username); null for a lender's emailed file or a removed user."""
        return _username(version.uploaded_by)

    def get_download(self, version: DocumentVersion) -> str:
        """The path that downloads this version (authorised; an attachment)."""
        return reverse("document-download", args=[version.document_id]) + f"?version={version.number}"


class DocumentVersionDetailSerializer(DocumentVersionSerializer):
    class Meta(DocumentVersionSerializer.Meta):
        fields = (*DocumentVersionSerializer.Meta.fields, "extracted")


class DocumentSerializer(serializers.ModelSerializer):
    """A document of a deal: its kind, name, current version and how many versions it has."""

    kind = EnumField(DOCUMENT_KINDS)
    current = DocumentVersionSerializer(allow_null=True)
    created_by = serializers.SerializerMethodField()
    download = serializers.SerializerMethodField()

    class Meta:
        model = Document
        fields = ("id", "deal_id", "kind", "name", "versions_count", "current", "created_by_id", "created_by",
                  "created_at", "updated_at", "download")

    def get_created_by(self, document: Document) -> str | None:
        return _username(document.created_by)

    def get_download(self, document: Document) -> str:
        """The path that downloads the current version."""
        return reverse("document-download", args=[document.pk])


class DocumentDetailSerializer(DocumentSerializer):
    """A document with its versions, newest first, the latest DOCUMENT_VERSIONS_SHOWN of them (each with
    `extracted`: what was read from a rent roll or T-12, null when nothing was); `versions_count` says how
    many there are."""

    versions = serializers.SerializerMethodField()

    class Meta(DocumentSerializer.Meta):
        fields = (*DocumentSerializer.Meta.fields, "versions")

    @extend_schema_field(DocumentVersionDetailSerializer(many=True))
    def get_versions(self, document: Document) -> list[dict[str, Any]]:
        versions = self.context.get("versions")
        if versions is None:
            versions = document.versions.select_related("uploaded_by").order_by("-number")[
                :limits.DOCUMENT_VERSIONS_SHOWN]
        return DocumentVersionDetailSerializer(versions, many=True).data


SOURCES_HELP = ", ".join(DOCUMENT_SOURCES)
