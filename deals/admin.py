"""The deal team's admin: deals with their properties and financials (money as money, LTV, DSCR,
NOI), their lender searches and ranked lenders, and "Find lenders" — through the same services the
API uses, so the admin keeps every rule the API keeps (versions, archived deals, readiness)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.core.validators import RegexValidator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme

from deals import selectors, services
from deals.companies import admin as companies_admin  # noqa: F401  (registers companies, contacts; lender contacts)
from deals.history import admin_export
from deals.history import admin_views as history_admin_views
from deals.models import Deal, DealFinancials, DealProperty, Placement, TermSheet
from deals.notes.admin import DealNoteInline  # (registers notes; their inlines on the company and contact pages)
from deals.notes.timeline import deal_timeline, deal_timeline_latest
from deals.pipeline import services as pipeline_services
from deals.pipeline.admin import DealStatusFilter, StageChangeInline, StageFilter
from deals.pipeline.selectors import deal_amount
from deals.placements import admin as placements_admin  # noqa: F401  (registers placements, term sheets)
from deals.placements import selectors as placement_selectors
from deals.placements import services as placement_services
from deals.placements.comparison import term_sheet_comparison
from deals.placements.workflow import OPEN_STATUSES
from deals.searches import admin as searches_admin  # noqa: F401  (registers lender searches)
from deals.searches import services as lender_services
from deals.searches.admin_results import ranked_page
from deals.searches.models import LenderSearch
from deals.searches.ranking import missing_for_search
from deals.searches.selectors import (
    QueueStatus,
    deals_with_latest_search,
    lender_search_latest_completed,
    lender_search_queue_status,
    lender_searches_of_deal,
)
from deals.searches.serializers import LenderSearchStartSerializer
from lev import formatting, limits
from lev.accounts.admin_bases import (
    ADMIN_CSS,
    AccountScopedAdmin,
    staff_account_ids,
)
from lev.accounts.selectors import check_staff_can_write
from lev.admin_forms import money_field, percent_field
from lev.admin_lists import DefaultScopeMixin, WordsChoicesFilter, change_url, two_lines
from lev.enums import ASSET_TYPES, US_STATES
from lev.errors import UPSTREAM_MESSAGE, ApplicationError, BusinessRuleViolation
from lev.outages import is_dependency_outage, report_outage


# --- forms: the API's bounds (lev.limits), money typed and shown as money --------------------------
class DealForm(forms.ModelForm):
    loan_amount = money_field(label="Loan amount")

    class Meta:
        model = Deal
        fields = ["account", "title", "loan_amount", "loan_type", "transaction_type", "business_plan",
                  "estimated_close_date", "sponsor", "borrower", "description", "stage", "owner"]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}
        help_texts = {"stage": "A new deal starts in its account's first stage when left empty; a change is "
                               "recorded in the stage history.",
                      "owner": "A member of the deal's account; empty on a new deal: you."}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "stage" in self.fields:
            self.fields["stage"].required = False
        for name in ("loan_type", "transaction_type"):  # "To be decided", not the slug's "Tbd"
            if name in self.fields:
                self.fields[name].choices = [(v, formatting.label(v) if v else t) for v, t in self.fields[name].choices]

    def clean(self):
        data = super().clean()
        account = data.get("account") or (self.instance.account if self.instance.account_id else None)
        stage, owner = data.get("stage"), data.get("owner")
        if account is not None and stage is not None and stage.account_id != account.pk:
            self.add_error("stage", "Choose a stage of the deal's account.")
        if account is not None and owner is not None and not account.memberships.filter(user=owner).exists():
            self.add_error("owner", "Choose a member of the deal's account.")
        for name in ("sponsor", "borrower"):
            company = data.get(name)
            if company is not None and account is not None and company.account_id != account.pk:
                self.add_error(name, "Choose a company of the deal's own account.")
        return data


class DealPropertyForm(forms.ModelForm):
    zip = forms.CharField(label="ZIP", required=False, max_length=limits.ZIP_MAX, validators=[
        RegexValidator(limits.ZIP_PATTERN, "Enter a 5-digit ZIP code (or ZIP+4).")])
    units = forms.IntegerField(required=False, min_value=0, max_value=limits.UNITS_MAX)
    square_footage = forms.IntegerField(required=False, min_value=0, max_value=limits.SQUARE_FOOTAGE_MAX)
    year_built = forms.IntegerField(required=False, min_value=limits.YEAR_BUILT_MIN, max_value=limits.YEAR_BUILT_MAX)

    class Meta:
        model = DealProperty
        fields = services.PROPERTY_FIELDS


class DealFinancialsForm(forms.ModelForm):
    purchase_price = money_field(label="Purchase price")
    estimated_value = money_field(label="Estimated value")
    in_place_noi = money_field(label="In-place NOI", positive=False, help_text="Net operating income per year.")
    stabilized_noi = money_field(label="Stabilized NOI", positive=False, help_text="Net operating income per year.")
    existing_debt = money_field(label="Existing debt", positive=False)
    cash_out = money_field(label="Cash out", positive=False)
    interest_rate = percent_field(label="Interest rate", max_value=limits.INTEREST_RATE_MAX,
                                  **limits.INTEREST_RATE_COLUMN, help_text="Annual, for DSCR.",
                                  fraction_floor=limits.RATE_PERCENT_FLOOR)
    amortization_years = forms.IntegerField(label="Amortization (years)", min_value=limits.AMORTIZATION_YEARS_MIN,
                                            max_value=limits.AMORTIZATION_YEARS_MAX,
                                            initial=limits.AMORTIZATION_YEARS_DEFAULT)
    interest_only_months = forms.IntegerField(label="Interest-only (months)", min_value=0,
                                              max_value=limits.INTEREST_ONLY_MONTHS_MAX, initial=0, required=False,
                                              help_text="At the start of the loan; empty or 0: none.")

    def clean_interest_only_months(self) -> int:
        return self.cleaned_data.get("interest_only_months") or 0

    class Meta:
        model = DealFinancials
        fields = services.FINANCIAL_FIELDS


# --- inlines: saved through the deal services (see DealAdmin.save_formset) ------------------------
class DealPropertyInline(admin.StackedInline):
    model = DealProperty
    form = DealPropertyForm
    extra = 0
    fieldsets = [(None, {"fields": ["name", "address", ("city", "state", "zip"), "asset_type",
                                    ("units", "square_footage", "year_built")]})]


class DealFinancialsInline(admin.StackedInline):
    model = DealFinancials
    form = DealFinancialsForm
    extra = 0
    can_delete = False
    fieldsets = [(None, {"fields": [("purchase_price", "estimated_value"), ("in_place_noi", "stabilized_noi"),
                                    ("existing_debt", "cash_out"), ("interest_rate", "amortization_years"),
                                    "interest_only_months", ("ltv", "debt_yield"),
                                    ("dscr", "dscr_interest_only", "dscr_amortizing")]})]
    readonly_fields = ["ltv", "debt_yield", "dscr", "dscr_interest_only", "dscr_amortizing"]

    @admin.display(description="LTV")
    def ltv(self, financials: DealFinancials) -> str:
        return formatting.percent(financials.ltv) if financials.pk else formatting.EMPTY

    @admin.display(description="Debt yield")
    def debt_yield(self, financials: DealFinancials) -> str:
        return formatting.percent(financials.debt_yield) if financials.pk else formatting.EMPTY

    @admin.display(description="DSCR (underwritten)")
    def dscr(self, financials: DealFinancials) -> str:
        if not financials.pk or financials.dscr is None:
            return formatting.EMPTY
        return f"{formatting.multiple(financials.dscr)} ({financials.dscr_basis.replace('_', '-')})"

    @admin.display(description="DSCR interest-only")
    def dscr_interest_only(self, financials: DealFinancials) -> str:
        return formatting.multiple(financials.dscr_interest_only) if financials.pk else formatting.EMPTY

    @admin.display(description="DSCR amortizing")
    def dscr_amortizing(self, financials: DealFinancials) -> str:
        return formatting.multiple(financials.dscr_amortizing) if financials.pk else formatting.EMPTY


# --- list filters -------------------------------------------------------------------------------------
class ArchivedFilter(DealStatusFilter):
    """Active deals (not archived, in an open stage) unless another status is asked for; with a stage
    chosen and no status, that stage's deals that are not archived (its pipeline column)."""

    title = "status"
    parameter_name = "archived"  # the list's links keep their name: ?archived=dead
    deal_path = ""
    stage_params = (StageFilter.parameter_name, StageFilter.by_id)
    choice_labels = [("active", "Active"), ("closed", "Closed"), ("dead", "Dead"), ("archived", "Archived"),
                     ("all", "All")]


