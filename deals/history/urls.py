from django.urls import path

from deals.history import api

urlpatterns = [
    path("history-imports/", api.HistoryImportListCreateApi.as_view(), name="history-import-list"),
    path("history-imports/<int:import_id>/", api.HistoryImportDetailApi.as_view(), name="history-import-detail"),
    path("history-imports/<int:import_id>/apply/", api.HistoryImportApplyApi.as_view(), name="history-import-apply"),
    path("history-imports/<int:import_id>/report.csv", api.HistoryImportReportApi.as_view(),
         name="history-import-report"),
]
