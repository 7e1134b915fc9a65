"""REST views of a deal's documents (docs/documents.md): list and upload a deal's documents, read one with
its versions, download a version, remove one. Tenancy as for deals: another account's deal or document
is a 404 exactly like a missing one. Read with deals:read, written with deals:write (as notes are).

The upload is a request body above DATA_UPLOAD_MAX_MEMORY_SIZE: LEV_DOCUMENT_UPLOAD_MAX_BYTES (lev.wsgi.
body_limit gives this path that bound, and no other). A bigger one is answered 413 from its
Content-Length, before its body is read (authentication included); while it streams, the upload handler
(`BoundedUploadHandler`) writes it to a temporary file on disk (memory stays bounded whatever its size)
and stops at the bound even when the length lied. A download is an attachment, never rendered by the
browser: streamed from the file system, or a 302 to a signed URL valid LEV_DOCUMENTS_URL_SECONDS on S3.
"""

from __future__ import annotations

import unicodedata
from urllib.parse import quote

from django.conf import settings
from django.core.files.storage import FileSystemStorage
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseRedirect
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from deals.api import DealScopedView
from deals.documents import files, selectors, services
from deals.documents.models import Document, DocumentVersion
from deals.documents.serializers import (
    DocumentDetailSerializer,
    DocumentListQuerySerializer,
    DocumentSerializer,
    DocumentUploadSerializer,
    DownloadQuerySerializer,
    form_data,
)
from lev.accounts.api import validated
from lev.accounts.scopes import DEALS_READ, DEALS_WRITE
from lev.errors import NotFound, UpstreamUnavailable, ValidationFailed
from lev.idempotency.services import idempotent
from lev.limits import DOCUMENT_FORM_OVERHEAD_BYTES
from lev.openapi import IDEMPOTENCY_KEY, READ_ERRORS, WRITE_ERRORS
from lev.pagination import StandardPagination, paginated
from lev.parsers import JSONParser


def upload_body_max() -> int:
    """The most body an upload request may carry: the file's bound and the form around it."""
    return settings.LEV_DOCUMENT_UPLOAD_MAX_BYTES + DOCUMENT_FORM_OVERHEAD_BYTES


class BoundedUploadHandler(TemporaryFileUploadHandler):
    """Django's temporary-file handler (every file part on disk, never in memory) that stops the upload
    with a 413 as soon as its files pass LEV_DOCUMENT_UPLOAD_MAX_BYTES, whatever the request's length
    said."""

    def __init__(self, request=None):
        super().__init__(request)
        self.limit = settings.LEV_DOCUMENT_UPLOAD_MAX_BYTES
        self.received = 0

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > self.limit:
            self.file.close()  # the temporary file goes with it
            raise files.too_large()
        return super().receive_data_chunk(raw_data, start)


def content_disposition(file_name: str) -> str:
    """`attachment` with the file's safe name: a plain ASCII `filename` for old clients and the exact
    name as RFC 5987 `filename*` (UTF-8, percent-encoded)."""
    ascii_name = unicodedata.normalize("NFKD", file_name).encode("ascii", "ignore").decode()
    ascii_name = "".join(ch if ch.isprintable() and ch not in '"\\;' else "_" for ch in ascii_name) or "document"
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(file_name, safe='')}"


def download_response(version: DocumentVersion) -> HttpResponse:
    """The version as an attachment: streamed from the file system, or a redirect to a signed,
    short-lived URL of the object storage (whose answer carries the same disposition and type)."""
    storage = getattr(version.file.storage, "backend", version.file.storage)  # models.DocumentsStorage's
    disposition = content_disposition(version.file_name)
    if isinstance(storage, FileSystemStorage):
        try:
            handle = version.file.open("rb")
        except OSError:
            raise UpstreamUnavailable("Service unavailable: the document's file could not be read; "
                                      "try again shortly.") from None
        response = FileResponse(handle, content_type=version.content_type)
        response["Content-Length"] = str(version.size)
    else:
        try:
            url = storage.url(version.file.name, expire=settings.LEV_DOCUMENTS_URL_SECONDS, parameters={
                "ResponseContentDisposition": disposition, "ResponseContentType": version.content_type})
        except Exception:
            raise UpstreamUnavailable("Service unavailable: the documents' storage could not be reached; "
                                      "try again shortly.") from None
        response = HttpResponseRedirect(url)
    response["Content-Disposition"] = disposition
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    response["Cache-Control"] = "private, no-store"
    return response


class DocumentScopedView(DealScopedView):
    def document(self, request: Request, document_id: int) -> Document:
        return selectors.document_get(account=self.account(request), document_id=document_id)


