from django.urls import path

from deals.outreach import api

urlpatterns = [
    path("deals/<int:deal_id>/outreach/", api.DealOutreachApi.as_view(), name="deal-outreach"),
    path("deals/<int:deal_id>/outreach/preview/", api.DealOutreachPreviewApi.as_view(), name="deal-outreach-preview"),
    path("outreach/<int:send_id>/", api.OutreachSendApi.as_view(), name="outreach-send"),
    path("placements/<int:placement_id>/emails/", api.PlacementEmailsApi.as_view(), name="placement-emails"),
    path("packages/<int:package_id>/revoke/", api.PackageRevokeApi.as_view(), name="package-revoke"),
    path("outreach-templates/", api.OutreachTemplateListApi.as_view(), name="outreach-template-list"),
    path("outreach-templates/<str:kind>/", api.OutreachTemplateDetailApi.as_view(), name="outreach-template-detail"),
]
