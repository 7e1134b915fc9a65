"""Admin of placements and term sheets (registered by an import in deals/admin/__init__.py).

Placements and term sheets are made through the workflow (REST, MCP, the deal page), so the admin
does not add or hard-delete them; status changes, removing a quote and choosing the winner are
actions that call the same services as every other door, and a refused action says why.
"""

from __future__ import annotations

from decimal import Decimal

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from deals.pipeline.admin import DealStatusFilter
from deals.placements import selectors as placement_selectors
from deals.placements import services
from deals.placements.errors import ArchivedDealNotPlaceable, PlacementNotQuotable
from deals.placements.models import Placement, TermSheet
from deals.placements.quote_form import RecordQuoteForm
from deals.placements.workflow import QUOTABLE_STATUSES
from lev import formatting
from lev.accounts.admin_bases import ADMIN_CSS, AccountScopedHistoryAdmin
from lev.accounts.selectors import check_staff_can_write
from lev.admin_lists import DefaultScopeMixin, WordsChoicesFilter, change_url, two_lines
from lev.enums import RATE_INDEX_NAMES, RECOURSE_TYPES
from lev.errors import ApplicationError, Forbidden
from lev.formatting import money, percent


def rate_text(term_sheet: TermSheet) -> str:
    if term_sheet.rate_type == "fixed":
        return percent(term_sheet.fixed_rate, 3)
    index = RATE_INDEX_NAMES.get(term_sheet.rate_index, term_sheet.rate_index)
    return f"{index} + {percent(Decimal(term_sheet.spread_bps or 0) / 100, 2)}"


class RateIndexFilter(WordsChoicesFilter):
    """Base rate indexes by their names ("Term SOFR 1M"), not title-cased slugs ("Term Sofr 1M")."""

    def words(self, value: str) -> str:
        return RATE_INDEX_NAMES.get(value, super().words(value))


class RemovedFilter(admin.EmptyFieldListFilter):
    """Whether a quote was removed (its `deleted_at`), in words."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.title = "removed"

    def choices(self, changelist):
        words = {"Empty": "Not removed", "Not empty": "Removed"}
        for choice in super().choices(changelist):
            yield {**choice, "display": words.get(str(choice["display"]), choice["display"])}


class NamedVersionsMixin:
    """A history page names each version as the record is named (with its deal and lender, fixed at
    creation), read once for the page from the current record instead of once per version."""

    shared_relations: tuple[str, ...] = ()

    def render_history_view(self, request, template, context, **kwargs):
        current, page = context.get("object"), context.get("page_obj")
        if current is not None and page is not None:
            page.object_list = list(page.object_list)
            for record in page.object_list:
                version = record.history_object  # a new instance at each read: kept on the record
                for name in self.shared_relations:
                    setattr(version, name, getattr(current, name))
                record.history_object = version
        return super().render_history_view(request, template, context, **kwargs)


def _run(modeladmin: admin.ModelAdmin, request, objects, action, done: str) -> None:
    """Call `action` on each object; report how many succeeded and each refusal's message (a viewer
    of the object's account is refused as the API refuses it)."""
    succeeded = 0
    for obj in objects:
        try:
            check_staff_can_write(user=request.user, account_id=obj.deal.account_id)
            action(obj)
            succeeded += 1
        except ApplicationError as error:
            text = getattr(error, "customer_message", None) or error.message
            modeladmin.message_user(request, f"{obj}: {text}", messages.WARNING)
    if succeeded:
        modeladmin.message_user(request, f"{done}: {succeeded}.", messages.SUCCESS)


def quote_cell(term_sheet: TermSheet) -> str:
    """The kind of quote, marked when it won or was removed."""
    kind = formatting.label(term_sheet.quote_type)
    if term_sheet.deleted_at is not None:
        return two_lines(kind, "Removed")
    if term_sheet.winning:
        return format_html('{}<div><span class="lev-badge lev-badge--completed">Winner</span></div>', kind)
    return kind


def terms_cell(term_sheet: TermSheet) -> str:
    """The term ("10 yr", "18 mo") over the recourse."""
    months = term_sheet.term_months
    term = formatting.EMPTY if months is None else (f"{months // 12} yr" if months % 12 == 0 else f"{months} mo")
    recourse = formatting.label(term_sheet.recourse) if term_sheet.recourse in RECOURSE_TYPES else ""
    return two_lines(term, recourse)


