from django.urls import path

from lenders.rates import api

urlpatterns = [
    path("market-rates/", api.MarketRateListApi.as_view(), name="market-rate-list"),
    path("market-rates/<str:index>/history/", api.MarketRateHistoryApi.as_view(), name="market-rate-history"),
    path("base-rates/", api.BaseRateListApi.as_view(), name="base-rate-list"),
]
