"""The admin page of a lender search: what was ranked, in words, and its ranked lenders a page at a time."""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from deals.searches.admin_results import criteria_summary, page_number, ranked_page
from deals.searches.models import LenderSearch
from lev import formatting, limits
from lev.accounts.admin_bases import ADMIN_CSS, AccountScopedAdmin
from lev.admin_lists import change_url, two_lines
from lev.errors import ErrorCode


# --- lender searches ------------------------------------------------------------------------------
@admin.register(LenderSearch)
class LenderSearchAdmin(AccountScopedAdmin):
    """Searches are records of ranking jobs: made by the API (or a deal's "Find lenders"), changed
    only by their jobs. The page shows the ranked lenders, a page at a time."""

    # What a deal team reads of its searches; worker internals (attempts, heartbeat, the deal's
    # version) only in a superuser's collapsed "Diagnostics".
    list_display = ["search_cell", "status_cell", "matches", "finished"]
    list_display_links = None  # the first cell links to the search
    list_filter = ["status", "error_code", "account"]
    search_fields = ["deal__title"]
    list_select_related = ["deal"]
    # A deal team reads what was searched and what came of it; the job's own record (attempts,
    # heartbeat, deal version) is folded away.
    fieldsets = [
        (None, {"fields": ["deal_link", "account", "status", "progress_display", "matches", "candidates",
                           "error"]}),
        ("What was ranked", {"fields": ["criteria_display"]}),
        ("Record", {"fields": ["created_by", "created_at", "finished_at"]}),
    ]
    diagnostics = ("Diagnostics", {"classes": ["collapse"],
                                   "fields": ["attempts", "deal_version", "queued_at", "started_at", "heartbeat_at"]})
    readonly_fields = ["deal_link", "account", "status", "progress_display", "matches", "candidates",
                       "attempts", "error", "criteria_display", "deal_version", "created_by", "created_at",
                       "queued_at", "started_at", "heartbeat_at", "finished_at"]

    class Media:
        css = ADMIN_CSS

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        return [*fieldsets, self.diagnostics] if request.user.is_superuser else fieldsets

    @admin.display(description="Search of", ordering="deal__title")
    def search_cell(self, search: LenderSearch) -> str:
        """The deal searched for (linking to the search) over the day it started."""
        return two_lines(search.deal.title, f"Started {formatting.day(search.created_at)}", change_url(search))

    @admin.display(description="Status", ordering="status")
    def status_cell(self, search: LenderSearch) -> str:
        badge = format_html('<span class="lev-badge lev-badge--{}">{}</span>', search.status,
                            search.get_status_display())
        if search.status in (LenderSearch.Status.PENDING, LenderSearch.Status.RUNNING):
            return format_html('{} <span class="lev-muted">{}%</span>', badge, search.progress)
        return badge

    @admin.display(description="Finished", ordering="finished_at")
    def finished(self, search: LenderSearch) -> str:
        return formatting.day(search.finished_at)

    @admin.display(description="Lenders considered")
    def candidates(self, search: LenderSearch) -> str:
        return f"{search.total_candidates:,}"

    @admin.display(description="Progress")
    def progress_display(self, search: LenderSearch) -> str:
        return "Done" if search.progress >= 100 else f"{search.progress}% done"

    @admin.display(description="Deal", ordering="deal__title")
    def deal_link(self, search: LenderSearch) -> str:
        url = reverse("admin:deals_deal_change", args=[search.deal_id])
        return format_html('<a href="{}">{}</a>', url, search.deal.title)

    @admin.display(description="Matches", ordering="total_matches")
    def matches(self, search: LenderSearch) -> str:
        """Eligible lenders, and how many of them are stored (ranked) when fewer."""
        if search.matches_purged_at is not None:
            return f"{search.total_matches:,} (ranks removed: superseded)"
        if search.ranked_matches < search.total_matches:
            return f"{search.total_matches:,} (top {search.ranked_matches:,} ranked)"
        return f"{search.total_matches:,}"

    @admin.display(description="Error")
    def error(self, search: LenderSearch) -> str:
        if search.status != LenderSearch.Status.FAILED:
            return formatting.EMPTY
        return f"{search.error_code or ErrorCode.INTERNAL_ERROR}: {search.error_message}"

    @admin.display(description="Criteria")
    def criteria_display(self, search: LenderSearch) -> str:
        rows = format_html_join("", "<tr><th>{}</th><td>{}</td></tr>", criteria_summary(search.criteria))
        return format_html('<table class="lev-criteria">{}</table>', rows)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context["ranked"] = ranked_page(obj, page=page_number(request), size=limits.ADMIN_MATCHES_PER_PAGE,
                                            chart_size=limits.ADMIN_TOP_MATCHES)
            # "Place with selected lenders": the deal page's view places the ticked lenders of this search.
            context["place_url"] = reverse("admin:deals_deal_place", args=[obj.deal_id])
            context["place_form_id"] = "lev-place-form"
        return super().render_change_form(request, context, add, change, form_url, obj)