class PropertyFilter(admin.SimpleListFilter):
    """Deals with a property of the chosen value (listing only values the user's deals have)."""

    field: str
    universe: tuple[str, ...]

    def lookups(self, request, model_admin):
        properties = DealProperty.objects.exclude(**{self.field: ""})
        account_ids = staff_account_ids(request)
        if account_ids is not None:
            properties = properties.filter(deal__account_id__in=account_ids)
        present = set(properties.values_list(self.field, flat=True).distinct())
        return [(v, formatting.label(v)) for v in self.universe if v in present]

    def queryset(self, request, queryset):
        if self.value() in self.universe:
            # A subquery, so a deal with two matching properties is listed once.
            with_it = DealProperty.objects.filter(**{self.field: self.value()}).values("deal_id")
            return queryset.filter(pk__in=with_it)
        return queryset


class PropertyStateFilter(PropertyFilter):
    title = "property state"
    parameter_name = "property_state"
    field = "state"
    universe = US_STATES


class AssetTypeFilter(PropertyFilter):
    title = "asset type"
    parameter_name = "asset_type"
    field = "asset_type"
    universe = ASSET_TYPES


class LatestSearchFilter(admin.SimpleListFilter):
    title = "latest lender search"
    parameter_name = "latest_search"

    def lookups(self, request, model_admin):
        return [*LenderSearch.Status.choices, ("none", "None yet")]

    def queryset(self, request, queryset):
        if self.value() == "none":
            return queryset.filter(latest_search_status__isnull=True)
        if self.value() in LenderSearch.Status.values:
            return queryset.filter(latest_search_status=self.value())
        return queryset


