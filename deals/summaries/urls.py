from django.urls import path

from deals.summaries import api

urlpatterns = [
    path("deals/<int:deal_id>/summary/", api.DealSummaryApi.as_view(), name="deal-summary"),
]
