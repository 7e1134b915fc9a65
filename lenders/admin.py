from django.contrib import admin
from django.db import models

from lenders.models import AssetType, Lender, LenderActivity, LenderProgram, LenderSearch


class LenderProgramInline(admin.StackedInline):
    model = LenderProgram
    extra = 0
    readonly_fields = ["created_at", "updated_at"]


class LenderTypeFilter(admin.SimpleListFilter):
    title = "lender type"
    parameter_name = "lender_type"

    def lookups(self, request, model_admin):
        from lev.enums import LENDER_TYPES, choices

        return choices(LENDER_TYPES)

    def queryset(self, request, queryset):
        from lev.enums import LENDER_TYPES, mask_of

        if self.value():
            return queryset.filter(lender_type_mask__anybit=mask_of([self.value()], LENDER_TYPES))
        return queryset


@admin.register(Lender)
class LenderAdmin(admin.ModelAdmin):
    list_display = ["name", "city", "state", "category", "lender_types", "updated_at"]
    list_filter = [LenderTypeFilter, "state", "category"]
    search_fields = ["name", "city", "about"]
    readonly_fields = ["created_at", "updated_at"]
    inlines = [LenderProgramInline]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}


@admin.register(LenderProgram)
class LenderProgramAdmin(admin.ModelAdmin):
    list_display = ["title", "lender", "status", "min_loan_amount", "max_loan_amount", "max_ltv", "min_dscr"]
    list_filter = ["status", "capital_source_type"]
    search_fields = ["title", "lender__name"]
    readonly_fields = ["created_at", "updated_at"]
    list_select_related = ["lender"]
    autocomplete_fields = ["lender"]


@admin.register(AssetType)
class AssetTypeAdmin(admin.ModelAdmin):
    list_display = ["slug", "name"]
    search_fields = ["slug", "name"]


@admin.register(LenderActivity)
class LenderActivityAdmin(admin.ModelAdmin):
    list_display = ["lender", "state", "quotes_90d", "closings_90d", "avg_response_hours", "score", "updated_at"]
    list_filter = ["state"]
    search_fields = ["lender__name"]
    readonly_fields = ["updated_at"]
    list_select_related = ["lender"]


@admin.register(LenderSearch)
class LenderSearchAdmin(admin.ModelAdmin):
    """Searches are records of ranking jobs: made by the API, changed only by their jobs."""

    list_display = ["id", "deal", "deal_version", "status", "progress", "total_matches", "attempts", "error_code",
                    "created_at", "finished_at"]
    list_filter = ["status", "error_code"]
    search_fields = ["deal__title"]
    list_select_related = ["deal"]
    readonly_fields = ["account", "deal", "deal_version", "status", "progress", "total_candidates", "total_matches",
                       "attempts", "error_code", "error_message", "criteria", "created_by", "created_at",
                       "queued_at", "started_at", "heartbeat_at", "finished_at"]
    exclude = ["run_token"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
