from django.contrib import admin, messages

from lev.oauth import services
from lev.oauth.models import OAuthAuthorization


@admin.register(OAuthAuthorization)
class OAuthAuthorizationAdmin(admin.ModelAdmin):
    """People's OAuth grants ("connected apps"). Revoking one stops its tokens at once."""

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
        count = 0
        for authorization in queryset.filter(revoked_at__isnull=True):
            services.authorization_revoke(authorization=authorization)
            count += 1
        self.message_user(request, f"Revoked {count} grant(s).", messages.SUCCESS)
