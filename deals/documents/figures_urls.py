from django.urls import path

from deals.documents import figures_api

urlpatterns = [
    path("documents/<int:document_id>/figures/", figures_api.DocumentFiguresApi.as_view(), name="document-figures"),
    path("documents/<int:document_id>/figures/apply/", figures_api.DocumentFiguresApplyApi.as_view(),
         name="document-figures-apply"),
]