class TermSheetInline(admin.TabularInline):
    """A placement's quotes in the words of the term sheet list, narrow enough for a laptop (1024 px)."""

    model = TermSheet
    fk_name = "placement"
    extra = 0
    can_delete = False
    fields = ["quote", "amount", "rate", "terms", "expires", "received"]
    readonly_fields = fields
    show_change_link = True

    def get_queryset(self, request):
        # Each row is named with its lender and deal (read with the rows, not one by one).
        return super().get_queryset(request).select_related("deal", "placement__lender")

    def has_add_permission(self, request, obj=None) -> bool:
        return False  # "Record a quote" (PlacementAdmin.record_quote_view) adds one, through the service

    @admin.display(description="Quote")
    def quote(self, term_sheet: TermSheet) -> str:
        return quote_cell(term_sheet)

    @admin.display(description="Loan amount")
    def amount(self, term_sheet: TermSheet) -> str:
        return money(term_sheet.loan_amount)

    @admin.display(description="Rate")
    def rate(self, term_sheet: TermSheet) -> str:
        return rate_text(term_sheet)

    @admin.display(description="Term")
    def terms(self, term_sheet: TermSheet) -> str:
        return terms_cell(term_sheet)

    @admin.display(description="Expires")
    def expires(self, term_sheet: TermSheet) -> str:
        return formatting.day(term_sheet.expires_on)

    @admin.display(description="Received")
    def received(self, term_sheet: TermSheet) -> str:
        return formatting.day(term_sheet.received_at)


def quotes_refused(placement: Placement) -> str:
    """Why the placement takes no quote now, in the service's words ("" when it takes one)."""
    if placement.deal.archived:
        return ArchivedDealNotPlaceable(placement.deal).customer_message
    if placement.status not in QUOTABLE_STATUSES:
        return PlacementNotQuotable(placement).customer_message
    return ""


def quote_words(term_sheet: TermSheet, lender_name: str) -> str:
    """A quote in a line: "Acme Bank's term sheet: $18,500,000 at 6.150% fixed, expires Dec 9"."""
    kind = term_sheet.get_quote_type_display().lower()
    rate = (f"{percent(term_sheet.fixed_rate, 3)} fixed" if term_sheet.rate_type == "fixed"
            else f"{rate_text(term_sheet)} floating")
    expiry = f", expires {formatting.day(term_sheet.expires_on)}" if term_sheet.expires_on else ""
    return f"{lender_name}'s {kind}: {money(term_sheet.loan_amount)} at {rate}{expiry}"


def _status_action(status: str, description: str):
    def action(modeladmin, request, queryset):
        _run(modeladmin, request, queryset,
             lambda placement: services.placement_update(placement=placement, data={"status": status}),
             f"Placements marked {status.replace('_', ' ')}")

    action.__name__ = f"mark_{status}"
    return admin.action(description=description)(action)


def lender_and_deal(row, lender_name: str) -> str:
    """The list's first cell: the lender (linking to the row) over the deal's title."""
    return two_lines(lender_name, row.deal.title, change_url(row))


