"""REST views of placements, term sheets and their comparison: validate → call a service
or selector → serialize. Tenancy as for deals: a placement or term sheet of another account is a 404
exactly like a missing one."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from deals.api import DealScopedView
from deals.placements import selectors, services
from deals.placements.comparison import term_sheet_comparison
from deals.placements.models import Placement, TermSheet
from deals.placements.serializers import (
    ComparisonQuerySerializer,
    ComparisonSerializer,
    PlacementBatchSerializer,
    PlacementCreateInputSerializer,
    PlacementDetailSerializer,
    PlacementListQuerySerializer,
    PlacementSerializer,
    PlacementUpdateInputSerializer,
    TermSheetInputSerializer,
    TermSheetListQuerySerializer,
    TermSheetSerializer,
    WinnerChoiceSerializer,
)
from deals.searches.selectors import lender_search_get
from lev.accounts.api import validated
from lev.accounts.scopes import PLACEMENTS_READ, PLACEMENTS_WRITE
from lev.idempotency.services import idempotent
from lev.limits import PLACEMENT_TOP_N_DEFAULT
from lev.openapi import IDEMPOTENCY_KEY, READ_ERRORS, WRITE_ERRORS
from lev.pagination import StandardPagination, paginated, results_list


def _page(view: APIView, request: Request, queryset, serializer_class) -> Response:
    paginator = StandardPagination()
    page = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)


class PlacementScopedView(DealScopedView):
    def placement(self, request: Request, placement_id: int) -> Placement:
        return selectors.placement_get(account=self.account(request), placement_id=placement_id)

    def term_sheet(self, request: Request, term_sheet_id: int) -> TermSheet:
        return selectors.term_sheet_get(account=self.account(request), term_sheet_id=term_sheet_id)


class DealPlacementListCreateApi(PlacementScopedView):
    required_scopes = {"GET": PLACEMENTS_READ, "POST": PLACEMENTS_WRITE}

    @extend_schema(operation_id="deals_placements_list", parameters=[PlacementListQuerySerializer],
                   responses={200: paginated(PlacementSerializer, "PaginatedPlacementList"), **READ_ERRORS})
    def get(self, request: Request, deal_id: int) -> Response:
        """The deal's placements (the deal sent to lenders), oldest first; filter by status or lender."""
        query = PlacementListQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        deal = self.deal(request, deal_id)
        return _page(self, request, selectors.placement_list(deal=deal, filters=query.to_filters()),
                     PlacementSerializer)

    @extend_schema(request=PlacementCreateInputSerializer, parameters=[IDEMPOTENCY_KEY],
                   responses={201: PlacementBatchSerializer, 200: PlacementBatchSerializer, **WRITE_ERRORS})
    def post(self, request: Request, deal_id: int) -> Response:
        """Place the deal with several lenders at once: by lender id, or the top N of a lender search
        of this deal. Lender by lender: placed (`placements`), or not (`failed`, with the error code —
        CONFLICT when the lender already has an open placement on the deal, NOT_FOUND for an unknown
        lender). 201 when at least one placement was made, else 200."""
        def create() -> Response:
            data = validated(PlacementCreateInputSerializer, request.data)
            deal = self.deal(request, deal_id)
            search = None
            if data.get("search_id") is not None:
                search = lender_search_get(account=self.account(request), search_id=data["search_id"])
            batch = services.placements_create(
                deal=deal, user=request.user, lender_ids=data.get("lender_ids"), search=search,
                top_n=data.get("top_n", PLACEMENT_TOP_N_DEFAULT), send=data.get("send", False),
                notes=data.get("notes") or "", contact_ids=data.get("contact_ids"),
            )
            code = status.HTTP_201_CREATED if batch.created else status.HTTP_200_OK
            # Read back with their lenders and programs: one query, not one per placement.
            made = [p.pk for p in batch.created]
            batch.created = list(selectors.placement_list(deal=deal, filters=selectors.PlacementFilters())
                                 .filter(pk__in=made))
            return Response(PlacementBatchSerializer(batch).data, status=code)

        return idempotent(request, create)


class PlacementDetailApi(PlacementScopedView):
    required_scopes = {"GET": PLACEMENTS_READ, "PATCH": PLACEMENTS_WRITE}

    @extend_schema(responses={200: PlacementDetailSerializer, **READ_ERRORS})
    def get(self, request: Request, placement_id: int) -> Response:
        """One placement with its live term sheets."""
        return Response(PlacementDetailSerializer(self.placement(request, placement_id)).data)

    @extend_schema(request=PlacementUpdateInputSerializer, responses={200: PlacementSerializer, **WRITE_ERRORS})
    def patch(self, request: Request, placement_id: int) -> Response:
        """Move the placement to its next status, or change its notes, contact or program. An illegal
        status change is a BUSINESS_RULE naming the allowed next statuses."""
        placement = self.placement(request, placement_id)
        data = validated(PlacementUpdateInputSerializer, request.data, partial=True)
        services.placement_update(placement=placement, data=data)
        return Response(PlacementSerializer(self.placement(request, placement_id)).data)


