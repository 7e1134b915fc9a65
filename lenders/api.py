"""REST views of the lender directory and lender searches: validate → service/selector → serialize."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param
from rest_framework.views import APIView

from deals.api import AccountScopedView, validated
from lenders import selectors, services
from lenders.serializers import (
    AssetTypeSerializer,
    DirectoryQuerySerializer,
    LenderListItemSerializer,
    LenderProgramSerializer,
    LenderSearchResultsSerializer,
    LenderSearchStartSerializer,
    LenderSerializer,
    SearchResultsQuerySerializer,
    SearchStartInputSerializer,
)
from lev.openapi import READ_ERRORS, WRITE_ERRORS, nullable_fields
from lev.pagination import KeysetPagination, StandardPagination, keyset_paginated, paginated, results_list
from lev.scopes import LENDERS_READ, SEARCHES_WRITE
from lev.serializers import PageQuerySerializer

# `finished_at` is null until the search finishes.
LenderSearchResultsDoc = nullable_fields(LenderSearchResultsSerializer, "finished_at")


class LenderDirectoryApi(APIView):
    required_scopes = {"GET": LENDERS_READ}

    @extend_schema(operation_id="lenders_list", parameters=[DirectoryQuerySerializer],
                   responses={200: keyset_paginated(LenderListItemSerializer, "PaginatedLenderList"), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        """The lender directory, alphabetically, one page at a time: follow `next` (a `cursor` link)
        to the end. `count` is capped (`count_capped` says there are more)."""
        query = DirectoryQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        filters = query.to_filters()
        paginator = KeysetPagination(
            keyset=selectors.DIRECTORY_KEYSET, scope=selectors.lender_directory_scope(filters=filters),
            page_size=query.validated_data.get("page_size"), cursor=query.validated_data.get("cursor"),
            page=query.validated_data.get("page"),
        )
        page = paginator.paginate_queryset(selectors.lender_directory(filters=filters), request)
        return paginator.get_paginated_response(LenderListItemSerializer(page, many=True).data)


class LenderDetailApi(APIView):
    required_scopes = {"GET": LENDERS_READ}

    @extend_schema(responses={200: LenderSerializer, **READ_ERRORS})
    def get(self, request: Request, lender_id: int) -> Response:
        return Response(LenderSerializer(selectors.lender_get(lender_id=lender_id)).data)


class LenderProgramListApi(APIView):
    required_scopes = {"GET": LENDERS_READ}

    @extend_schema(operation_id="lenders_programs_list", parameters=[PageQuerySerializer],
                   responses={200: paginated(LenderProgramSerializer, "PaginatedLenderProgramList"), **READ_ERRORS})
    def get(self, request: Request, lender_id: int) -> Response:
        """The lender's programs, one page at a time, in the order of the lender's detail (active first)."""
        validated(PageQuerySerializer, request.query_params.dict())
        programs = selectors.lender_program_list(lender_id=lender_id)
        paginator = StandardPagination()
        page = paginator.paginate_queryset(programs, request, view=self)
        return paginator.get_paginated_response(LenderProgramSerializer(page, many=True).data)


class AssetTypeListApi(APIView):
    required_scopes = {"GET": LENDERS_READ}

    @extend_schema(operation_id="asset_types_list",
                   responses={200: results_list(AssetTypeSerializer, "AssetTypeList"), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        return Response({"results": AssetTypeSerializer(selectors.asset_type_list(), many=True).data})


class DealLenderSearchApi(AccountScopedView):
    required_scopes = {"POST": SEARCHES_WRITE}

    @extend_schema(request=SearchStartInputSerializer,
                   responses={202: LenderSearchStartSerializer, 200: LenderSearchStartSerializer, **WRITE_ERRORS})
    def post(self, request: Request, deal_id: int) -> Response:
        """Start ranking lenders for the deal (202), or reuse a recent search of the unchanged
        deal (200). Poll GET /lender-searches/{id}/ for results."""
        validated(SearchStartInputSerializer, request.data or {})
        deal = self.deal(request, deal_id)
        search, created = services.lender_search_start(deal=deal, user=request.user)
        # Read back: where jobs run in-process the search has already finished by now.
        search = selectors.lender_search_get(account=self.account(request), search_id=search.pk)
        body = LenderSearchStartSerializer(search, context={"created": created}).data
        return Response(body, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK)


class LenderSearchDetailApi(AccountScopedView):
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
        search = selectors.lender_search_get(account=self.account(request), search_id=search_id)
        search = services.lender_search_recover_if_stale(search=search)
        match_page = selectors.lender_match_page(search=search, page=page, size=size)
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