# --- deals ------------------------------------------------------------------------------------------
def search_status_badge(status: str | None) -> str:
    if not status:
        return formatting.EMPTY
    return format_html('<span class="lev-badge lev-badge--{}">{}</span>', status, LenderSearch.Status(status).label)


def _company_ids(cleaned: dict[str, Any], names) -> dict[str, int | None]:
    """The deal's sponsor and borrower as the services take them (ids, checked against the deal's account:
    another account's company is refused there, never saved)."""
    return {f"{name}_id": cleaned[name].pk if cleaned.get(name) else None for name in names if name in cleaned}


@admin.register(Deal)
class DealAdmin(DefaultScopeMixin, AccountScopedAdmin):
    form = DealForm
    # What a deal team reads of its deals, in a laptop's width (the account only for whoever sees several).
    list_display = ["deal_cell", "stage", "owner", "property_cell", "loan", "latest_search"]
    list_display_links = None  # the first cell links to the deal
    # The "(N total)" counts active deals, never the archive the default filter hides.
    default_scope_filter = ArchivedFilter
    list_filter = [ArchivedFilter, StageFilter, PropertyStateFilter, AssetTypeFilter, LatestSearchFilter,
                   ("loan_type", WordsChoicesFilter), ("transaction_type", WordsChoicesFilter), "business_plan",
                   "account"]
    search_fields = ["title", "description", "properties__name", "properties__city"]
    list_select_related = ["account", "stage", "owner"]
    list_per_page = 50
    date_hierarchy = "created_at"
    fieldsets = [
        (None, {"fields": ["account", "title", "loan_amount", ("loan_type", "transaction_type", "business_plan"),
                           "estimated_close_date", ("sponsor", "borrower"), "description"]}),
        ("Pipeline", {"fields": [("stage", "owner")]}),
        ("Record", {"classes": ["collapse"],
                    "fields": ["archived", "archived_at", "created_by", "created_at", "updated_at", "version"]}),
    ]
    readonly_fields = ["archived", "archived_at", "created_by", "created_at", "updated_at", "version"]
    inlines = [DealPropertyInline, DealFinancialsInline, DealNoteInline, StageChangeInline]
    actions = ["find_lenders", "archive", "export_csv", "export_xlsx"]

    class Media:
        css = ADMIN_CSS

    # -- list
    def get_queryset(self, request):
        deals = selectors.deals_with_property_summary(super().get_queryset(request))
        # The amount the pipeline counts (the winner's once chosen), so a stage's row on the home page
        # and its list add up.
        return deals_with_latest_search(deals).annotate(counted_amount=deal_amount())

    def get_list_display(self, request):
        account_ids = staff_account_ids(request)
        if account_ids is None or len(account_ids) > 1:
            return ["deal_with_account", *self.list_display[1:]]
        return self.list_display

    @admin.display(description="Deal", ordering="title")
    def deal_cell(self, deal: Deal) -> str:
        return two_lines(deal.title, "", change_url(deal))

    @admin.display(description="Deal / account", ordering="title")
    def deal_with_account(self, deal: Deal) -> str:
        return two_lines(deal.title, deal.account.name, change_url(deal))

    @admin.display(description="Property", ordering="units_total")
    def property_cell(self, deal: Deal) -> str:
        """Asset types and states over the units."""
        kinds = formatting.labels({p.asset_type for p in deal.property_summary if p.asset_type}, ASSET_TYPES)
        states = ", ".join(sorted({p.state for p in deal.property_summary if p.state}))
        head = " · ".join(part for part in (kinds if kinds != formatting.EMPTY else "", states) if part)
        units = "" if not deal.units_total else f"{deal.units_total:,} unit{'' if deal.units_total == 1 else 's'}"
        return two_lines(head or formatting.EMPTY, units)

    @admin.display(description="Loan", ordering="counted_amount")
    def loan(self, deal: Deal) -> str:
        """The amount the pipeline counts (the winning quote's once chosen, the ask noted beside it when
        they differ) over its type; the exact figure in a <data> element's value."""
        counted = deal.counted_amount
        exact = "" if counted is None else f"{Decimal(str(counted)).normalize():f}"  # 18500000, on both databases
        amount = format_html('<data value="{}">{}</data>', exact,
                             formatting.money_short(counted))
        kind = formatting.label(deal.loan_type)
        if counted is not None and deal.loan_amount is not None and counted != deal.loan_amount:
            kind = f"{kind} · won, asked {formatting.money_short(deal.loan_amount)}"
        return two_lines(amount, kind)

    @admin.display(description="Latest search", ordering="latest_search_matches")
    def latest_search(self, deal: Deal) -> str:
        """Its status and match count, linking to the search (one column, so the list fits a screen)."""
        if deal.latest_search_id is None:
            return formatting.EMPTY
        url = reverse("admin:deals_lendersearch_change", args=[deal.latest_search_id])
        matches = deal.latest_search_matches
        return format_html('{} <a href="{}">{} match{}</a>', search_status_badge(deal.latest_search_status), url,
                           f"{matches:,}", "" if matches == 1 else "es")

    def get_fieldsets(self, request, obj=None):
        """The deal's version (what a lender search was ranked on) is a worker's internal: a
        superuser's collapsed "Diagnostics", never a deal team's."""
        fieldsets = [(name, {**options, "fields": [f for f in options["fields"] if f != "version"]})
                     for name, options in super().get_fieldsets(request, obj)]
        if request.user.is_superuser and obj is not None:
            fieldsets.append(("Diagnostics", {"classes": ["collapse"], "fields": ["version"]}))
        return fieldsets

    # -- rules the API keeps: an archived deal is read-only, the account is chosen once
    def has_change_permission(self, request, obj=None) -> bool:
        return super().has_change_permission(request, obj) and not (obj is not None and obj.archived)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "account"] if obj is not None else fields

    # -- saving through the services, so every change bumps the deal's version (a lender search of
    #    the old description is then never reused) and archived deals stay unchanged
    def get_inlines(self, request, obj):
        # Only a saved deal has a stage history (a new deal's page shows none and posts no formset for it).
        inlines = super().get_inlines(request, obj)
        return inlines if obj is not None else [i for i in inlines if i is not StageChangeInline]

    def get_inline_instances(self, request, obj=None):
        """On a saved deal's page its properties, financials and stage history are folded (<details>, one
        click open; open by themselves when they hold an error): the summary above shows their figures and
        the timeline their moves, so the page opens on what a broker reads first (issue 39: 5,849 px)."""
        instances = super().get_inline_instances(request, obj)
        if obj is not None:
            for inline in instances:
                if isinstance(inline, DealPropertyInline | DealFinancialsInline | StageChangeInline):
                    inline.classes = [*(inline.classes or []), "collapse"]
        return instances

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "owner":  # members of the staff user's accounts only, never everyone's users
            users = db_field.related_model._default_manager.order_by("username")
            account_ids = staff_account_ids(request)
            if account_ids is not None:
                users = users.filter(memberships__account_id__in=account_ids).distinct()
            kwargs["queryset"] = users
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        stage, owner = form.cleaned_data.get("stage"), form.cleaned_data.get("owner")
        if not change:
            data = {name: form.cleaned_data[name] for name in services.DEAL_FIELDS if name in form.cleaned_data}
            data.update(_company_ids(form.cleaned_data, services.COMPANY_FIELDS))
            if owner is not None:
                data["owner_id"] = owner.pk
            created = services.deal_create(account=form.cleaned_data["account"], user=request.user, data=data)
            if stage is not None and stage.pk != created.stage_id:
                pipeline_services.deal_move_stage(deal=created, stage=stage, user=request.user,
                                                  reason="Set when the deal was added in the admin.")
            # The admin goes on with its own instance (inlines, log, redirect): make it the saved row.
            obj.pk = created.pk
            obj.refresh_from_db()
            obj._state.adding = False  # refresh_from_db leaves it set
            return
        changed = {name: form.cleaned_data[name] for name in form.changed_data if name in services.DEAL_FIELDS}
        changed.update(_company_ids(form.cleaned_data, [n for n in services.COMPANY_FIELDS if n in form.changed_data]))
        if "owner" in form.changed_data:
            changed["owner_id"] = owner.pk if owner is not None else None
        if changed:
            services.deal_update(deal=obj, data=changed)
        if "stage" in form.changed_data and stage is not None:
            pipeline_services.deal_move_stage(deal=obj, stage=stage, user=request.user, reason="Moved in the admin.")

    def save_formset(self, request, form, formset, change):
        deal = form.instance
        if formset.model is DealProperty:
            formset.save(commit=False)
            for prop in formset.deleted_objects:
                services.deal_property_delete(prop=prop)
            for prop in formset.new_objects:
                fields = {name: getattr(prop, name) for name in services.PROPERTY_FIELDS}
                services.deal_property_create(deal=deal, data=fields)
            for prop, changed in formset.changed_objects:
                services.deal_property_update(prop=prop, data={name: getattr(prop, name) for name in changed})
        elif formset.model is DealFinancials:
            formset.save(commit=False)  # no delete (can_delete is off)
            for financials in formset.new_objects:
                fields = {name: getattr(financials, name) for name in services.FINANCIAL_FIELDS}
                services.deal_financials_update(deal=deal, data=fields)
            for financials, changed in formset.changed_objects:
                services.deal_financials_update(deal=deal, data={name: getattr(financials, name) for name in changed})
        else:  # inlines added later (placements, term sheets) save as Django does
            super().save_formset(request, form, formset, change)

    # -- actions
    @admin.action(description="Find lenders for the selected deals")
    def find_lenders(self, request: HttpRequest, queryset) -> None:
        deals = list(queryset.order_by("pk")[: limits.ADMIN_FIND_LENDERS_MAX_DEALS + 1])
        if len(deals) > limits.ADMIN_FIND_LENDERS_MAX_DEALS:
            self.message_user(request, f"Select at most {limits.ADMIN_FIND_LENDERS_MAX_DEALS} deals to find "
                                       "lenders for at once.", messages.ERROR)
            return
        if not self.has_change_permission(request):
            raise PermissionDenied
        for deal in deals:
            level, text = start_lender_search(request, deal)
            self.message_user(request, f"{deal.title}: {text}", level)

    @admin.action(description="Archive selected deals")
    def archive(self, request: HttpRequest, queryset) -> None:
        archived = 0
        for deal in queryset:
            if not deal.archived:
                services.deal_archive(deal=deal)
                archived += 1
        self.message_user(request, f"Archived {archived} deal(s).", messages.SUCCESS)

    @admin.action(description="Export selected deals (CSV)", permissions=["view"])
    def export_csv(self, request: HttpRequest, queryset) -> HttpResponse | None:
        return admin_export.export_selected(self, request, queryset, "csv")

    @admin.action(description="Export selected deals (XLSX)", permissions=["view"])
    def export_xlsx(self, request: HttpRequest, queryset) -> HttpResponse | None:
        return admin_export.export_selected(self, request, queryset, "xlsx")

    def changelist_view(self, request, extra_context=None):
        # The whole-account export, linked above the list (deals/templates/admin/deals/deal/change_list.html).
        return super().changelist_view(request, {**(extra_context or {}),
                                                 "history_exports": admin_export.export_links(request)})

    # -- the deal page: "Find lenders", its searches and its ranked lenders
    def get_urls(self):
        find = path("<path:object_id>/find-lenders/", self.admin_site.admin_view(self.find_lenders_view),
                    name="deals_deal_find_lenders")
        place = path("<path:object_id>/place/", self.admin_site.admin_view(self.place_view), name="deals_deal_place")
        winner = path("<path:object_id>/choose-winner/<int:term_sheet_id>/",
                      self.admin_site.admin_view(self.choose_winner_view), name="deals_deal_choose_winner")
        timeline = path("<path:object_id>/timeline/", self.admin_site.admin_view(self.timeline_view),
                        name="deals_deal_timeline")
        export = path("export-history/", self.admin_site.admin_view(
            lambda request: admin_export.account_export_view(self, request)), name="deals_deal_export_history")
        # "Import history" (deals/history/admin_views.py): importing a team's history writes deals.
        return [export, *history_admin_views.urls(self), find, place, winner, timeline, *super().get_urls()]

    def timeline_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The deal's whole timeline, newest first (the deal page shows the latest entries): for
        whoever may view the deal; another account's deal is the admin's "not found"."""
        deal = self.get_object(request, unquote(object_id))
        if deal is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_view_or_change_permission(request, deal):
            raise PermissionDenied
        entries = deal_timeline(deal=deal)[::-1]
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts, "title": f"Timeline of “{deal.title}”", "deal": deal, "timeline": entries,
            "back_url": reverse("admin:deals_deal_change", args=[deal.pk]) + "#timeline", "media": self.media,
        }
        return TemplateResponse(request, "admin/deals/deal/timeline.html", context)

    def _posted_deal(self, request: HttpRequest, object_id: str) -> Deal | HttpResponse:
        """The deal a button on its page posts to, or the answer instead: 405 for anything but POST,
        the admin's "not found" for a missing deal or another account's (the same answer)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        deal = self.get_object(request, unquote(object_id))
        if deal is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_change_permission(request):
            raise PermissionDenied
        return deal

    def find_lenders_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        deal = self._posted_deal(request, object_id)
        if not isinstance(deal, Deal):
            return deal
        level, text = start_lender_search(request, deal)
        self.message_user(request, text, level)
        return HttpResponseRedirect(reverse("admin:deals_deal_change", args=[deal.pk]) + "#lender-searches")

    def place_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """"Place with selected lenders": the ranked lenders ticked on the deal page or on one of
        its searches' pages (`search_id`), placed as drafts."""
        deal = self._posted_deal(request, object_id)
        if not isinstance(deal, Deal):
            return deal
        back = _local_path(request.POST.get("next", "")) or reverse("admin:deals_deal_change",
                                                                     args=[deal.pk]) + "#placements"
        lender_ids = sorted({i for i in map(_form_id, request.POST.getlist("lender_ids")) if i is not None})
        if not lender_ids:
            self.message_user(request, "Tick one or more ranked lenders to place the deal with.", messages.WARNING)
            return HttpResponseRedirect(back)
        if len(lender_ids) > limits.PLACEMENTS_PER_CREATE_MAX:
            self.message_user(request, f"Place the deal with at most {limits.PLACEMENTS_PER_CREATE_MAX} lenders "
                                       "at once.", messages.ERROR)
            return HttpResponseRedirect(back)
        search_id = request.POST.get("search_id", "")
        search = None
        if search_id:
            pk = _form_id(search_id)
            search = LenderSearch.objects.filter(deal=deal, pk=pk).first() if pk is not None else None
            if search is None:
                self.message_user(request, "That lender search is not one of this deal's.", messages.ERROR)
                return HttpResponseRedirect(back)
        for level, text in place_with_lenders(request, deal, lender_ids, search):
            self.message_user(request, text, level)
        return HttpResponseRedirect(back)

    def choose_winner_view(self, request: HttpRequest, object_id: str, term_sheet_id: int) -> HttpResponse:
        """Choose the winner from the deal page's comparison: GET asks to confirm (what happens, and
        that it cannot be undone), POST chooses it through the API's service and goes back to the
        deal with its answer. Another account's deal or term sheet, or a removed one: 404."""
        deal = self.get_object(request, unquote(object_id))
        term_sheet = None
        if deal is not None:
            term_sheet = (TermSheet.objects.filter(deal=deal, pk=term_sheet_id, deleted_at=None)
                          .select_related("placement__lender").first())
        if term_sheet is None:
            raise Http404("No such term sheet on this deal.")
        if not self.has_change_permission(request):  # an archived deal is refused by the service, in words
            raise PermissionDenied
        back = reverse("admin:deals_deal_change", args=[deal.pk]) + "#term-sheets"
        if request.method == "POST":
            def choose():
                check_staff_can_write(user=request.user, account_id=deal.account_id)
                return placement_services.term_sheet_select_winner(term_sheet=term_sheet, user=request.user)

            refused, choice = relay(f"choosing term sheet {term_sheet.pk} as deal {deal.pk}'s winner in the admin",
                                    choose)
            if refused:
                self.message_user(request, refused[1], refused[0])
            elif not choice.changed:
                self.message_user(request, f"{term_sheet.placement.lender.name}'s quote is already the winner.",
                                  messages.INFO)
            else:
                lost = len(choice.lost_placement_ids)
                self.message_user(request, f"{term_sheet.placement.lender.name}'s quote is the winner: its placement "
                                           f"is won, {lost} other placement{'s' if lost != 1 else ''} lost, and the "
                                           "deal moved to closing.", messages.SUCCESS)
            return HttpResponseRedirect(back)
        if request.method != "GET":
            return HttpResponseNotAllowed(["GET", "POST"])
        others = (Placement.objects.filter(deal=deal, status__in=OPEN_STATUSES).exclude(pk=term_sheet.placement_id)
                  .select_related("lender").order_by("id"))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts, "title": "Choose the winning quote", "deal": deal, "term_sheet": term_sheet,
            "lender_name": term_sheet.placement.lender.name, "others": list(others[:limits.ADMIN_WINNER_OTHERS_SHOWN]),
            "others_count": others.count(), "back_url": back, "media": self.media,
        }
        return TemplateResponse(request, "admin/deals/deal/choose_winner.html", context)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and obj.pk:
            context.update(deal_page_context(obj))
            context["lev_deal"]["can_choose"] = not obj.archived and _can_write(request.user, obj.account_id)
        return super().render_change_form(request, context, add, change, form_url, obj)


