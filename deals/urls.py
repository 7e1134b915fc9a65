from django.urls import include, path

from deals import api
from deals.history.export_api import HistoryExportApi

urlpatterns = [
    path("deals/", api.DealListCreateApi.as_view(), name="deal-list"),
    path("deals/<int:deal_id>/", api.DealDetailApi.as_view(), name="deal-detail"),
    path("deals/<int:deal_id>/archive/", api.DealArchiveApi.as_view(), name="deal-archive"),
    path("deals/<int:deal_id>/properties/", api.DealPropertyListCreateApi.as_view(), name="deal-property-list"),
    path("deals/<int:deal_id>/properties/<int:property_id>/", api.DealPropertyDetailApi.as_view(),
         name="deal-property-detail"),
    path("deals/<int:deal_id>/financials/", api.DealFinancialsApi.as_view(), name="deal-financials"),
    path("history-export/", HistoryExportApi.as_view(), name="history-export"),
    # Lender searches; placements, term sheets and base rates: the rooms' own URLs.
    path("", include("deals.searches.urls")),
    path("", include("deals.placements.urls")),
    path("", include("deals.companies.urls")),
    path("", include("deals.pipeline.urls")),
    path("", include("deals.summaries.urls")),
    path("", include("deals.notes.urls")),
    path("", include("deals.history.urls")),
    path("", include("deals.documents.figures_urls")),
    path("", include("deals.outreach.urls")),
    path("", include("deals.outreach.inbound_urls")),
    path("", include("deals.documents.urls")),
]
