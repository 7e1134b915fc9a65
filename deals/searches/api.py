"""REST views of lender searches: list a deal's, start one for a deal, read its status and ranked
results. Validate → service/selector → serialize."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from deals.api import DealScopedView
from deals.searches import services
from deals.searches.selectors import lender_match_page, lender_search_get, lender_search_list
from deals.searches.serializers import (
    LenderSearchListItemSerializer,
    LenderSearchResultsSerializer,
    LenderSearchStartSerializer,
    SearchResultsQuerySerializer,
    SearchStartInputSerializer,
)
from lev.accounts.api import validated
from lev.accounts.scopes import LENDERS_READ, SEARCHES_WRITE
from lev.openapi import READ_ERRORS, WRITE_ERRORS, nullable_fields
from lev.pagination import StandardPagination, paginated
from lev.serializers import PageQuerySerializer

# `finished_at` is null until the search finishes.
LenderSearchResultsDoc = nullable_fields(LenderSearchResultsSerializer, "finished_at")


class DealLenderSearchApi(DealScopedView):
    required_scopes = {"GET": LENDERS_READ, "POST": SEARCHES_WRITE}

    @extend_schema(operation_id="deals_lender_searches_list", parameters=[PageQuerySerializer],
                   responses={200: paginated(LenderSearchListItemSerializer, "PaginatedLenderSearchList"),
                              **READ_ERRORS})
    def get(self, request: Request, deal_id: int) -> Response:
        """The deal's lender searches, newest first, one page at a time (`page`, `page_size` ≤ 100):
        each one's id, status and match count. Read one's ranked lenders with GET /lender-searches/{id}/."""
        validated(PageQuerySerializer, request.query_params.dict())
        deal = self.deal(request, deal_id, refs_only=True)
        paginator = StandardPagination()
        page = paginator.paginate_queryset(lender_search_list(deal=deal), request, view=self)
        body = LenderSearchListItemSerializer(page, many=True, context={"deal_version": deal.version}).data
        return paginator.get_paginated_response(body)

    @extend_schema(request=SearchStartInputSerializer,
                   responses={202: LenderSearchStartSerializer, 200: LenderSearchStartSerializer, **WRITE_ERRORS})
    def post(self, request: Request, deal_id: int) -> Response:
        """Start ranking lenders for the deal (202), or reuse a recent search of the unchanged
        deal (200). Poll GET /lender-searches/{id}/ for results."""
        validated(SearchStartInputSerializer, request.data or {})
        deal = self.deal(request, deal_id)
        search, created = services.lender_search_start(deal=deal, user=request.user)
        # Read back: where jobs run in-process the search has already finished by now.
        search = lender_search_get(account=self.account(request), search_id=search.pk)
        body = LenderSearchStartSerializer(search, context={"created": created}).data
        return Response(body, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK)


class LenderSearchDetailApi(DealScopedView):
    required_scopes = {"GET": LENDERS_READ}

    @extend_schema(parameters=[SearchResultsQuerySerializer],
                   responses={200: LenderSearchResultsDoc, **READ_ERRORS})
    def get(self, request: Request, search_id: int) -> Response:
        """A search's status and one page of its ranked matches (`page`, `page_size` ≤ 100).

        `count` is every eligible lender; pages cover the best `ranked_count` of them
        (LEV_RANKING_TOP_N). A superseded search's ranks are removed after retention
        (`results_removed`, `superseded_by_search_id`).

        A failed search answers 200 with status `failed` and `error` {code, message}."""
        query = validated(SearchResultsQuerySerializer, request.query_params.dict())
        page, size = query.get("page", 1), query.get("page_size", StandardPagination.page_size)
        search = lender_search_get(account=self.account(request), search_id=search_id)
        search = services.lender_search_recover_if_stale(search=search)
        match_page = lender_match_page(search=search, page=page, size=size,
                                       capital_source=query.get("capital_source"), with_mix=True)
        url = replace_query_param(request.build_absolute_uri(), "page_size", size)
        # Pages cover the stored top N (ranked), not every eligible lender (total).
        has_next = match_page.ready and page * size < match_page.ranked
        previous = None
        if page > 1:
            previous = replace_query_param(url, "page", page - 1) if page > 2 else remove_query_param(url, "page")
        data = {
            "search": search,
            "page": match_page,
            "next": replace_query_param(url, "page", page + 1) if has_next else None,
            "previous": previous,
        }
        return Response(LenderSearchResultsSerializer(data).data)
