from django import forms
from django.contrib import admin, messages

from deals import services
from deals.models import Account, ApiKey, Deal, DealFinancials, DealProperty, IdempotencyRecord, Membership
from lev.scopes import SCOPES, as_text


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


class ApiKeyAdminForm(forms.ModelForm):
    """A key's scopes as one checkbox each (lev.scopes); stored space-separated."""

    scopes = forms.MultipleChoiceField(choices=list(SCOPES.items()), widget=forms.CheckboxSelectMultiple,
                                       help_text="What the key may do. At least one.")

    class Meta:
        model = ApiKey
        fields = ["user", "account", "name", "scopes", "expires_at"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.initial["scopes"] = sorted(self.instance.scope_set)

    def clean_scopes(self) -> str:
        return as_text(self.cleaned_data["scopes"])


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are created with `manage.py create_api_key` (the raw key is shown once there)."""

    form = ApiKeyAdminForm
    list_display = ["name", "prefix", "user", "account", "scopes", "created_at", "expires_at", "revoked_at",
                    "last_used_at"]
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
