"""Admin of the lender directory (enum lists as checkboxes, coverage in words) and of lender
searches (each search's page shows its ranked lenders, a page at a time)."""

from __future__ import annotations

from decimal import Decimal

from django import forms
from django.contrib import admin
from django.db.models import Count, Max, Min, Prefetch, Q
from django.utils.html import format_html

from lenders.models import AssetType, Lender, LenderActivity, LenderProgram
from lenders.rates import admin as rates_admin  # noqa: F401  (registers market rates)
from lev import formatting, limits
from lev.accounts.admin_bases import ADMIN_CSS, GlobalAdmin
from lev.admin_forms import EnumListField, money_field, multiple_field, percent_field
from lev.admin_lists import change_url, two_lines
from lev.enums import ASSET_TYPES, LENDER_TYPES, LOAN_TYPES, POSITIONS, RECOURSE_TYPES, US_STATES, mask_of

# "tbd" is what a deal says before it knows its loan type; no program offers it.
PROGRAM_LOAN_TYPES = tuple(t for t in LOAN_TYPES if t != "tbd")


# --- lender directory -----------------------------------------------------------------------------
class LenderProgramForm(forms.ModelForm):
    """Programs' enum lists as checkboxes; the model's save() keeps the bit masks the ranking
    filters on in step with them."""

    loan_types = EnumListField(PROGRAM_LOAN_TYPES, label="Loan types")
    positions = EnumListField(POSITIONS, label="Positions")
    recourse_types = EnumListField(RECOURSE_TYPES, label="Recourse")
    asset_types = EnumListField(ASSET_TYPES, label="Asset types")
    sponsor_states = EnumListField(
        US_STATES, compact=True, label="Sponsor states",
        help_text="The states this program lends in. Leave every box unchecked for a nationwide program.",
    )
    min_loan_amount = money_field(label="Min loan")
    max_loan_amount = money_field(label="Max loan")
    max_ltv = percent_field(label="Max LTV", max_value=Decimal(limits.LTV_PERCENT_MAX),
                            help_text="Loan-to-value, percent.", fraction_floor=limits.LTV_PERCENT_FLOOR)
    min_dscr = multiple_field(label="Min DSCR", max_value=Decimal("99.99"), help_text="Debt service coverage.")

    class Meta:
        model = LenderProgram
        fields = ["title", "status", "capital_source_type", "loan_types", "positions", "recourse_types",
                  "min_loan_amount", "max_loan_amount", "max_ltv", "min_dscr", "asset_types", "sponsor_states"]

    def clean(self):
        data = super().clean()
        low, high = data.get("min_loan_amount"), data.get("max_loan_amount")
        if low is not None and high is not None and low > high:
            self.add_error("max_loan_amount", "Must be at least the min loan.")
        if data.get("status") == LenderProgram.Status.ACTIVE and data.get("loan_types") == []:
            self.add_error("loan_types", "An active program offers at least one loan type.")
        return data


PROGRAM_HEAD = ["title", "status", "capital_source_type"]
PROGRAM_FIELDSETS = [
    ("What it lends", {"fields": ["loan_types", "positions", "recourse_types",
                                  ("min_loan_amount", "max_loan_amount"), ("max_ltv", "min_dscr")]}),
    ("Where and on what", {"fields": ["asset_types", "sponsor_states", "coverage"]}),
]


class ProgramCoverage:
    @admin.display(description="Coverage")
    def coverage(self, program: LenderProgram) -> str:
        return formatting.coverage(program.sponsor_states)


class LenderProgramInline(ProgramCoverage, admin.StackedInline):
    model = LenderProgram
    form = LenderProgramForm
    extra = 0
    fieldsets = [(None, {"fields": PROGRAM_HEAD}), *PROGRAM_FIELDSETS]
    readonly_fields = ["coverage"]


class LenderForm(forms.ModelForm):
    website = forms.URLField(required=False, max_length=200, assume_scheme="https")
    lender_types = EnumListField(LENDER_TYPES, label="Lender types")

    class Meta:
        model = Lender
        fields = ["name", "website", "city", "state", "category", "lender_types", "about"]
        widgets = {"about": forms.Textarea(attrs={"rows": 3})}


class LenderTypeFilter(admin.SimpleListFilter):
    title = "lender type"
    parameter_name = "lender_type"

    def lookups(self, request, model_admin):
        return formatting.label_choices(LENDER_TYPES)

    def queryset(self, request, queryset):
        if self.value() in LENDER_TYPES:
            return queryset.filter(lender_type_mask__anybit=mask_of([self.value()], LENDER_TYPES))
        return queryset


