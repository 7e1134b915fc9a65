"""REST views of the pipeline: the stages with their deal counts and loan totals, an account admin's
changes to them, moving a deal and reading its stage history. Tenancy as everywhere: another account's
stage or deal is a 404 exactly like a missing one."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from deals.api import DealScopedView
from deals.pipeline import selectors, services
from deals.pipeline.serializers import (
    DealMoveResultSerializer,
    DealMoveSerializer,
    PipelineSerializer,
    StageChangeSerializer,
    StageCreateSerializer,
    StageOrderSerializer,
    StageRenameSerializer,
    StageSerializer,
)
from lev.accounts.api import validated
from lev.accounts.scopes import DEALS_READ, DEALS_WRITE
from lev.accounts.selectors import check_can_administer
from lev.idempotency.services import idempotent
from lev.openapi import IDEMPOTENCY_KEY, READ_ERRORS, WRITE_ERRORS
from lev.pagination import StandardPagination, paginated
from lev.serializers import PageQuerySerializer


class PipelineView(DealScopedView):
    def stage(self, request: Request, stage_id: int):
        return selectors.stage_get(account=self.account(request), stage_id=stage_id)

    def pipeline(self, request: Request) -> Response:
        return Response(PipelineSerializer(selectors.pipeline_get(account=self.account(request))).data)


class StageListCreateApi(PipelineView):
    required_scopes = {"GET": DEALS_READ, "POST": DEALS_WRITE}

    @extend_schema(operation_id="pipeline_stages_list", responses={200: PipelineSerializer, **READ_ERRORS})
    def get(self, request: Request) -> Response:
        """The account's stages in order, each with its deals that are not archived counted and their
        amounts added up (a winner's loan amount once chosen), and the active deals' totals (the open
        stages': never a closed or dead stage's)."""
        return self.pipeline(request)

    @extend_schema(request=StageCreateSerializer, parameters=[IDEMPOTENCY_KEY],
                   responses={201: StageSerializer, **WRITE_ERRORS})
    def post(self, request: Request) -> Response:
        """Add a stage to the pipeline. Only an account admin (the owner role) may; anyone else is
        FORBIDDEN."""
        def create() -> Response:
            check_can_administer(membership=self.membership)
            data = validated(StageCreateSerializer, request.data)
            stage = services.stage_create(account=self.account(request), name=data["name"],
                                          kind=data.get("kind") or "open", position=data.get("position"))
            return Response(StageSerializer(stage).data, status=status.HTTP_201_CREATED)

        return idempotent(request, create)


class StageDetailApi(PipelineView):
    required_scopes = {"GET": DEALS_READ, "PATCH": DEALS_WRITE}

    @extend_schema(responses={200: StageSerializer, **READ_ERRORS})
    def get(self, request: Request, stage_id: int) -> Response:
        return Response(StageSerializer(self.stage(request, stage_id)).data)

    @extend_schema(request=StageRenameSerializer, responses={200: StageSerializer, **WRITE_ERRORS})
    def patch(self, request: Request, stage_id: int) -> Response:
        """Rename a stage. A default stage keeps its key, so the automatic moves still find it. Without
        `name`, nothing changes. Only an account admin (the owner role) may; anyone else is FORBIDDEN."""
        stage = self.stage(request, stage_id)
        check_can_administer(membership=self.membership)
        data = validated(StageRenameSerializer, request.data, partial=True)
        if "name" in data:
            stage = services.stage_rename(stage=stage, name=data["name"])
        return Response(StageSerializer(stage).data)


class StageOrderApi(PipelineView):
    required_scopes = {"PUT": DEALS_WRITE}

    @extend_schema(request=StageOrderSerializer, responses={200: PipelineSerializer, **WRITE_ERRORS})
    def put(self, request: Request) -> Response:
        """Reorder the stages: list every stage's id once, first to last. The automatic moves go forward
        in this order. Only an account admin (the owner role) may; anyone else is FORBIDDEN."""
        check_can_administer(membership=self.membership)
        data = validated(StageOrderSerializer, request.data)
        services.stages_reorder(account=self.account(request), stage_ids=data["stage_ids"])
        return self.pipeline(request)


class DealStageApi(PipelineView):
    required_scopes = {"POST": DEALS_WRITE}

    @extend_schema(request=DealMoveSerializer, parameters=[IDEMPOTENCY_KEY],
                   responses={200: DealMoveResultSerializer, **WRITE_ERRORS})
    def post(self, request: Request, deal_id: int) -> Response:
        """Move a deal to a stage of its pipeline, in any direction, recorded with who, when, from, to and
        why. Moving it to the stage it is in changes nothing (`changed`: false)."""
        def move() -> Response:
            deal = self.deal(request, deal_id)
            data = validated(DealMoveSerializer, request.data)
            stage = selectors.stage_find(account=self.account(request), text=data["stage"])
            result = services.deal_move_stage(deal=deal, stage=stage, user=request.user,
                                              reason=data.get("reason") or "")
            return Response(DealMoveResultSerializer(result).data)

        return idempotent(request, move)


class DealStageHistoryApi(PipelineView):
    required_scopes = {"GET": DEALS_READ}

    @extend_schema(operation_id="deals_stage_changes_list", parameters=[PageQuerySerializer],
                   responses={200: paginated(StageChangeSerializer, "PaginatedStageChangeList"), **READ_ERRORS})
    def get(self, request: Request, deal_id: int) -> Response:
        """The deal's stage changes, oldest first: where it started, then every move (who, when, from,
        to, automatic or by hand, and why)."""
        validated(PageQuerySerializer, request.query_params.dict())
        history = selectors.stage_history(deal=self.deal(request, deal_id))
        paginator = StandardPagination()
        page = paginator.paginate_queryset(history, request, view=self)
        return paginator.get_paginated_response(StageChangeSerializer(page, many=True).data)
