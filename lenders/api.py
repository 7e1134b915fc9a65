"""REST views of the lender directory as the caller's account sees it (the directory's lenders and its own),
and the writes of its own lenders and programs: validate → service/selector → serialize.

Reads need lenders:read. The account's own lenders and programs are part of its records, written with
deals:write as its companies and contacts are (docs/lender-discovery.md says why); a viewer cannot write.
Another account's own lender or program is a 404 exactly like a missing one; the directory's is a 403 to
change (superusers keep it in the admin)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lenders import selectors, services
from lenders.serializers import (
    AssetTypeSerializer,
    DirectoryQuerySerializer,
    LenderInputSerializer,
    LenderListItemSerializer,
    LenderProgramInputSerializer,
    LenderProgramSerializer,
    LenderSerializer,
)
from lev.accounts.api import AccountScopedView, validated
from lev.accounts.scopes import DEALS_WRITE, LENDERS_READ
from lev.idempotency.services import idempotent
from lev.openapi import IDEMPOTENCY_KEY, READ_ERRORS, WRITE_ERRORS
from lev.pagination import KeysetPagination, StandardPagination, keyset_paginated, paginated, results_list
from lev.serializers import PageQuerySerializer


class LenderDirectoryApi(AccountScopedView):
    required_scopes = {"GET": LENDERS_READ, "POST": DEALS_WRITE}

    @extend_schema(operation_id="lenders_list", parameters=[DirectoryQuerySerializer],
                   responses={200: keyset_paginated(LenderListItemSerializer, "PaginatedLenderList"), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        """The lender directory and the account's own lenders (`own`: true), alphabetically, one page at a
        time: follow `next` (a `cursor` link) to the end. `count` is capped (`count_capped` says there are
        more)."""
        query = DirectoryQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        filters, account = query.to_filters(), self.account(request)
        paginator = KeysetPagination(
            keyset=selectors.DIRECTORY_KEYSET,
            scope=selectors.lender_directory_scope(filters=filters, account=account),
            page_size=query.validated_data.get("page_size"), cursor=query.validated_data.get("cursor"),
            page=query.validated_data.get("page"),
        )
        page = paginator.paginate_queryset(selectors.lender_directory(filters=filters, account=account), request)
        return paginator.get_paginated_response(LenderListItemSerializer(page, many=True).data)

    @extend_schema(operation_id="lenders_create", request=LenderInputSerializer, parameters=[IDEMPOTENCY_KEY],
                   responses={201: LenderSerializer, **WRITE_ERRORS})
    def post(self, request: Request) -> Response:
        """Add a lender the directory lacks, as the account's own: listed, ranked, placed and quoted like the
        directory's, read by this account alone."""
        def create() -> Response:
            data = validated(LenderInputSerializer, request.data)
            lender = services.lender_create(account=self.account(request), data=data)
            return Response(LenderSerializer(selectors.lender_get(lender_id=lender.pk, account=self.account(request)))
                            .data, status=status.HTTP_201_CREATED)

        return idempotent(request, create)


class LenderDetailApi(AccountScopedView):
    required_scopes = {"GET": LENDERS_READ, "PATCH": DEALS_WRITE}

    @extend_schema(responses={200: LenderSerializer, **READ_ERRORS})
    def get(self, request: Request, lender_id: int) -> Response:
        """A lender with its programs (the directory's and the account's own)."""
        return Response(LenderSerializer(selectors.lender_get(lender_id=lender_id, account=self.account(request)))
                        .data)

    @extend_schema(request=LenderInputSerializer, responses={200: LenderSerializer, **WRITE_ERRORS})
    def patch(self, request: Request, lender_id: int) -> Response:
        """Change the account's own lender (a directory lender: 403)."""
        account = self.account(request)
        lender = selectors.lender_get(lender_id=lender_id, account=account)
        data = validated(LenderInputSerializer, request.data, partial=True)
        services.lender_update(account=account, lender=lender, data=data)
        return Response(LenderSerializer(selectors.lender_get(lender_id=lender_id, account=account)).data)


class LenderProgramListApi(AccountScopedView):
    required_scopes = {"GET": LENDERS_READ, "POST": DEALS_WRITE}

    @extend_schema(operation_id="lenders_programs_list", parameters=[PageQuerySerializer],
                   responses={200: paginated(LenderProgramSerializer, "PaginatedLenderProgramList"), **READ_ERRORS})
    def get(self, request: Request, lender_id: int) -> Response:
        """The lender's programs, one page at a time, in the order of the lender's detail (active first)."""
        validated(PageQuerySerializer, request.query_params.dict())
        programs = selectors.lender_program_list(lender_id=lender_id, account=self.account(request))
        paginator = StandardPagination()
        page = paginator.paginate_queryset(programs, request, view=self)
        return paginator.get_paginated_response(LenderProgramSerializer(page, many=True).data)

    @extend_schema(operation_id="lenders_programs_create", request=LenderProgramInputSerializer,
                   parameters=[IDEMPOTENCY_KEY], responses={201: LenderProgramSerializer, **WRITE_ERRORS})
    def post(self, request: Request, lender_id: int) -> Response:
        """Add a program of the account's own to its own lender or to a directory lender: the account's
        searches rank it beside the directory's programs; no other account reads it. Rules over two fields:
        each min at most its max (loan amount, spread, fixed rate, term); a spread needs `rate_index`; a
        `fixed` rate_type takes no spread or index, a `floating` one no fixed rate; an active program states
        a loan type, an asset type and a position (senior when left out)."""
        def create() -> Response:
            account = self.account(request)
            lender = selectors.lender_get(lender_id=lender_id, account=account)
            data = validated(LenderProgramInputSerializer, request.data)
            program = services.program_create(account=account, lender=lender, data=data)
            return Response(LenderProgramSerializer(program).data, status=status.HTTP_201_CREATED)

        return idempotent(request, create)


class LenderProgramDetailApi(AccountScopedView):
    required_scopes = {"GET": LENDERS_READ, "PATCH": DEALS_WRITE}

    @extend_schema(responses={200: LenderProgramSerializer, **READ_ERRORS})
    def get(self, request: Request, lender_id: int, program_id: int) -> Response:
        return Response(LenderProgramSerializer(selectors.program_get(
            lender_id=lender_id, program_id=program_id, account=self.account(request))).data)

    @extend_schema(request=LenderProgramInputSerializer, responses={200: LenderProgramSerializer, **WRITE_ERRORS})
    def patch(self, request: Request, lender_id: int, program_id: int) -> Response:
        """Change the account's own program (a directory program: 403); the program as changed keeps the
        rules over two fields of the create."""
        account = self.account(request)
        program = selectors.program_get(lender_id=lender_id, program_id=program_id, account=account)
        data = validated(LenderProgramInputSerializer, request.data, partial=True)
        return Response(LenderProgramSerializer(services.program_update(account=account, program=program,
                                                                        data=data)).data)


class AssetTypeListApi(APIView):  # the asset types: global reference data, no account
    required_scopes = {"GET": LENDERS_READ}

    @extend_schema(operation_id="asset_types_list",
                   responses={200: results_list(AssetTypeSerializer, "AssetTypeList"), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        return Response({"results": AssetTypeSerializer(selectors.asset_type_list(), many=True).data})
