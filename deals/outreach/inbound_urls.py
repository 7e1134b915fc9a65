"""The inbound replies' route (included from deals/urls.py, so under /api/v1/). Not an account's REST
view: the relay signs each message with the shared secret (deals.outreach.inbound_api)."""

from django.urls import path

from deals.outreach import inbound_api

urlpatterns = [
    path("inbound-email/", inbound_api.inbound_email, name="inbound-email"),
]
