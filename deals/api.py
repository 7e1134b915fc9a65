"""REST views for deals: validate → call a service or selector → serialize."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from deals import selectors, services
from deals.models import Deal, DealFinancials
from deals.serializers import (
    DealFinancialsDoc,
    DealFinancialsSerializer,
    DealInputSerializer,
    DealListItemSerializer,
    DealListQuerySerializer,
    DealPropertySerializer,
    DealSerializer,
    DealUpdateSerializer,
    FinancialsInputSerializer,
    IncludeQuerySerializer,
    PropertyInputSerializer,
    deal_output,
)
from lev.accounts.api import AccountScopedView, validated
from lev.accounts.scopes import DEALS_READ, DEALS_WRITE
from lev.idempotency.services import idempotent
from lev.openapi import IDEMPOTENCY_KEY, READ_ERRORS, WRITE_ERRORS
from lev.pagination import KeysetPagination, StandardPagination, keyset_paginated, paginated
from lev.serializers import PageQuerySerializer

# A deal without financials answers every figure, the derived ones and updated_at as null.
INCLUDE = OpenApiParameter(
    "include", {"type": "string", "pattern": "^((properties|financials)(,(properties|financials))*)?$"},
    OpenApiParameter.QUERY,
    description="Related data to include: `properties`, `financials`, or both, comma-separated.",
)


class DealScopedView(AccountScopedView):
    """An account-scoped view that reads the account's deals; another account's deal does not exist here."""

    def deal(self, request: Request, deal_id: int, include: frozenset[str] = frozenset(),
             refs_only: bool = False) -> Deal:
        """The account's deal (deals.selectors.deal_get); `refs_only` where the view reads no more of its
        stage, owner, sponsor and borrower than DealSerializer writes (their other columns are not read)."""
        return selectors.deal_get(account=self.account(request), deal_id=deal_id, include=include,
                                  refs_only=refs_only)


class DealListCreateApi(DealScopedView):
    required_scopes = {"GET": DEALS_READ, "POST": DEALS_WRITE}

    @extend_schema(operation_id="deals_list", parameters=[DealListQuerySerializer],
                   responses={200: keyset_paginated(DealListItemSerializer, "PaginatedDealList"), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        """The account's deals, one page at a time, newest first unless `ordering` says otherwise.

        Follow `next` (a `cursor` link) to the end: every deal that exists throughout comes exactly
        once, whatever is added or changed meanwhile (a deal whose sort value changes moves to its
        new place). A missing loan amount or closing date sorts after every value going up, before
        every value going down. `count` is capped (`count_capped` says there are more)."""
        query = DealListQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        account, filters = self.account(request), query.to_filters()
        paginator = KeysetPagination(
            keyset=selectors.deal_list_keyset(ordering=filters.ordering),
            scope=selectors.deal_list_scope(account=account, filters=filters),
            page_size=query.validated_data.get("page_size"), cursor=query.validated_data.get("cursor"),
            page=query.validated_data.get("page"),
        )
        page = paginator.paginate_queryset(selectors.deal_list(account=account, filters=filters), request)
        return paginator.get_paginated_response(DealListItemSerializer(page, many=True).data)

    @extend_schema(request=DealInputSerializer, responses={201: DealSerializer, **WRITE_ERRORS},
                   parameters=[IDEMPOTENCY_KEY])
    def post(self, request: Request) -> Response:
        def create() -> Response:
            data = validated(DealInputSerializer, request.data)
            deal = services.deal_create(account=self.account(request), user=request.user, data=data)
            deal = self.deal(request, deal.pk, include=frozenset({"properties"}), refs_only=True)
            body = DealSerializer(deal, include=frozenset({"properties"})).data
            return Response(body, status=status.HTTP_201_CREATED)

        return idempotent(request, create)


class DealDetailApi(DealScopedView):
    required_scopes = {"GET": DEALS_READ, "PATCH": DEALS_WRITE}

    @extend_schema(parameters=[INCLUDE], responses={200: DealSerializer, **READ_ERRORS})
    def get(self, request: Request, deal_id: int) -> Response:
        # No query string, nothing to validate (the common read, the MCP tool's included).
        include = (validated(IncludeQuerySerializer, request.query_params.dict()).get("include", frozenset())
                   if request.query_params else frozenset())
        if include <= {"financials"}:
            # The common reads (MCP get_deal's): one row, written by deal_output, which a test holds to
            # DealSerializer's bytes; the financials, when included, by their serializer as DealSerializer
            # writes them. With properties, DealSerializer writes the whole answer.
            row = selectors.deal_row(account=self.account(request), deal_id=deal_id)
            data = deal_output(row)
            if include:
                data["financials"] = DealFinancialsSerializer(selectors.deal_row_financials(row=row)).data
            return Response(data)
        deal = self.deal(request, deal_id, include=include, refs_only=True)
        return Response(DealSerializer(deal, include=include).data)

    @extend_schema(request=DealUpdateSerializer, responses={200: DealSerializer, **WRITE_ERRORS})
    def patch(self, request: Request, deal_id: int) -> Response:
        deal = self.deal(request, deal_id, refs_only=True)
        data = validated(DealUpdateSerializer, request.data, partial=True)
        deal = services.deal_update(deal=deal, data=data)
        return Response(DealSerializer(deal).data)


class DealArchiveApi(DealScopedView):
    required_scopes = {"POST": DEALS_WRITE}

    @extend_schema(request=None, responses={200: DealSerializer, **WRITE_ERRORS})
    def post(self, request: Request, deal_id: int) -> Response:
        deal = services.deal_archive(deal=self.deal(request, deal_id, refs_only=True))
        return Response(DealSerializer(deal).data)


class DealPropertyListCreateApi(DealScopedView):
    required_scopes = {"GET": DEALS_READ, "POST": DEALS_WRITE}

    @extend_schema(operation_id="deals_properties_list", parameters=[PageQuerySerializer],
                   responses={200: paginated(DealPropertySerializer, "PaginatedDealPropertyList"), **READ_ERRORS})
    def get(self, request: Request, deal_id: int) -> Response:
        """The deal's properties, oldest first, one page at a time (a deal may have hundreds)."""
        validated(PageQuerySerializer, request.query_params.dict())
        # The deal only scopes the list (MCP get_deal's second read): nothing of it is written.
        deal = selectors.deal_scope(account=self.account(request), deal_id=deal_id)
        properties = selectors.deal_property_list(deal=deal)
        paginator = StandardPagination()
        page = paginator.paginate_queryset(properties, request, view=self)
        return paginator.get_paginated_response(DealPropertySerializer(page, many=True).data)

    @extend_schema(request=PropertyInputSerializer, responses={201: DealPropertySerializer, **WRITE_ERRORS},
                   parameters=[IDEMPOTENCY_KEY])
    def post(self, request: Request, deal_id: int) -> Response:
        def create() -> Response:
            deal = self.deal(request, deal_id)
            data = validated(PropertyInputSerializer, request.data)
            prop = services.deal_property_create(deal=deal, data=data)
            return Response(DealPropertySerializer(prop).data, status=status.HTTP_201_CREATED)

        return idempotent(request, create)