def _can_write(user, account_id: int) -> bool:
    try:
        check_staff_can_write(user=user, account_id=account_id)
    except ApplicationError:
        return False
    return True


def _local_path(url: str) -> str:
    """`url` if it is a path on this site ("/admin/…"), else "": never an absolute URL, not even
    one naming this host, nor a scheme-relative "//host/…" or "/\\host/…"."""
    if not url.startswith("/") or url.startswith(("//", "/\\")):
        return ""
    return url if url_has_allowed_host_and_scheme(url, allowed_hosts=set()) else ""


def _form_id(text: str) -> int | None:
    """A row id posted by an admin form: digits only, at most 9 of them, else None."""
    return int(text) if text.isdigit() and len(text) < 10 else None


def relay(description: str, call: Callable[[], Any]) -> tuple[tuple[int, str] | None, Any]:
    """Call a service for an admin page: (None, its result), or the message its refusal or a
    dependency outage gives a person ((level, text), None) — never a 500 for either."""
    try:
        return None, call()
    except BusinessRuleViolation as exc:
        return (messages.ERROR, exc.customer_message), None
    except ApplicationError as exc:
        return (messages.ERROR, exc.message), None
    except Exception as exc:
        if not is_dependency_outage(exc):
            raise
        report_outage(exc, description)
        return (messages.ERROR, UPSTREAM_MESSAGE), None


