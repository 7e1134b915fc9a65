"""The deal list and the deal's form: what a deal team reads of its deals, the rules the API keeps
(an archived deal is read-only, the account is chosen once) and saving through the API's services.
The deal page's own views and summary are deals/admin/deal_page.py's."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.urls import path, reverse
from django.utils.html import format_html

from deals import selectors, services
from deals.admin.deal_page import DealPageViews, start_lender_search
from deals.admin.filters import (
    ArchivedFilter,
    AssetTypeFilter,
    LatestSearchFilter,
    PropertyStateFilter,
)
from deals.admin.forms import DealForm
from deals.admin.inlines import DealFinancialsInline, DealPropertyInline
from deals.history import admin_export
from deals.history import admin_views as history_admin_views
from deals.models import Deal, DealFinancials, DealProperty
from deals.notes.admin import DealNoteInline
from deals.pipeline import services as pipeline_services
from deals.pipeline.admin import StageChangeInline, StageFilter
from deals.pipeline.selectors import deal_amount
from deals.searches.models import LenderSearch
from deals.searches.selectors import deals_with_latest_search
from lev import formatting, limits
from lev.accounts.admin_bases import ADMIN_CSS, AccountScopedAdmin, staff_account_ids
from lev.admin_lists import DefaultScopeMixin, WordsChoicesFilter, change_url, two_lines
from lev.enums import ASSET_TYPES


def search_status_badge(status: str | None) -> str:
    if not status:
        return formatting.EMPTY
    return format_html('<span class="lev-badge lev-badge--{}">{}</span>', status, LenderSearch.Status(status).label)


def _company_ids(cleaned: dict[str, Any], names) -> dict[str, int | None]:
    """The deal's sponsor and borrower as the services take them (ids, checked against the deal's account:
    another account's company is refused there, never saved)."""
    return {f"{name}_id": cleaned[name].pk if cleaned.get(name) else None for name in names if name in cleaned}


@admin.register(Deal)
class DealAdmin(DealPageViews, DefaultScopeMixin, AccountScopedAdmin):
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

    # -- the list's own pages: the whole-account export and "Import history" (the deal page's are
    #    DealPageViews')
    def get_urls(self):
        export = path("export-history/", self.admin_site.admin_view(
            lambda request: admin_export.account_export_view(self, request)), name="deals_deal_export_history")
        # "Import history" (deals/history/admin_views.py): importing a team's history writes deals.
        return [export, *history_admin_views.urls(self), *super().get_urls()]
