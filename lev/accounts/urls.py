from django.urls import path

from lev.accounts import api

urlpatterns = [
    path("account/", api.AccountMeApi.as_view(), name="account"),
]