@admin.register(Lender)
class LenderAdmin(GlobalAdmin):
    """The lender directory. Global (not tenant-scoped): every account ranks the same lenders."""

    form = LenderForm
    # What a deal team compares across lenders (of their active programs), in a laptop's width.
    list_display = ["lender_cell", "types", "loan_sizes", "asset_types", "max_leverage", "active_programs"]
    list_display_links = None  # the first cell links to the lender
    list_filter = [LenderTypeFilter, "state", "category"]
    search_fields = ["name", "city", "about"]
    readonly_fields = ["created_at", "updated_at"]
    inlines = [LenderProgramInline]
    list_per_page = 50
    ordering = ["name", "id"]

    class Media:
        css = ADMIN_CSS

    def get_queryset(self, request):
        """Active programs' figures as aggregates and their asset types in one prefetch: a page of
        the list reads in the same few queries whatever its length."""
        active = Q(programs__status=LenderProgram.Status.ACTIVE)
        asset_types = LenderProgram.objects.filter(status=LenderProgram.Status.ACTIVE).only(
            "id", "lender_id", "asset_types").order_by("id")
        return super().get_queryset(request).annotate(
            active_program_count=Count("programs", filter=active),
            smallest_loan=Min("programs__min_loan_amount", filter=active),
            largest_loan=Max("programs__max_loan_amount", filter=active),
            highest_ltv=Max("programs__max_ltv", filter=active),
        ).prefetch_related(Prefetch("programs", queryset=asset_types, to_attr="active_programs_assets"))

    @admin.display(description="Lender / HQ", ordering="name")
    def lender_cell(self, lender: Lender) -> str:
        """The name (linking to the lender) over where it is headquartered."""
        hq = ", ".join(part for part in (lender.city, lender.state) if part)
        return two_lines(lender.name, hq, change_url(lender))

    @admin.display(description="Type")
    def types(self, lender: Lender) -> str:
        return formatting.labels(lender.lender_types, LENDER_TYPES)

    @admin.display(description="Loan size", ordering="largest_loan")
    def loan_sizes(self, lender: Lender) -> str:
        return format_html('<span class="lev-nowrap">{}</span>',
                           formatting.money_range(lender.smallest_loan, lender.largest_loan))

    @admin.display(description="Asset types")
    def asset_types(self, lender: Lender) -> str:
        kinds = {kind for program in lender.active_programs_assets for kind in program.asset_types or ()}
        if len(kinds) > limits.LENDER_LIST_ASSET_TYPES_SHOWN:
            shown = sorted(kinds, key=lambda v: ASSET_TYPES.index(v) if v in ASSET_TYPES else len(ASSET_TYPES))
            extra = len(shown) - limits.LENDER_LIST_ASSET_TYPES_SHOWN
            return f"{formatting.labels(shown[:limits.LENDER_LIST_ASSET_TYPES_SHOWN])} +{extra} more"
        return formatting.labels(kinds, ASSET_TYPES)

    @admin.display(description="Max LTV", ordering="highest_ltv")
    def max_leverage(self, lender: Lender) -> str:
        return formatting.percent(lender.highest_ltv)

    @admin.display(description="Programs", ordering="active_program_count")
    def active_programs(self, lender: Lender) -> int:
        return lender.active_program_count


@admin.register(LenderProgram)
class LenderProgramAdmin(ProgramCoverage, GlobalAdmin):
    """Lenders' programs: part of the directory, global (not tenant-scoped)."""

    form = LenderProgramForm
    fieldsets = [(None, {"fields": ["lender", *PROGRAM_HEAD]}), *PROGRAM_FIELDSETS,
                 ("Record", {"classes": ["collapse"], "fields": ["created_at", "updated_at"]})]
    # A laptop's width: the program over its lender, then what it lends and where.
    list_display = ["program_cell", "status", "loan_types_display", "loan_range", "ltv", "dscr", "coverage"]
    list_display_links = None  # the first cell links to the program
    list_filter = ["status", "capital_source_type"]
    search_fields = ["title", "lender__name"]
    readonly_fields = ["coverage", "created_at", "updated_at"]
    list_select_related = ["lender"]
    autocomplete_fields = ["lender"]

    class Media:
        css = ADMIN_CSS

    @admin.display(description="Program / lender", ordering="title")
    def program_cell(self, program: LenderProgram) -> str:
        return two_lines(program.title, program.lender.name, change_url(program))

    @admin.display(description="Loan types")
    def loan_types_display(self, program: LenderProgram) -> str:
        return formatting.labels(program.loan_types, LOAN_TYPES)

    @admin.display(description="Loan size", ordering="max_loan_amount")
    def loan_range(self, program: LenderProgram) -> str:
        return formatting.money_range(program.min_loan_amount, program.max_loan_amount)

    @admin.display(description="Max LTV", ordering="max_ltv")
    def ltv(self, program: LenderProgram) -> str:
        return formatting.percent(program.max_ltv)

    @admin.display(description="Min DSCR", ordering="min_dscr")
    def dscr(self, program: LenderProgram) -> str:
        return formatting.multiple(program.min_dscr)


@admin.register(AssetType)
class AssetTypeAdmin(GlobalAdmin):
    """The asset-type vocabulary: global (not tenant-scoped)."""

    list_display = ["slug", "name"]
    search_fields = ["slug", "name"]


@admin.register(LenderActivity)
class LenderActivityAdmin(GlobalAdmin):
    """Lender activity signals per market, as directory data: global (not tenant-scoped) — counts
    per lender and state, naming no account, deal or placement."""

    list_display = ["lender_link", "state", "quotes", "closings", "response", "activity_score"]
    list_display_links = None  # the first cell links to the row
    list_filter = ["state"]
    search_fields = ["lender__name"]
    readonly_fields = ["updated_at"]
    list_select_related = ["lender"]

    class Media:
        css = ADMIN_CSS

    @admin.display(description="Lender", ordering="lender__name")
    def lender_link(self, row: LenderActivity) -> str:
        return two_lines(row.lender.name, "", change_url(row))

    @admin.display(description="Quotes (90 d)", ordering="quotes_90d")
    def quotes(self, row: LenderActivity) -> int:
        return row.quotes_90d

    @admin.display(description="Closings (90 d)", ordering="closings_90d")
    def closings(self, row: LenderActivity) -> int:
        return row.closings_90d

    @admin.display(description="Avg response", ordering="avg_response_hours")
    def response(self, row: LenderActivity) -> str:
        return formatting.EMPTY if row.avg_response_hours is None else f"{row.avg_response_hours:,.0f} h"

    @admin.display(description="Score", ordering="score")
    def activity_score(self, row: LenderActivity) -> str:
        return formatting.EMPTY if row.score is None else f"{row.score:.2f}"