def start_lender_search(request: HttpRequest, deal: Deal) -> tuple[int, str]:
    """Start (or reuse) a search of the deal through the API's service; the message level and the
    text the API would answer (what is missing, reused, queued or not, done)."""

    def start():
        check_staff_can_write(user=request.user, account_id=deal.account_id)
        return lender_services.lender_search_start(deal=deal, user=request.user)

    refused, result = relay(f"starting a lender search of deal {deal.pk} in the admin", start)
    if refused:
        return refused
    started, created = result
    # Read back: where jobs run in-process the search has already finished by now.
    search = LenderSearch.objects.get(pk=started.pk)
    text = LenderSearchStartSerializer(search, context={"created": created}).data["message"]
    if search.status == LenderSearch.Status.COMPLETED:
        return messages.SUCCESS, text
    if search.status == LenderSearch.Status.FAILED:
        return messages.ERROR, text
    if lender_search_queue_status(search=search) != QueueStatus.QUEUED:
        return messages.WARNING, text
    return messages.INFO, text + " Reload this page to see the ranked lenders."


def place_with_lenders(request: HttpRequest, deal: Deal, lender_ids: list[int],
                       search: LenderSearch | None) -> list[tuple[int, str]]:
    """Place the deal with the chosen lenders through the service every door uses (drafts: the
    deal team sends each when it has contacted the lender); a message per outcome."""

    def create():
        check_staff_can_write(user=request.user, account_id=deal.account_id)
        return placement_services.placements_create(deal=deal, user=request.user, lender_ids=lender_ids,
                                                    search=search)

    refused, batch = relay(f"placing deal {deal.pk} with lenders in the admin", create)
    if refused:
        return [refused]
    outcomes = []
    if batch.created:
        names = ", ".join(p.lender.name for p in batch.created)
        outcomes.append((messages.SUCCESS, f"Placed with {len(batch.created)} lender"
                                           f"{'s' if len(batch.created) != 1 else ''} (drafts): {names}."))
    outcomes.extend((messages.WARNING, failure["message"]) for failure in batch.failed)
    return outcomes


