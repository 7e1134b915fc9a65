"""REST views of a document's figures (docs/documents.md): read a rent roll or T-12 now and preview its
figures beside the deal's, and apply the chosen ones. validate → service → serialize. Tenancy: another
account's document (or a removed one) is a 404 exactly like a missing one."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from deals.api import DealScopedView
from deals.documents.figures import selectors, services
from deals.documents.figures.preview import figures_preview
from deals.documents.figures.serializers import (
    FiguresAppliedSerializer,
    FiguresApplyInputSerializer,
    FiguresPreviewSerializer,
    FiguresReadInputSerializer,
)
from lev.accounts.api import validated
from lev.accounts.scopes import DEALS_READ, DEALS_WRITE
from lev.openapi import READ_ERRORS, WRITE_ERRORS


class DocumentFiguresApi(DealScopedView):
    # Reading stores only what was read on the version: the deal is not changed (apply changes it).
    required_scopes = {"POST": DEALS_READ}

    @extend_schema(operation_id="document_figures_read", request=FiguresReadInputSerializer,
                   responses={200: FiguresPreviewSerializer, **READ_ERRORS})
    def post(self, request: Request, document_id: int) -> Response:
        """Read the document's rent roll or T-12 (XLSX or CSV; its current version unless `version` is given)
        and answer its figures — units, occupied units, occupancy and in-place rent; or effective gross
        income, operating expenses and NOI — each beside the deal's current value of the field it applies
        to, and what could not be read, each with its row. Nothing of the deal changes: apply with
        …/figures/apply/. A file that is no rent roll or T-12 is a VALIDATION_ERROR saying what was looked for."""
        data = validated(FiguresReadInputSerializer, request.data or {})
        document = selectors.document_get(account=self.account(request), document_id=document_id)
        version = selectors.document_version_get(document=document, number=data.get("version"))
        services.figures_read(version=version)
        return Response(FiguresPreviewSerializer(figures_preview(deal=document.deal, version=version)).data)


class DocumentFiguresApplyApi(DealScopedView):
    required_scopes = {"POST": DEALS_WRITE}

    @extend_schema(operation_id="document_figures_apply", request=FiguresApplyInputSerializer,
                   responses={200: FiguresAppliedSerializer, **WRITE_ERRORS})
    def post(self, request: Request, document_id: int) -> Response:
        """Apply the document's figures (read first if they were not) to its deal's financials in one step:
        `fields` names which (default every one the file gives). Each applied figure records its source,
        which the financials (`sources`) and the deal's summary show; a later apply replaces it. Units go to
        the deal's property when it has exactly one."""
        data = validated(FiguresApplyInputSerializer, request.data or {})
        document = selectors.document_get(account=self.account(request), document_id=document_id)
        version = selectors.document_version_get(document=document, number=data.get("version"))
        result = services.figures_apply(deal=document.deal, version=version, fields=data.get("fields"),
                                        user=request.user)
        body = {"document_id": document.pk, "deal_id": document.deal_id, "version": version.number,
                "applied": [{"field": name, "value": str(value)} for name, value in result.applied.items()],
                "skipped": [{"field": name, "reason": reason} for name, reason in result.skipped.items()],
                "financials": result.financials}
        return Response(FiguresAppliedSerializer(body).data)