class DealPropertyDetailApi(DealScopedView):
    required_scopes = {"GET": DEALS_READ, "PATCH": DEALS_WRITE, "DELETE": DEALS_WRITE}

    @extend_schema(responses={200: DealPropertySerializer, **READ_ERRORS})
    def get(self, request: Request, deal_id: int, property_id: int) -> Response:
        prop = selectors.deal_property_get(deal=self.deal(request, deal_id), property_id=property_id)
        return Response(DealPropertySerializer(prop).data)

    @extend_schema(request=PropertyInputSerializer, responses={200: DealPropertySerializer, **WRITE_ERRORS})
    def patch(self, request: Request, deal_id: int, property_id: int) -> Response:
        prop = selectors.deal_property_get(deal=self.deal(request, deal_id), property_id=property_id)
        data = validated(PropertyInputSerializer, request.data, partial=True)
        prop = services.deal_property_update(prop=prop, data=data)
        return Response(DealPropertySerializer(prop).data)

    @extend_schema(request=None, responses={204: None, **WRITE_ERRORS})
    def delete(self, request: Request, deal_id: int, property_id: int) -> Response:
        prop = selectors.deal_property_get(deal=self.deal(request, deal_id), property_id=property_id)
        services.deal_property_delete(prop=prop)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DealFinancialsApi(DealScopedView):
    required_scopes = {"GET": DEALS_READ, "PATCH": DEALS_WRITE, "PUT": DEALS_WRITE}

    @extend_schema(responses={200: DealFinancialsDoc, **READ_ERRORS})
    def get(self, request: Request, deal_id: int) -> Response:
        deal = self.deal(request, deal_id)
        # A deal without financials yet answers with every figure null: one shape for clients.
        financials = selectors.deal_financials_get(deal=deal) or DealFinancials(deal=deal)
        return Response(DealFinancialsSerializer(financials).data)

    @extend_schema(request=FinancialsInputSerializer, responses={200: DealFinancialsDoc, **WRITE_ERRORS})
    def patch(self, request: Request, deal_id: int) -> Response:
        deal = self.deal(request, deal_id)
        data = validated(FinancialsInputSerializer, request.data, partial=True)
        financials = services.deal_financials_update(deal=deal, data=data)
        return Response(DealFinancialsSerializer(financials).data)

    put = patch