def deal_page_context(deal: Deal) -> dict[str, Any]:
    """What the deal page shows above its form (template blocks in
    deals/templates/admin/deals/deal/change_form.html)."""
    properties = list(DealProperty.objects.filter(deal=deal).order_by("id"))
    financials = DealFinancials.objects.filter(deal=deal).first()
    if financials is not None:
        financials.deal = deal
    latest = lender_search_latest_completed(deal=deal)
    all_placements = placement_selectors.placement_list(deal=deal, filters=placement_selectors.PlacementFilters())
    placements = list(all_placements[: limits.ADMIN_DEAL_PLACEMENTS])
    comparison = term_sheet_comparison(deal=deal)
    # The best first (the winner first of all), bounded. The ranking reads the deal's live quotes (at
    # most TERM_SHEETS_PER_DEAL_MAX): "best first" compares all of them.
    quotes = comparison.quotes[: limits.ADMIN_DEAL_QUOTES]
    # One more than shown: whether older entries are on the whole timeline.
    timeline = deal_timeline_latest(deal=deal, n=limits.ADMIN_TIMELINE_ENTRIES + 1)
    ranked = None
    if latest is not None:
        ranked = ranked_page(latest, page=1, size=limits.ADMIN_TOP_MATCHES, chart_size=limits.ADMIN_TOP_MATCHES)
    return {
        "lev_deal": {
            "properties": properties,
            "states": formatting.labels(sorted({p.state for p in properties if p.state})),
            "asset_types": formatting.labels({p.asset_type for p in properties if p.asset_type}, ASSET_TYPES),
            "units": sum(p.units or 0 for p in properties),
            "financials": financials,
            "missing": missing_for_search(deal, properties),
            "searches": lender_searches_of_deal(deal=deal, limit=limits.ADMIN_DEAL_RECENT_SEARCHES),
            "ranked": ranked,
            "ranked_is_stale": latest is not None and latest.deal_version != deal.version,
            "find_lenders_url": reverse("admin:deals_deal_find_lenders", args=[deal.pk]),
            "place_url": reverse("admin:deals_deal_place", args=[deal.pk]),
            "placements": placements,
            "placement_count": all_placements.count(),  # always: as many queries for 3 placements as for 300
            "comparison": comparison,
            "quotes": quotes,
            "more_quotes": len(comparison.quotes) - len(quotes),
            "has_winner": any(q.winning for q in comparison.quotes),
            # The shown quotes' own notes (the lender's words), one query for all.
            "quote_notes": dict(TermSheet.objects.filter(pk__in=[q.term_sheet_id for q in quotes])
                                .exclude(notes="").values_list("id", "notes")),
            # Newest first, as a deal team reads what happened lately, read alone (not the whole timeline,
            # which is the timeline view's: admin:deals_deal_timeline, and the API's GET …/timeline/).
            "timeline": timeline[: limits.ADMIN_TIMELINE_ENTRIES],
            "older_entries": len(timeline) > limits.ADMIN_TIMELINE_ENTRIES,
            "timeline_url": reverse("admin:deals_deal_timeline", args=[deal.pk]),
        }
    }


