"""The authorization server's routes. django-oauth-toolkit's views reverse each other under the
`oauth2_provider` namespace, so its routes (and ours that stand in for its) keep its names."""

from django.contrib.auth import views as auth_views
from django.urls import include, path
from oauth2_provider import views as dot_views

from lev.oauth import views

dot_patterns = [
    # RFC 8414 and RFC 9728 metadata, at the origin's root as those RFCs place them.
    path(".well-known/oauth-authorization-server", dot_views.OAuthServerMetadataView.as_view(),
         name="oauth-server-metadata"),
    path(".well-known/oauth-protected-resource", views.ResourceMetadataView.as_view(),
         name="oauth-resource-metadata"),
    # A protected endpoint's address inserted (lev.endpoints): …/mcp, …/mcp/x/deals/readonly; else 404.
    path(".well-known/oauth-protected-resource/<path:address>", views.ResourceMetadataView.as_view(),
         name="oauth-resource-metadata-endpoint"),
    path("oauth/authorize/", views.ConsentView.as_view(), name="authorize"),
    path("oauth/token/", views.TokenView.as_view(), name="token"),
    path("oauth/revoke/", dot_views.RevokeTokenView.as_view(), name="revoke-token"),
    path("oauth/register/", views.RegistrationView.as_view(), name="dcr-register"),
    path("oauth/register/<str:client_id>/", views.ClientConfigurationView.as_view(),
         name="dcr-register-management"),
]

urlpatterns = [
    path("", include((dot_patterns, "oauth2_provider"))),
    path("oauth/connected-apps/", views.connected_apps, name="oauth-connected-apps"),
    path("accounts/login/", views.SignInView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(next_page="login"), name="logout"),
]
