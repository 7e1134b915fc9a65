"""The deal page's Documents panel in the admin (docs/documents.md): upload one or more files (a plain
`<input type=file multiple>` in a drop zone; deals/static/lev_admin/documents.js only lets files be
dropped on it), and download any version, through the services and the answer the REST API uses.

Both views find the deal through the deal admin's `get_object`, which sees only the staff user's
accounts: another account's deal is the admin's "not found", and so is a document of another deal.
An upload past LEV_DOCUMENT_UPLOAD_MAX_BYTES is refused from its Content-Length before its body is read,
and while it streams by `AdminUploadHandler` (every file on disk, the body's reading stopped at the
bound); it is a message on the deal page, never a 500. CSRF is checked once that handler is in place
(Django reads the body for the check), as deals.history.admin_views does.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.core.files.uploadhandler import StopUpload, TemporaryFileUploadHandler
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect

from deals.documents import selectors, services
from deals.documents.api import download_response, upload_body_max
from deals.documents.models import Document
from deals.models import Deal
from lev import limits
from lev.accounts.selectors import check_staff_can_write
from lev.admin_relay import relay
from lev.enums import DOCUMENT_KINDS
from lev.errors import NotFound

# Documents shown on the deal page (the latest changed first) and versions shown in each one's history.
DOCUMENTS_SHOWN = 50
VERSIONS_SHOWN = limits.DOCUMENT_VERSIONS_SHOWN
FILES_PER_UPLOAD = 20
KIND_LABELS = {"t12": "T-12"}


class AdminUploadHandler(TemporaryFileUploadHandler):
    """Every file part to a temporary file; past LEV_DOCUMENT_UPLOAD_MAX_BYTES in all, the body's reading
    stops there (`too_big` says so) and nothing is kept."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        from django.conf import settings

        self.limit = settings.LEV_DOCUMENT_UPLOAD_MAX_BYTES
        self.received = 0
        self.too_big = False

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self.received += len(raw_data)
        if self.received > self.limit:
            self.too_big = True
            self.file.close()
            raise StopUpload(connection_reset=True)
        return super().receive_data_chunk(raw_data, start)


def _too_big_message() -> str:
    from django.conf import settings

    return (f"The upload is too large: a document may be at most {settings.LEV_DOCUMENT_UPLOAD_MAX_BYTES // 2**20} "
            "MB. Nothing was kept.")


def _deal(model_admin: admin.ModelAdmin, request: HttpRequest, object_id: str) -> Deal:
    deal = model_admin.get_object(request, unquote(object_id))
    if deal is None:
        raise Http404("No such deal.")
    return deal


def _back(deal: Deal) -> str:
    return reverse("admin:deals_deal_change", args=[deal.pk]) + "#documents"