@admin.register(DealProperty)
class DealPropertyAdmin(AccountScopedAdmin):
    account_path = "deal__account"
    form = DealPropertyForm
    # A laptop's width: the property over where it is, its deal, what it is.
    list_display = ["property_cell", "deal", "kind", "units"]
    list_display_links = None  # the first cell links to the property
    list_filter = ["state", ("asset_type", WordsChoicesFilter)]
    search_fields = ["name", "address", "city", "deal__title"]
    readonly_fields = ["created_at", "updated_at"]
    list_select_related = ["deal"]
    autocomplete_fields = ["deal"]

    class Media:
        css = ADMIN_CSS

    @admin.display(description="Property", ordering="name")
    def property_cell(self, prop: DealProperty) -> str:
        where = ", ".join(part for part in (prop.city, prop.state) if part)
        return two_lines(prop.name or formatting.EMPTY, where, change_url(prop))

    @admin.display(description="Asset type", ordering="asset_type")
    def kind(self, prop: DealProperty) -> str:
        return formatting.label(prop.asset_type) if prop.asset_type else formatting.EMPTY

    def get_form(self, request, obj=None, **kwargs):
        kwargs["fields"] = ["deal", *services.PROPERTY_FIELDS]
        return super().get_form(request, obj, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "deal"] if obj is not None else fields

    def has_change_permission(self, request, obj=None) -> bool:
        return super().has_change_permission(request, obj) and not (obj is not None and obj.deal.archived)

    def has_delete_permission(self, request, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and not (obj is not None and obj.deal.archived)

    def save_model(self, request, obj, form, change):
        data = {name: form.cleaned_data.get(name) for name in services.PROPERTY_FIELDS}
        if change:
            changed = {name: value for name, value in data.items() if name in form.changed_data}
            services.deal_property_update(prop=obj, data=changed)
        else:
            created = services.deal_property_create(deal=form.cleaned_data["deal"], data=data)
            obj.pk = created.pk

    def delete_model(self, request, obj):
        services.deal_property_delete(prop=obj)

    def delete_queryset(self, request, queryset):
        for prop in queryset.select_related("deal"):
            services.deal_property_delete(prop=prop)
