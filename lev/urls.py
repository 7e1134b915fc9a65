from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny

from lev.health import health
from lev.metrics import metrics_view
from lev.views import home

api_v1 = [
    path("", include("lenders.urls")),
    path("", include("deals.urls")),
    path("", include("lev.accounts.urls")),
    path("schema/", SpectacularAPIView.as_view(permission_classes=[AllowAny]), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema", permission_classes=[AllowAny]), name="api-docs"),
]

# Admin pages of models that moved app (issue 20): their old addresses, bookmarked or linked, lead to the new.
MOVED_ADMIN_PAGES = {
    "lenders/lendersearch": "deals/lendersearch",
    "deals/account": "accounts/account",
    "deals/apikey": "accounts/apikey",
    "deals/idempotencyrecord": "idempotency/idempotencyrecord",
}

# Admin pages of models that were replaced: every old address leads to the new model's list (its rows
# are not the old rows, so no id carries over).
REPLACED_ADMIN_PAGES = {
    "deals/baserate": "lenders/marketrate",  # one rate per index became dated rates (lenders.rates)
}

urlpatterns = [
    *(re_path(rf"^admin/{old}/.*$", RedirectView.as_view(url=f"/admin/{new}/", permanent=True))
      for old, new in REPLACED_ADMIN_PAGES.items()),
    *(re_path(rf"^admin/{old}/(?P<rest>.*)$",
              RedirectView.as_view(url=f"/admin/{new}/%(rest)s", query_string=True, permanent=True))
      for old, new in MOVED_ADMIN_PAGES.items()),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("health", health, name="health"),
    path("metrics", metrics_view, name="metrics"),
    path("", include("mcp_tools.urls")),
    # OAuth 2.1: /.well-known metadata, /oauth/… endpoints, sign-in and connected apps.
    path("", include("lev.oauth.urls")),
    # The deal package a lender opens from its outreach email (no sign-in; the token is the key).
    path("", include("deals.outreach.package_urls")),
    path("", home, name="home"),
]
