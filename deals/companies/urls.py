from django.urls import path

from deals.companies import api

urlpatterns = [
    path("companies/", api.CompanyListCreateApi.as_view(), name="company-list"),
    path("companies/<int:company_id>/", api.CompanyDetailApi.as_view(), name="company-detail"),
    path("companies/<int:company_id>/contacts/", api.CompanyContactListCreateApi.as_view(),
         name="company-contact-list"),
    path("lenders/<int:lender_id>/contacts/", api.LenderContactListCreateApi.as_view(), name="lender-contact-list"),
    path("contacts/<int:contact_id>/", api.ContactDetailApi.as_view(), name="contact-detail"),
]
