"""Admin of placements and term sheets (registered by an import at the end of deals/admin.py).

Placements and term sheets are made through the workflow (REST, MCP, the deal page), so the admin
does not add or hard-delete them; status changes, removing a quote and choosing the winner are
actions that call the same services as every other door, and a refused action says why.
"""

from __future__ import annotations

from decimal import Decimal

from django.contrib import admin, messages

from deals.placements import selectors as placement_selectors
from deals.placements import services
from deals.placements.models import Placement, TermSheet
from lev.accounts.admin_bases import AccountScopedHistoryAdmin
from lev.accounts.selectors import check_staff_can_write
from lev.enums import RATE_INDEX_NAMES
from lev.errors import ApplicationError
from lev.formatting import money, percent


def rate_text(term_sheet: TermSheet) -> str:
    if term_sheet.rate_type == "fixed":
        return percent(term_sheet.fixed_rate, 3)
    index = RATE_INDEX_NAMES.get(term_sheet.rate_index, term_sheet.rate_index)
    return f"{index} + {percent(Decimal(term_sheet.spread_bps or 0) / 100, 2)}"


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


class TermSheetInline(admin.TabularInline):
    model = TermSheet
    fk_name = "placement"
    extra = 0
    can_delete = False
    fields = ["id", "quote_type", "amount", "rate", "term_months", "recourse", "expires_on", "winning",
              "received_at", "deleted_at"]
    readonly_fields = fields
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="Loan amount")
    def amount(self, term_sheet: TermSheet) -> str:
        return money(term_sheet.loan_amount)

    @admin.display(description="Rate")
    def rate(self, term_sheet: TermSheet) -> str:
        return rate_text(term_sheet)


def _status_action(status: str, description: str):
    def action(modeladmin, request, queryset):
        _run(modeladmin, request, queryset,
             lambda placement: services.placement_update(placement=placement, data={"status": status}),
             f"Placements marked {status.replace('_', ' ')}")

    action.__name__ = f"mark_{status}"
    return admin.action(description=description)(action)


@admin.register(Placement)
class PlacementAdmin(AccountScopedHistoryAdmin):
    account_path = "deal__account"
    list_display = ["id", "deal", "lender", "status", "source_rank", "quotes", "sent_at", "first_response_at",
                    "decided_at"]
    list_filter = ["status", "deal__account", "sent_at"]
    search_fields = ["deal__title", "lender__name", "contact_name", "contact_email"]
    list_select_related = ["deal", "lender"]
    date_hierarchy = "created_at"
    # Only the plain fields are edited here (through placement_update); status moves by the actions.
    fields = ["deal", "lender", "program", "status", "contact_name", "contact_email", "notes", "source_search",
              "source_rank", "sent_at", "first_response_at", "decided_at", "archived_at", "created_by", "created_at",
              "updated_at"]
    readonly_fields = [f for f in fields if f not in ("contact_name", "contact_email", "notes")]
    inlines = [TermSheetInline]
    actions = [_status_action("sent", "Mark as sent to the lender"),
               _status_action("reviewing", "Mark as reviewing"),
               _status_action("declined", "Mark as declined by the lender"),
               _status_action("no_response", "Mark as no response"),
               _status_action("archived", "Archive")]

    # The quote count's GROUP BY drops the model's ordering: pages of the list keep a stable order.
    ordering = ["id"]

    def get_queryset(self, request):
        return placement_selectors.with_term_sheet_count(super().get_queryset(request))

    @admin.display(description="Quotes", ordering="term_sheet_count")
    def quotes(self, placement: Placement) -> int:
        return placement.term_sheet_count

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # placements are archived, never deleted

    def save_model(self, request, obj, form, change) -> None:
        data = {name: form.cleaned_data[name] for name in form.changed_data}
        services.placement_update(placement=Placement.objects.get(pk=obj.pk), data=data)


@admin.register(TermSheet)
class TermSheetAdmin(AccountScopedHistoryAdmin):
    account_path = "deal__account"
    list_display = ["id", "deal", "lender", "quote_type", "amount", "rate", "term_months", "recourse", "fees",
                    "expires_on", "winning", "received_at", "removed"]
    list_filter = ["winning", "quote_type", "rate_type", "rate_index", "recourse",
                   ("deleted_at", admin.EmptyFieldListFilter)]
    search_fields = ["deal__title", "placement__lender__name"]
    list_select_related = ["deal", "placement__lender"]
    readonly_fields = [f.name for f in TermSheet._meta.fields]
    actions = ["choose_winner", "remove"]

    @admin.display(description="Lender", ordering="placement__lender__name")
    def lender(self, term_sheet: TermSheet) -> str:
        return term_sheet.placement.lender.name

    @admin.display(description="Loan amount", ordering="loan_amount")
    def amount(self, term_sheet: TermSheet) -> str:
        return money(term_sheet.loan_amount)

    @admin.display(description="Rate")
    def rate(self, term_sheet: TermSheet) -> str:
        return rate_text(term_sheet)

    @admin.display(description="Fees (orig. / exit)")
    def fees(self, term_sheet: TermSheet) -> str:
        return f"{percent(term_sheet.origination_fee_percent, 3)} / {percent(term_sheet.exit_fee_percent, 3)}"

    @admin.display(description="Removed", boolean=True)
    def removed(self, term_sheet: TermSheet) -> bool:
        return term_sheet.deleted_at is not None

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
