from django.urls import path

from deals.placements import api

urlpatterns = [
    path("deals/<int:deal_id>/placements/", api.DealPlacementListCreateApi.as_view(), name="deal-placement-list"),
    path("deals/<int:deal_id>/term-sheets/", api.DealTermSheetListApi.as_view(), name="deal-term-sheet-list"),
    path("deals/<int:deal_id>/term-sheets/comparison/", api.DealTermSheetComparisonApi.as_view(),
         name="deal-term-sheet-comparison"),
    path("placements/<int:placement_id>/", api.PlacementDetailApi.as_view(), name="placement-detail"),
    path("placements/<int:placement_id>/term-sheets/", api.PlacementTermSheetListCreateApi.as_view(),
         name="placement-term-sheet-list"),
    path("term-sheets/<int:term_sheet_id>/", api.TermSheetDetailApi.as_view(), name="term-sheet-detail"),
    path("term-sheets/<int:term_sheet_id>/select-winner/", api.TermSheetSelectWinnerApi.as_view(),
         name="term-sheet-select-winner"),
]