@admin.register(Placement)
class PlacementAdmin(NamedVersionsMixin, DefaultScopeMixin, AccountScopedHistoryAdmin):
    account_path = "deal__account"
    # What a deal team reads of a placement, in a laptop's width: who, where it stands, what came back.
    list_display = ["lender_deal", "status_cell", "rank", "quotes", "sent", "response"]
    list_display_links = None  # the first cell links to the placement
    list_filter = [DealStatusFilter, "status", "sent_at", "deal__account"]
    shared_relations = ("deal", "lender")
    default_scope_filter = DealStatusFilter
    search_fields = ["deal__title", "lender__name", "contact_name", "contact_email"]
    list_select_related = ["deal", "lender"]
    list_per_page = 50
    # Only the plain fields are edited here (through placement_update); status moves by the actions.
    fields = ["deal", "lender", "program", "status", "contact_name", "contact_email", "notes", "decline_reason",
              "source_search", "source_rank", "sent_at", "first_response_at", "decided_at", "archived_at",
              "created_by", "created_at", "updated_at"]
    readonly_fields = [f for f in fields if f not in ("contact_name", "contact_email", "notes", "decline_reason")]
    inlines = [TermSheetInline]
    actions = [_status_action("sent", "Mark as sent to the lender"),
               _status_action("reviewing", "Mark as reviewing"),
               _status_action("declined", "Mark as declined by the lender"),
               _status_action("no_response", "Mark as no response"),
               _status_action("archived", "Archive")]

    # Newest first (the quote count's GROUP BY drops the model's ordering: this one is explicit).
    ordering = ["-created_at", "-id"]

    class Media:
        css = ADMIN_CSS

    def get_queryset(self, request):
        return placement_selectors.with_term_sheet_count(super().get_queryset(request))

    @admin.display(description="Lender / deal", ordering="lender__name")
    def lender_deal(self, placement: Placement) -> str:
        return lender_and_deal(placement, placement.lender.name)

    @admin.display(description="Status", ordering="status")
    def status_cell(self, placement: Placement) -> str:
        decided = formatting.day(placement.decided_at) if placement.decided_at else ""
        return two_lines(placement.get_status_display(), decided)

    @admin.display(description="Rank", ordering="source_rank")
    def rank(self, placement: Placement) -> str:
        return formatting.EMPTY if placement.source_rank is None else f"#{placement.source_rank:,}"

    @admin.display(description="Quotes", ordering="term_sheet_count")
    def quotes(self, placement: Placement) -> int:
        return placement.term_sheet_count

    @admin.display(description="Sent", ordering="sent_at")
    def sent(self, placement: Placement) -> str:
        return formatting.day(placement.sent_at)

    @admin.display(description="Response", ordering="first_response_at")
    def response(self, placement: Placement) -> str:
        """The first response's day; for a sent placement still waiting, for how long."""
        if placement.first_response_at is not None:
            return formatting.day(placement.first_response_at)
        if placement.sent_at is not None and placement.status == Placement.Status.SENT:
            days = (timezone.now() - placement.sent_at).days
            return format_html('<span class="lev-muted">waiting {} day{}</span>', days, "" if days == 1 else "s")
        return formatting.EMPTY

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # placements are archived, never deleted

    # -- "Record a quote": a lender's term sheet, through the service the API uses
    def get_urls(self):
        record = path("<path:object_id>/record-quote/", self.admin_site.admin_view(self.record_quote_view),
                      name="deals_placement_record_quote")
        return [record, *super().get_urls()]

    @staticmethod
    def may_record_quote(request: HttpRequest, placement: Placement) -> bool:
        """Who may record a quote: a person with the term sheets' add permission who may write to the
        placement's account (a viewer of the account may not, whatever its permissions)."""
        if not request.user.has_perm("deals.add_termsheet"):
            return False
        try:
            check_staff_can_write(user=request.user, account_id=placement.deal.account_id)
        except Forbidden:
            return False
        return True

    def record_quote_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """GET: the form (today's date filled in); POST: validated as the REST endpoint validates
        (its serializer), saved by `services.term_sheet_add`, then back to the placement (or the deal,
        `?from=deal`) saying what was recorded. Refusals are shown on the form, in words. Another
        account's placement: 404; no permission to add term sheets, or a viewer of the account: 403."""
        placement = self.get_object(request, unquote(object_id))
        if placement is None:
            raise Http404("No such placement.")
        if not self.may_record_quote(request, placement):
            raise PermissionDenied
        if request.method not in ("GET", "POST"):
            return HttpResponseNotAllowed(["GET", "POST"])
        from_deal = request.GET.get("from") == "deal"
        back = (reverse("admin:deals_deal_change", args=[placement.deal_id]) + "#term-sheets" if from_deal
                else reverse("admin:deals_placement_change", args=[placement.pk]))
        form = RecordQuoteForm(request.POST if request.method == "POST" else None)
        if request.method == "POST" and form.is_valid():
            try:
                term_sheet = services.term_sheet_add(placement=placement, data=form.validated, user=request.user)
            except ApplicationError as error:
                form.refused(error)
            else:
                self.message_user(request, f"Recorded {quote_words(term_sheet, placement.lender.name)}. "
                                           f"The placement is quoted.", messages.SUCCESS)
                return HttpResponseRedirect(back)
        closed = quotes_refused(placement)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts, "title": f"Record a quote from {placement.lender.name}", "placement": placement,
            "deal": placement.deal, "form": form, "back_url": back, "media": self.media + form.media,
            "closed_reason": closed, "placement_url": reverse("admin:deals_placement_change", args=[placement.pk]),
        }
        return TemplateResponse(request, "admin/deals/placement/record_quote.html", context)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and obj.pk:
            context["lev_record_quote_url"] = (
                reverse("admin:deals_placement_record_quote", args=[obj.pk])
                if not quotes_refused(obj) and self.may_record_quote(request, obj)
                else "")
        return super().render_change_form(request, context, add, change, form_url, obj)

    def save_model(self, request, obj, form, change) -> None:
        data = {name: form.cleaned_data[name] for name in form.changed_data}
        services.placement_update(placement=Placement.objects.get(pk=obj.pk), data=data)


