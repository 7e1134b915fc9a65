"""REST: the account's whole history as a file (`GET /api/v1/history-export/?format=csv|xlsx`), in the
format the import reads (docs/import-export.md, "Export"). validate -> deals.history.export -> a file
response streamed from a temporary file (never the whole file in memory)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.http import FileResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request

from deals.history.export import CONTENT_TYPES, FORMATS, history_write
from lev.accounts.api import AccountScopedView, validated
from lev.accounts.scopes import DEALS_READ
from lev.openapi import READ_ERRORS
from lev.serializers import EnumField, StrictSerializer

TABLES = ("history", "own_lenders")


class HistoryExportQuerySerializer(StrictSerializer):
    format = EnumField(FORMATS, required=False, default="csv",
                       help_text="csv (default; UTF-8 with a BOM) or xlsx (the history sheet, then the "
                                 "account's own lenders and programs as a second sheet).")
    table = EnumField(TABLES, required=False, default="history",
                      help_text="`history` (default), or `own_lenders`: the account's own lenders and programs "
                                "alone (the companion a CSV import takes with --own-lenders; an XLSX history "
                                "carries them as its second sheet already).")


FILE_RESPONSE = OpenApiResponse(
    OpenApiTypes.BINARY,
    description="The file, as an attachment (`Content-Disposition` names it): one row per placement in the "
                "columns of docs/import-export.md, or the own lenders table.")


class HistoryExportApi(AccountScopedView):
    required_scopes = {"GET": DEALS_READ}

    @extend_schema(operation_id="history_export", parameters=[HistoryExportQuerySerializer],
                   responses={(200, CONTENT_TYPES["csv"].split(";")[0]): FILE_RESPONSE,
                              (200, CONTENT_TYPES["xlsx"]): FILE_RESPONSE, **READ_ERRORS})
    def get(self, request: Request) -> FileResponse:
        """The caller's account's whole history as a CSV or XLSX file, in the format the history import
        reads: importing it into an empty account gives the same deals, placements, outcomes, quotes and
        own lenders. Formula-like text is written inert. Another account's records are never in it."""
        query = validated(HistoryExportQuerySerializer, request.query_params.dict())
        kind, table = query["format"], query["table"]
        return export_file_response(account=self.account(request), kind=kind, table=table)


def export_file_response(*, account, kind: str, table: str = "history", deals=None) -> FileResponse:
    """The account's history (or the `deals` given of it; or its own lenders table, `table`
    "own_lenders") as an attachment, written to a temporary file and streamed from it: the REST export
    and the admin's share it."""
    handle, name = tempfile.mkstemp(suffix=f".{kind}", prefix="lev-export-")
    os.close(handle)
    try:
        history_write(account=account, path=Path(name), kind=kind, deals=deals,
                      table="own" if table == "own_lenders" else "history")
        file = open(name, "rb")  # noqa: SIM115 (FileResponse closes it once streamed)
    finally:
        os.unlink(name)  # the open file stays readable; nothing is left behind
    stem = f"{account.slug}-{'own-lenders' if table == 'own_lenders' else 'history'}"
    return FileResponse(file, as_attachment=True, content_type=CONTENT_TYPES[kind],
                        filename=f"{stem}-{timezone.localdate().isoformat()}.{kind}")
