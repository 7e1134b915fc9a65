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
    LenderSerializer,
)
from lev.pagination import StandardPagination


class LenderDirectoryApi(APIView):
    @extend_schema(parameters=[DirectoryQuerySerializer], responses=LenderListItemSerializer(many=True))
    def get(self, request: Request) -> Response:
        query = DirectoryQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        lenders = selectors.lender_directory(filters=query.to_filters())
        paginator = StandardPagination()
        page = paginator.paginate_queryset(lenders, request, view=self)
        return paginator.get_paginated_response(LenderListItemSerializer(page, many=True).data)


class LenderDetailApi(APIView):
    @extend_schema(responses=LenderSerializer)
    def get(self, request: Request, lender_id: int) -> Response:
        return Response(LenderSerializer(selectors.lender_get(lender_id=lender_id)).data)


class AssetTypeListApi(APIView):
    @extend_schema(responses=AssetTypeSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response({"results": AssetTypeSerializer(selectors.asset_type_list(), many=True).data})