class DealDocumentListCreateApi(DocumentScopedView):
    required_scopes = {"GET": DEALS_READ, "POST": DEALS_WRITE}
    parser_classes = [MultiPartParser, FormParser, JSONParser]

    def initialize_request(self, request: HttpRequest, *args, **kwargs) -> Request:
        # Before anything reads the body (the CSRF check of a session reads a POST's form): file parts go
        # to disk, bounded.
        if request.method == "POST":
            request.upload_handlers = [BoundedUploadHandler(request)]
        return super().initialize_request(request, *args, **kwargs)

    def initial(self, request: Request, *args, **kwargs) -> None:
        # Refused from its Content-Length before anything reads the body (authentication included).
        length = (request.META.get("CONTENT_LENGTH") or "").strip()
        if request.method == "POST" and length.isdigit() and int(length) > upload_body_max():
            raise files.too_large()
        super().initial(request, *args, **kwargs)

    @extend_schema(operation_id="deals_documents_list", parameters=[DocumentListQuerySerializer],
                   responses={200: paginated(DocumentSerializer, "PaginatedDocumentList"), **READ_ERRORS})
    def get(self, request: Request, deal_id: int) -> Response:
        """The deal's documents, the latest changed first, each with its current version; `kind` filters.
        `page`, `page_size` ≤ 100."""
        query = validated(DocumentListQuerySerializer, request.query_params.dict())
        deal = self.deal(request, deal_id, refs_only=True)
        paginator = StandardPagination()
        page = paginator.paginate_queryset(selectors.document_list(deal=deal, kind=query.get("kind")), request,
                                           view=self)
        return paginator.get_paginated_response(DocumentSerializer(page, many=True).data)

    @extend_schema(operation_id="deals_documents_create", request={"multipart/form-data": DocumentUploadSerializer},
                   parameters=[IDEMPOTENCY_KEY], responses={201: DocumentDetailSerializer, **WRITE_ERRORS})
    def post(self, request: Request, deal_id: int) -> Response:
        """Upload a file to the deal (multipart: `file`, `kind`, `name`, `document_id`): a new document, or
        the next version of `document_id`, or of the deal's offering memorandum, rent roll or T-12 when
        the kind is one of those. Its type is read from its bytes: a file whose content contradicts its
        name's extension, an executable, or a zip bomb is refused (400); one larger than
        LEV_DOCUMENT_UPLOAD_MAX_BYTES is refused with 413. 201 with the document and its versions. With an
        Idempotency-Key, a repeat (the same file, by its bytes) is answered as the first, adding no version."""
        return idempotent(request, lambda: self._upload(request, deal_id))

    def _upload(self, request: Request, deal_id: int) -> Response:
        deal = self.deal(request, deal_id, refs_only=True)
        data = validated(DocumentUploadSerializer, form_data(request.data))
        document = None
        if data.get("document_id") is not None:
            document = selectors.document_get(account=self.account(request), document_id=data["document_id"])
            if document.deal_id != deal.pk:
                raise NotFound("Document", data["document_id"])
            if data.get("kind") and data["kind"] != document.kind:
                raise ValidationFailed({"kind": [f"must be the document's kind ({document.kind}) or left out"]})
        kind = document.kind if document is not None else data.get("kind") or "other"
        version = services.document_add(deal=deal, upload=data["file"], kind=kind, name=data.get("name"),
                                        user=request.user, document=document)
        document = selectors.document_get(account=self.account(request), document_id=version.document_id)
        return Response(DocumentDetailSerializer(document).data, status=status.HTTP_201_CREATED)


class DocumentDetailApi(DocumentScopedView):
    required_scopes = {"GET": DEALS_READ, "DELETE": DEALS_WRITE}

    @extend_schema(responses={200: DocumentDetailSerializer, **READ_ERRORS})
    def get(self, request: Request, document_id: int) -> Response:
        """A document with its versions, newest first (each with what was read from it, if anything)."""
        return Response(DocumentDetailSerializer(self.document(request, document_id)).data)

    @extend_schema(request=None, responses={204: None, **WRITE_ERRORS})
    def delete(self, request: Request, document_id: int) -> Response:
        """Remove the document from the deal's list (its files are kept: a package already sent may name
        it)."""
        services.document_remove(document=self.document(request, document_id), user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DocumentDownloadApi(DocumentScopedView):
    required_scopes = {"GET": DEALS_READ}

    @extend_schema(operation_id="documents_download", parameters=[DownloadQuerySerializer],
                   responses={(200, "*/*"): OpenApiResponse(
                       OpenApiTypes.BINARY, description="The file, as an attachment, with the type read from its "
                                                        "bytes (application/pdf, text/csv, an XLSX workbook, …)."),
                       (302, "application/octet-stream"): OpenApiResponse(
                       description="On S3: a signed URL valid LEV_DOCUMENTS_URL_SECONDS."), **READ_ERRORS})
    def get(self, request: Request, document_id: int) -> HttpResponse:
        """Download the document's current version, or `version`: always an attachment (never shown by
        the browser), with its safe file name."""
        query = validated(DownloadQuerySerializer, request.query_params.dict())
        document = self.document(request, document_id)
        return download_response(selectors.version_get(document=document, number=query.get("version")))
