from django.urls import path

from deals.documents import api

urlpatterns = [
    path("deals/<int:deal_id>/documents/", api.DealDocumentListCreateApi.as_view(), name="deal-document-list"),
    path("documents/<int:document_id>/", api.DocumentDetailApi.as_view(), name="document-detail"),
    path("documents/<int:document_id>/download/", api.DocumentDownloadApi.as_view(), name="document-download"),
]
