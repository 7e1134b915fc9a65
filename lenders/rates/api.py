"""REST views of market rates: each index's rate as of a date, an index's dated history, and the
deprecated list of current base rates. Global data: any credential with the scope reads the same rates."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lenders.rates import selectors
from lenders.rates.csv_rows import INDEX_CHOICES, index_key
from lenders.rates.serializers import (
    BaseRateSerializer,
    MarketRateHistoryItemSerializer,
    MarketRateHistoryQuerySerializer,
    MarketRatesQuerySerializer,
    MarketRatesSerializer,
)
from lev.accounts.api import validated
from lev.accounts.scopes import LENDERS_READ, PLACEMENTS_READ
from lev.enums import RATE_INDEX_NAMES, RATE_INDEXES
from lev.errors import ValidationFailed
from lev.openapi import READ_ERRORS
from lev.pagination import StandardPagination, paginated, results_list

INDEX_PARAMETER = OpenApiParameter(
    "index", OpenApiTypes.STR, OpenApiParameter.PATH, enum=list(RATE_INDEXES),
    description="The rate index: " + INDEX_CHOICES + ". Its display name is read too.")


class MarketRateListApi(APIView):
    required_scopes = {"GET": LENDERS_READ}

    @extend_schema(operation_id="market_rates_list", parameters=[MarketRatesQuerySerializer],
                   responses={200: MarketRatesSerializer, **READ_ERRORS})
    def get(self, request: Request) -> Response:
        """Each rate index's rate (or one index's) as of a date (default today): its latest rate dated on
        or before it, with that date. An index with no rate that early is listed with rate and date null."""
        query = validated(MarketRatesQuerySerializer, request.query_params.dict())
        as_of = query.get("as_of") or timezone.localdate()
        indexes = [query["index"]] if query.get("index") else list(RATE_INDEXES)
        rates = selectors.rates_as_of(on=as_of, indexes=indexes)
        results = []
        for index in indexes:
            row = rates.get(index)
            results.append({"index": index, "name": RATE_INDEX_NAMES[index], "rate": row.rate if row else None,
                            "date": row.on if row else None, "days_old": (as_of - row.on).days if row else None})
        return Response(MarketRatesSerializer({"as_of": as_of, "results": results}).data)


class MarketRateHistoryApi(APIView):
    required_scopes = {"GET": LENDERS_READ}

    @extend_schema(operation_id="market_rates_history", parameters=[INDEX_PARAMETER, MarketRateHistoryQuerySerializer],
                   responses={200: paginated(MarketRateHistoryItemSerializer, "PaginatedMarketRateHistory"),
                              **READ_ERRORS})
    def get(self, request: Request, index: str) -> Response:
        """An index's dated rates between `since` and `until` (both included), newest first, one page
        at a time."""
        key = index_key(index)
        if key is None:
            raise ValidationFailed({"index": [f'"{index[:40]}" is not a rate index; the indexes are: {INDEX_CHOICES}']})
        query = validated(MarketRateHistoryQuerySerializer, request.query_params.dict())
        rows = selectors.rate_history(index=key, since=query.get("since"), until=query.get("until"))
        paginator = StandardPagination()
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response(MarketRateHistoryItemSerializer(page, many=True).data)


class BaseRateListApi(APIView):
    required_scopes = {"GET": PLACEMENTS_READ}

    @extend_schema(operation_id="base_rates_list", deprecated=True,
                   responses={200: results_list(BaseRateSerializer, "BaseRateList"), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        """Deprecated: use GET /api/v1/market-rates/ (rates as of a date) and
        /market-rates/{index}/history/. Each index's latest rate (percent per year) and its date;
        indexes with no rate are not listed."""
        latest = selectors.latest_rates()
        rows = [latest[index] for index in RATE_INDEXES if index in latest]
        return Response({"results": BaseRateSerializer(rows, many=True).data})
