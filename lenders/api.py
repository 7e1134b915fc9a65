"""REST views of the lender directory and lender searches: validate → service/selector → serialize."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lenders import selectors
from lenders.serializers import (
    AssetTypeSerializer,
    DirectoryQuerySerializer,
    LenderListItemSerializer,
    LenderProgramSerializer,
    LenderSerializer,
)
from lev.accounts.api import validated
from lev.accounts.scopes import LENDERS_READ
from lev.openapi import READ_ERRORS
from lev.pagination import KeysetPagination, StandardPagination, keyset_paginated, paginated, results_list
from lev.serializers import PageQuerySerializer


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
