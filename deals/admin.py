from django.contrib import admin, messages

from deals import services
from deals.models import Account, ApiKey, Deal, DealFinancials, DealProperty, IdempotencyRecord, Membership


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]
    readonly_fields = ["created_at"]


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    readonly_fields = ["created_at"]
    inlines = [MembershipInline]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are created with `manage.py create_api_key` (the raw key is shown once there)."""

    list_display = ["name", "prefix", "user", "account", "created_at", "expires_at", "revoked_at", "last_used_at"]
    list_filter = ["account"]
    search_fields = ["name", "prefix", "user__username"]
    readonly_fields = ["prefix", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description="Revoke selected keys")
    def revoke(self, request, queryset):
        for key in queryset:
            services.api_key_revoke(key=key)
        self.message_user(request, f"Revoked {queryset.count()} key(s).", messages.SUCCESS)


class DealPropertyInline(admin.StackedInline):
    model = DealProperty
    extra = 0
    readonly_fields = ["created_at", "updated_at"]


class DealFinancialsInline(admin.StackedInline):
    model = DealFinancials
    extra = 0
    readonly_fields = ["updated_at", "ltv", "dscr"]


@admin.register(Deal)
class DealAdmin(admin.ModelAdmin):
    list_display = ["id", "title", "account", "loan_amount", "loan_type", "transaction_type", "business_plan",
                    "archived", "updated_at"]
    list_filter = ["loan_type", "transaction_type", "business_plan", "archived", "account"]
    search_fields = ["title", "description", "properties__name", "properties__city"]
    readonly_fields = ["created_at", "updated_at", "archived_at", "version"]
    list_select_related = ["account"]
    inlines = [DealPropertyInline, DealFinancialsInline]
    date_hierarchy = "created_at"


@admin.register(DealProperty)
class DealPropertyAdmin(admin.ModelAdmin):
    list_display = ["name", "deal", "city", "state", "asset_type", "units"]
    list_filter = ["state", "asset_type"]
    search_fields = ["name", "address", "city", "deal__title"]
    readonly_fields = ["created_at", "updated_at"]
    list_select_related = ["deal"]


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(admin.ModelAdmin):
    list_display = ["key", "user", "method", "path", "status_code", "created_at"]
    search_fields = ["key"]
    readonly_fields = [f.name for f in IdempotencyRecord._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False
from deals import placement_admin  # noqa: E402, F401  (registers placements, term sheets, base rates)
