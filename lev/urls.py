from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny

from lev.health import health
from lev.metrics import metrics_view
from lev.views import home

api_v1 = [
    path("", include("deals.urls")),
    path("", include("lenders.urls")),
    path("schema/", SpectacularAPIView.as_view(permission_classes=[AllowAny]), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema", permission_classes=[AllowAny]), name="api-docs"),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("health", health, name="health"),
    path("metrics", metrics_view, name="metrics"),
    path("", include("mcp_tools.urls")),
    # OAuth 2.1: /.well-known metadata, /oauth/… endpoints, sign-in and connected apps.
    path("", include("lev.oauth.urls")),
    path("", home, name="home"),
]
