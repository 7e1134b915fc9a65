"""REST view of a deal's summary: a pure read, tenant-scoped (another account's deal is a 404 exactly
like a missing one). The placements and quotes need placements:read besides deals:read, the lender search lenders:read
(as their own routes do): without one, its part is left out and the summary says so, rather than
refusing the whole summary."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from deals.api import DealScopedView
from deals.summaries.serializers import DealSummarySerializer, SummaryQuerySerializer
from deals.summaries.summary import DEFAULT_DETAIL, deal_summary
from lev.accounts import scopes
from lev.accounts.api import validated
from lev.accounts.scopes import DEALS_READ, LENDERS_READ, PLACEMENTS_READ
from lev.openapi import READ_ERRORS


class DealSummaryApi(DealScopedView):
    required_scopes = {"GET": DEALS_READ}

    @extend_schema(parameters=[SummaryQuerySerializer], responses={200: DealSummarySerializer, **READ_ERRORS})
    def get(self, request: Request, deal_id: int) -> Response:
        """The deal summarised for a credit committee: property, financials (LTV, DSCR on the basis lenders
        underwrite, debt yield), stage, sponsor and borrower, the lender search, the placements and the quotes
        compared, and the next steps. Every figure of `text` cites a source ([n]): the record, the field, the
        value and the path that serves it. The same records give the same bytes. Without placements:read the
        placements and quotes are left out, without lenders:read the lender search (`left_out` says so)."""
        detail = validated(SummaryQuerySerializer, request.query_params.dict()).get("detail") or DEFAULT_DETAIL
        deal = self.deal(request, deal_id)
        granted = scopes.granted(request.auth)
        summary = deal_summary(deal=deal, detail=detail, placements_read=PLACEMENTS_READ in granted,
                               lenders_read=LENDERS_READ in granted)
        return Response(DealSummarySerializer(summary).data)
