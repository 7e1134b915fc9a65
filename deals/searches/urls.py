from django.urls import path

from deals.searches import api

urlpatterns = [
    path("deals/<int:deal_id>/lender-searches/", api.DealLenderSearchApi.as_view(), name="deal-lender-search"),
    path("lender-searches/<int:search_id>/", api.LenderSearchDetailApi.as_view(), name="lender-search-detail"),
]