def upload_view(model_admin: admin.ModelAdmin, request: HttpRequest, object_id: str) -> HttpResponse:
    """POST (multipart): `files` (one or more), `kind`, and `document_id` to add them as new versions of
    one document; back to the deal page with a message for each file."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    deal = _deal(model_admin, request, object_id)
    if not model_admin.has_change_permission(request, deal):
        raise PermissionDenied
    length = (request.META.get("CONTENT_LENGTH") or "").strip()
    if length.isdigit() and int(length) > upload_body_max():
        messages.error(request, _too_big_message())  # the body is never read
        return HttpResponseRedirect(_back(deal))
    handler = AdminUploadHandler(request)
    request.upload_handlers = [handler]  # before the body is read: CSRF's check below reads it
    return csrf_protect(_upload)(request, deal, handler)


def _upload(request: HttpRequest, deal: Deal, handler: AdminUploadHandler) -> HttpResponse:
    back = HttpResponseRedirect(_back(deal))
    files = request.FILES.getlist("files")
    if handler.too_big:
        messages.error(request, _too_big_message())
        return back
    if not files:
        messages.warning(request, "Choose or drop one or more files to upload.")
        return back
    if len(files) > FILES_PER_UPLOAD:
        messages.error(request, f"Upload at most {FILES_PER_UPLOAD} files at once. Nothing was kept.")
        return back
    kind = request.POST.get("kind") or "other"
    if kind not in DOCUMENT_KINDS:
        messages.error(request, "Choose a kind from the list.")
        return back
    document = None
    document_id = request.POST.get("document_id", "")
    if document_id:
        document = (Document.objects.filter(deal=deal, deleted_at=None, pk=document_id).first()
                    if document_id.isdigit() and len(document_id) < 19 else None)
        if document is None:
            messages.error(request, "That document is not one of this deal's.")
            return back
    for upload in files:
        def add(upload=upload):
            check_staff_can_write(user=request.user, account_id=deal.account_id)
            return services.document_add(deal=deal, upload=upload, kind=document.kind if document else kind,
                                         user=request.user, document=document)

        refused, version = relay(f"uploading a document to deal {deal.pk} in the admin", add)
        if refused:
            level, text = refused
            messages.add_message(request, level, f"{_safe(upload.name)}: {text.removeprefix('Validation failed: ')}")
        else:
            messages.success(request, f"{version.file_name} kept as {version.document.name}, version "
                                      f"{version.number}.")
    return back


def _safe(name: str | None) -> str:
    from deals.documents.files import safe_file_name

    return safe_file_name(name)


def download_view(model_admin: admin.ModelAdmin, request: HttpRequest, object_id: str,
                  document_id: int) -> HttpResponse:
    """A version of a document of the deal (`?version=n`, the current one by default), as the REST API
    serves it: an attachment, or a redirect to a signed URL on S3."""
    if request.method != "GET":
        return HttpResponseNotAllowed(["GET"])
    deal = _deal(model_admin, request, object_id)
    if not model_admin.has_view_or_change_permission(request, deal):
        raise PermissionDenied
    document = Document.objects.filter(deal=deal, pk=document_id, deleted_at=None).first()
    if document is None:
        raise Http404("No such document on this deal.")
    number = request.GET.get("version", "")
    try:
        version = selectors.version_get(document=document,
                                        number=int(number) if number.isdigit() and len(number) < 10 else None)
    except NotFound:
        raise Http404("No such version of this document.") from None
    return download_response(version)


def urls(model_admin: admin.ModelAdmin) -> list:
    """The panel's views, under the deal admin (its `get_urls` puts them before its own)."""
    site = model_admin.admin_site

    def upload(request, object_id):
        return upload_view(model_admin, request, object_id)

    def download(request, object_id, document_id):
        return download_view(model_admin, request, object_id, document_id)

    return [
        # CSRF is checked inside, once the upload's handler is in place (Django reads the body for the check).
        path("<path:object_id>/documents/upload/", site.admin_view(csrf_exempt(upload)),
             name="deals_deal_documents_upload"),
        path("<path:object_id>/documents/<int:document_id>/download/", site.admin_view(download),
             name="deals_deal_document_download"),
    ]


def documents_context(deal: Deal) -> dict[str, Any]:
    """What the Documents panel shows: the deal's live documents with their latest versions."""
    documents = list(selectors.document_list(deal=deal)[: DOCUMENTS_SHOWN + 1])
    more = len(documents) > DOCUMENTS_SHOWN
    documents = documents[:DOCUMENTS_SHOWN]
    for document in documents:
        document.shown_versions = list(selectors.document_versions(document=document)[:VERSIONS_SHOWN])
    from django.conf import settings

    return {
        "documents": documents,
        "more_documents": more,
        "document_kinds": [(kind, KIND_LABELS.get(kind, kind.replace("_", " ").capitalize()))
                           for kind in DOCUMENT_KINDS],
        "documents_upload_url": reverse("admin:deals_deal_documents_upload", args=[deal.pk]),
        "documents_max_bytes": settings.LEV_DOCUMENT_UPLOAD_MAX_BYTES,
        "documents_max_mb": settings.LEV_DOCUMENT_UPLOAD_MAX_BYTES // 2**20,
        "documents_versions_shown": VERSIONS_SHOWN,
        "files_per_upload": FILES_PER_UPLOAD,
        "name_max": limits.DOCUMENT_NAME_MAX,
    }