class PlacementTermSheetListCreateApi(PlacementScopedView):
    required_scopes = {"GET": PLACEMENTS_READ, "POST": PLACEMENTS_WRITE}

    @extend_schema(operation_id="placements_term_sheets_list",
                   responses={200: results_list(TermSheetSerializer, "TermSheetList"), **READ_ERRORS})
    def get(self, request: Request, placement_id: int) -> Response:
        placement = self.placement(request, placement_id)
        term_sheets = selectors.term_sheet_list(deal=placement.deal,
                                                filters=selectors.TermSheetFilters(placement_id=placement.pk))
        return Response({"results": TermSheetSerializer(term_sheets, many=True).data})

    @extend_schema(request=TermSheetInputSerializer, parameters=[IDEMPOTENCY_KEY],
                   responses={201: TermSheetSerializer, **WRITE_ERRORS})
    def post(self, request: Request, placement_id: int) -> Response:
        """Record a lender's quote on a sent, reviewing or quoted placement (it becomes quoted)."""
        def create() -> Response:
            placement = self.placement(request, placement_id)
            data = validated(TermSheetInputSerializer, request.data)
            term_sheet = services.term_sheet_add(placement=placement, data=data, user=request.user)
            body = TermSheetSerializer(self.term_sheet(request, term_sheet.pk)).data
            return Response(body, status=status.HTTP_201_CREATED)

        return idempotent(request, create)


class DealTermSheetListApi(PlacementScopedView):
    required_scopes = {"GET": PLACEMENTS_READ}

    @extend_schema(operation_id="deals_term_sheets_list", parameters=[TermSheetListQuerySerializer],
                   responses={200: paginated(TermSheetSerializer, "PaginatedTermSheetList"), **READ_ERRORS})
    def get(self, request: Request, deal_id: int) -> Response:
        """The deal's live term sheets (quotes), oldest first."""
        query = TermSheetListQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        deal = self.deal(request, deal_id)
        return _page(self, request, selectors.term_sheet_list(deal=deal, filters=query.to_filters()),
                     TermSheetSerializer)


class DealTermSheetComparisonApi(PlacementScopedView):
    required_scopes = {"GET": PLACEMENTS_READ}

    @extend_schema(parameters=[ComparisonQuerySerializer], responses={200: ComparisonSerializer, **READ_ERRORS})
    def get(self, request: Request, deal_id: int) -> Response:
        """The deal's quotes on one basis (all-in rate and cost, proceeds, fees in dollars, leverage,
        annual debt service, DSCR), best first, with short notes; `unavailable` says what cannot be
        computed and why."""
        limit = validated(ComparisonQuerySerializer, request.query_params.dict()).get("limit")
        comparison = term_sheet_comparison(deal=self.deal(request, deal_id))
        return Response(ComparisonSerializer(comparison, context={"limit": limit}).data)


class TermSheetDetailApi(PlacementScopedView):
    required_scopes = {"GET": PLACEMENTS_READ, "DELETE": PLACEMENTS_WRITE}

    @extend_schema(responses={200: TermSheetSerializer, **READ_ERRORS})
    def get(self, request: Request, term_sheet_id: int) -> Response:
        return Response(TermSheetSerializer(self.term_sheet(request, term_sheet_id)).data)

    @extend_schema(request=None, responses={204: None, **WRITE_ERRORS})
    def delete(self, request: Request, term_sheet_id: int) -> Response:
        """Remove a quote (kept on record, no longer listed or compared). The winning quote stays."""
        services.term_sheet_remove(term_sheet=self.term_sheet(request, term_sheet_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class TermSheetSelectWinnerApi(PlacementScopedView):
    required_scopes = {"POST": PLACEMENTS_WRITE}

    @extend_schema(request=None, parameters=[IDEMPOTENCY_KEY], responses={200: WinnerChoiceSerializer, **WRITE_ERRORS})
    def post(self, request: Request, term_sheet_id: int) -> Response:
        """Choose the deal's winning quote: its placement becomes won and the deal's other open
        placements lost, at once. Choosing the current winner again changes nothing."""
        def select() -> Response:
            choice = services.term_sheet_select_winner(term_sheet=self.term_sheet(request, term_sheet_id),
                                                        user=request.user)
            choice.term_sheet = self.term_sheet(request, term_sheet_id)
            return Response(WinnerChoiceSerializer(choice).data)

        return idempotent(request, select)