@admin.register(TermSheet)
class TermSheetAdmin(NamedVersionsMixin, DefaultScopeMixin, AccountScopedHistoryAdmin):
    account_path = "deal__account"
    # The figures a deal team compares, in a laptop's width; the rest is on the term sheet's page.
    list_display = ["lender_deal", "quote", "amount", "rate", "terms", "fees", "expires", "received"]
    list_display_links = None  # the first cell links to the term sheet
    list_filter = [DealStatusFilter, "winning", "quote_type", "rate_type", ("rate_index", RateIndexFilter),
                   ("recourse", WordsChoicesFilter),
                   ("deleted_at", RemovedFilter)]
    default_scope_filter = DealStatusFilter
    search_fields = ["deal__title", "placement__lender__name"]
    shared_relations = ("deal", "placement")
    list_select_related = ["deal", "placement__lender"]
    list_per_page = 50
    ordering = ["-received_at", "-id"]
    readonly_fields = [f.name for f in TermSheet._meta.fields]
    actions = ["choose_winner", "remove"]

    class Media:
        css = ADMIN_CSS

    @admin.display(description="Lender / deal", ordering="placement__lender__name")
    def lender_deal(self, term_sheet: TermSheet) -> str:
        return lender_and_deal(term_sheet, term_sheet.placement.lender.name)

    @admin.display(description="Quote", ordering="quote_type")
    def quote(self, term_sheet: TermSheet) -> str:
        return quote_cell(term_sheet)

    @admin.display(description="Amount", ordering="loan_amount")
    def amount(self, term_sheet: TermSheet) -> str:
        return formatting.money_short(term_sheet.loan_amount)

    @admin.display(description="Rate")
    def rate(self, term_sheet: TermSheet) -> str:
        return rate_text(term_sheet)

    @admin.display(description="Term", ordering="term_months")
    def terms(self, term_sheet: TermSheet) -> str:
        return terms_cell(term_sheet)

    @admin.display(description="Fees in / out")
    def fees(self, term_sheet: TermSheet) -> str:
        return f"{percent(term_sheet.origination_fee_percent, 3)} / {percent(term_sheet.exit_fee_percent, 3)}"

    @admin.display(description="Expires", ordering="expires_on")
    def expires(self, term_sheet: TermSheet) -> str:
        return formatting.day(term_sheet.expires_on)

    @admin.display(description="Received", ordering="received_at")
    def received(self, term_sheet: TermSheet) -> str:
        return formatting.day(term_sheet.received_at)

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # removing is a soft delete: the "Remove" action

    @admin.action(description="Choose as the deal's winning quote (other open placements become lost)")
    def choose_winner(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, "Choose exactly one term sheet as the winner.", messages.WARNING)
            return
        _run(self, request, queryset, lambda t: services.term_sheet_select_winner(term_sheet=t, user=request.user),
             "Winner chosen")

    @admin.action(description="Remove (kept on record, no longer compared)")
    def remove(self, request, queryset):
        _run(self, request, queryset.filter(deleted_at=None), lambda t: services.term_sheet_remove(term_sheet=t),
             "Term sheets removed")
