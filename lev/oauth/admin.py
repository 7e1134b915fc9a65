from django.contrib import admin
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_id_token_model,
    get_refresh_token_model,
)

from lev.accounts.admin_bases import AccountScopedAdmin, restrict_to_superusers, revoke_each
from lev.oauth import services
from lev.oauth.models import OAuthAuthorization


@admin.register(OAuthAuthorization)
class OAuthAuthorizationAdmin(AccountScopedAdmin):
    """People's OAuth grants ("connected apps"), scoped to their account. Revoking one stops its
    tokens at once."""

    list_display = ["application", "user", "account", "scope", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["account", "revoked_at"]
    search_fields = ["user__username", "application__name", "application__client_id"]
    list_select_related = ["application", "user", "account"]
    readonly_fields = ["user", "account", "application", "grant", "token_family", "scope", "created_at",
                       "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description="Revoke selected grants (disconnect the apps)")
    def revoke(self, request, queryset):
        revoke_each(self, request, queryset.filter(revoked_at__isnull=True),
                    lambda authorization: services.authorization_revoke(authorization=authorization), "grant(s)")


# django-oauth-toolkit's own admins show registered clients (whose redirect URIs every account's
# sign-ins trust) and raw tokens of every account's people: superusers only. People manage their
# account's connections through the grants above.
restrict_to_superusers(admin.site, get_application_model(), get_access_token_model(), get_refresh_token_model(),
                       get_grant_model(), get_id_token_model())
