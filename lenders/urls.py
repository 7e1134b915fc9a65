from django.urls import include, path

from lenders import api

urlpatterns = [
    path("lenders/", api.LenderDirectoryApi.as_view(), name="lender-list"),
    path("lenders/<int:lender_id>/", api.LenderDetailApi.as_view(), name="lender-detail"),
    path("lenders/<int:lender_id>/programs/", api.LenderProgramListApi.as_view(), name="lender-program-list"),
    path("lenders/<int:lender_id>/programs/<int:program_id>/", api.LenderProgramDetailApi.as_view(),
         name="lender-program-detail"),
    path("asset-types/", api.AssetTypeListApi.as_view(), name="asset-type-list"),
    path("", include("lenders.rates.urls")),
]
