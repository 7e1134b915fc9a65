"""The history import's REST door (docs/import-export.md "The REST door"): upload a file and get a job
(202), read the account's jobs, apply a preview (or map names and try again) on the same stored file,
and download a job's refused rows as CSV. Tenancy: another account's job is a 404 like a missing one.
Read with deals:read, written with deals:write (the import writes the account's deals).

The upload is the one request body above DATA_UPLOAD_MAX_MEMORY_SIZE: LEV_HISTORY_UPLOAD_MAX_BYTES
(lev.wsgi.body_limit gives this path that bound, before the application runs). A bigger one is
answered 413 from its Content-Length, before its body is read."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from deals.history import jobs
from deals.history.models import HistoryImport
from deals.history.serializers import (
    HistoryApplySerializer,
    HistoryImportDetailSerializer,
    HistoryImportSerializer,
    HistoryUploadSerializer,
    _MultiValue,
)
from lev.accounts.api import AccountScopedView, validated
from lev.accounts.scopes import DEALS_READ, DEALS_WRITE
from lev.errors import NotFound, ValidationFailed
from lev.openapi import READ_ERRORS, WRITE_ERRORS
from lev.pagination import StandardPagination, paginated
from lev.parsers import JSONParser
from lev.serializers import PageQuerySerializer

UPLOAD_PATH = "/api/v1/history-imports/"


def too_large() -> ValidationFailed:
    error = ValidationFailed({"file": [f"must be at most {settings.LEV_HISTORY_UPLOAD_MAX_BYTES} bytes"]})
    error.http_status = 413
    return error


class HistoryImportScopedView(AccountScopedView):
    def job(self, request: Request, import_id: int) -> HistoryImport:
        job = HistoryImport.objects.filter(account=self.account(request), pk=import_id).first()
        if job is None:
            raise NotFound("History import", import_id)
        return job


class HistoryImportListCreateApi(HistoryImportScopedView):
    required_scopes = {"GET": DEALS_READ, "POST": DEALS_WRITE}
    parser_classes = [MultiPartParser, FormParser, JSONParser]

    def initial(self, request: Request, *args, **kwargs) -> None:
        # Refused from its Content-Length before anything reads the body (authentication included).
        length = (request.META.get("CONTENT_LENGTH") or "").strip()
        if request.method == "POST" and length.isdigit() and int(length) > settings.LEV_HISTORY_UPLOAD_MAX_BYTES:
            raise too_large()
        super().initial(request, *args, **kwargs)

    @extend_schema(operation_id="history_imports_list", parameters=[PageQuerySerializer],
                   responses={200: paginated(HistoryImportSerializer, "PaginatedHistoryImportList"), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        """The account's history imports, newest first (`page`, `page_size` ≤ 100)."""
        validated(PageQuerySerializer, request.query_params.dict())
        paginator = StandardPagination()
        jobs_ = HistoryImport.objects.filter(account=self.account(request)).order_by("-created_at", "-id")
        page = paginator.paginate_queryset(jobs_, request, view=self)
        return paginator.get_paginated_response(HistoryImportSerializer(page, many=True).data)

    @extend_schema(request={"multipart/form-data": HistoryUploadSerializer},
                   responses={202: HistoryImportDetailSerializer, **WRITE_ERRORS})
    def post(self, request: Request) -> Response:
        """Upload a history file (multipart: `file`, `dry_run`, `mapping`, `new_lenders`) and import it
        in the background: 202 with the job. Poll `links.self` until `status` is done, refused or
        failed; a refused file's rows are in `problems` and `links.report` (CSV), lender names to map
        in `summary.unresolved` (then POST `links.apply` with `mapping`)."""
        data = validated(HistoryUploadSerializer, _MultiValue.data_of(request.data))
        job = jobs.import_start(account=self.account(request), user=request.user, upload=data["file"],
                                dry_run=data["dry_run"], mapping=data.get("mapping"),
                                new_lenders=data.get("new_lenders"))
        job.refresh_from_db()  # where jobs run in-process it has finished by now
        return Response(HistoryImportDetailSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class HistoryImportDetailApi(HistoryImportScopedView):
    required_scopes = {"GET": DEALS_READ}

    @extend_schema(responses={200: HistoryImportDetailSerializer, **READ_ERRORS})
    def get(self, request: Request, import_id: int) -> Response:
        """A history import: its status, progress (live while it runs), summary, first problems and a
        preview's plan."""
        return Response(HistoryImportDetailSerializer(self.job(request, import_id)).data)


class HistoryImportApplyApi(HistoryImportScopedView):
    required_scopes = {"POST": DEALS_WRITE}

    @extend_schema(request={"application/json": HistoryApplySerializer},
                   responses={202: HistoryImportDetailSerializer, **WRITE_ERRORS})
    def post(self, request: Request, import_id: int) -> Response:
        """A new job on this import's stored file: apply what was previewed, or try again with lender
        names mapped (`mapping`) or added as the account's own (`new_lenders`). 202 with the new job."""
        job = self.job(request, import_id)
        data = validated(HistoryApplySerializer, _MultiValue.data_of(request.data or {}))
        again = jobs.import_again(job=job, user=request.user, dry_run=data["dry_run"], mapping=data.get("mapping"),
                                  new_lenders=data.get("new_lenders"))
        again.refresh_from_db()
        return Response(HistoryImportDetailSerializer(again).data, status=status.HTTP_202_ACCEPTED)


class HistoryImportReportApi(HistoryImportScopedView):
    required_scopes = {"GET": DEALS_READ}

    @extend_schema(operation_id="history_imports_report",
                   responses={(200, "text/csv"): OpenApiResponse(OpenApiTypes.STR,
                                                                 description="line, column, reason"),
                              **READ_ERRORS})
    def get(self, request: Request, import_id: int) -> HttpResponse:
        """The import's refused rows as CSV (line, column, reason; names to map as rows of the lender
        column): a header only when nothing was refused."""
        job = self.job(request, import_id)
        response = HttpResponse(jobs.refused_rows_csv(job), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="import-{job.pk}-refused-rows.csv"'
        return response
