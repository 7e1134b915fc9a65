from django.urls import path

from deals.pipeline import api

urlpatterns = [
    path("pipeline/stages/", api.StageListCreateApi.as_view(), name="pipeline-stage-list"),
    path("pipeline/stages/order/", api.StageOrderApi.as_view(), name="pipeline-stage-order"),
    path("pipeline/stages/<int:stage_id>/", api.StageDetailApi.as_view(), name="pipeline-stage-detail"),
    path("deals/<int:deal_id>/stage/", api.DealStageApi.as_view(), name="deal-stage"),
    path("deals/<int:deal_id>/stage-changes/", api.DealStageHistoryApi.as_view(), name="deal-stage-changes"),
]
