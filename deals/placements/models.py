"""Placements (a deal sent to a lender), term sheets (a lender's quote) and current base rates.

Imported by `deals.models`, so these are models of the `deals` app. Rules live in
`deals.placements.services`; the database holds the two that must never break even when two requests
race: one open placement per (deal, lender) and one winning term sheet per deal (partial unique
constraints, on PostgreSQL and SQLite alike).

Timestamps that the activity signals read (`sent_at`, `first_response_at`, `decided_at`,
`received_at`) default to now rather than `auto_now_add`, so a recorded history (the demo's) can be
written with the times it happened.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from simple_history.models import HistoricalRecords

from deals.placements import workflow
from lev import limits
from lev.enums import QUOTE_TYPES, RATE_INDEXES, RATE_TYPES, RECOURSE_TYPES, choices
from lev.limits import CONTACT_NAME_MAX, EMAIL_MAX, PREPAYMENT_TEXT_MAX

# The statuses and the moves between them are the table of deals.placements.workflow.


class Placement(models.Model):
    """One deal sent to one lender. The deal and the lender are fixed at creation."""

    Status = workflow.Status

    deal = models.ForeignKey("deals.Deal", on_delete=models.CASCADE, related_name="placements")
    # Like a lender's search matches, its placements go with it (the admin lists them before a delete).
    lender = models.ForeignKey("lenders.Lender", on_delete=models.CASCADE, related_name="placements")
    program = models.ForeignKey("lenders.LenderProgram", null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="+")
    contact_name = models.CharField(max_length=CONTACT_NAME_MAX, blank=True, default="")
    contact_email = models.CharField(max_length=EMAIL_MAX, blank=True, default="")
    # The account's contact at this placement's lender (deals.companies). contact_name and contact_email
    # are who the deal was sent to, as written then: choosing a contact fills them in (unless given),
    # and they stay when the contact is later changed or removed.
    contact = models.ForeignKey("deals.Contact", null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="placements")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.DRAFT)
    notes = models.TextField(blank=True, default="")
    # Why the lender declined, as the team wrote it (an imported history's decline reason).
    decline_reason = models.CharField(max_length=limits.DECLINE_REASON_MAX, blank=True, default="")
    # Where the placement came from, when it came from a lender search.
    source_search = models.ForeignKey("deals.LenderSearch", null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="+")
    source_rank = models.PositiveIntegerField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    first_response_at = models.DateTimeField(null=True, blank=True,
                                             help_text="The lender's first answer (reviewing, a quote or a decline).")
    decided_at = models.DateTimeField(null=True, blank=True, help_text="When it became declined, won or lost.")
    archived_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    # Every change, with who made it (django-simple-history): a deal's timeline reads the status
    # changes from it (docs/notes.md). Writers that skip save() use its bulk helpers.
    history = HistoricalRecords()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["deal", "lender"], condition=Q(status__in=workflow.OPEN_STATUSES),
                                    name="uniq_open_placement_per_deal_lender"),
            models.CheckConstraint(condition=Q(status__in=workflow.STATUSES), name="placement_status_valid"),
        ]
        indexes = [
            models.Index(fields=["deal", "status"], name="placement_deal_status"),
            # The activity recompute reads placements by lender with their recent events.
            models.Index(fields=["lender", "decided_at"], name="placement_lender_decided"),
        ]

    def __str__(self) -> str:
        return f"{self.deal.title} with {self.lender.name} ({self.get_status_display().lower()})"


class TermSheet(models.Model):
    """A lender's quote on a placement. Removing one is a soft delete (`deleted_at`)."""

    placement = models.ForeignKey(Placement, on_delete=models.CASCADE, related_name="term_sheets")
    # The placement's deal, fixed at creation: the "one winner per deal" constraint needs it here.
    deal = models.ForeignKey("deals.Deal", on_delete=models.CASCADE, related_name="term_sheets")
    quote_type = models.CharField(max_length=12, choices=choices(QUOTE_TYPES), default="term_sheet")
    loan_amount = models.DecimalField(**limits.MONEY_COLUMN)
    rate_type = models.CharField(max_length=8, choices=choices(RATE_TYPES))
    fixed_rate = models.DecimalField(**limits.RATE_COLUMN, null=True, blank=True,
                                     help_text="Percent per year (fixed quotes).")
    rate_index = models.CharField(max_length=16, choices=choices(RATE_INDEXES), blank=True, default="",
                                  help_text="Base rate index (floating quotes).")
    spread_bps = models.PositiveIntegerField(null=True, blank=True,
                                             help_text="Basis points over the index (floating quotes).")
    term_months = models.PositiveSmallIntegerField(null=True, blank=True)
    amortization_months = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Empty: interest-only for the whole term.")
    interest_only_months = models.PositiveSmallIntegerField(default=0)
    max_ltv = models.DecimalField(**limits.LTV_PERCENT_COLUMN, null=True, blank=True, help_text="Percent.")
    min_dscr = models.DecimalField(**limits.DSCR_INPUT_COLUMN, null=True, blank=True)
    recourse = models.CharField(max_length=12, choices=choices(RECOURSE_TYPES), blank=True, default="")
    origination_fee_percent = models.DecimalField(**limits.FEE_PERCENT_COLUMN, null=True, blank=True)
    exit_fee_percent = models.DecimalField(**limits.FEE_PERCENT_COLUMN, null=True, blank=True)
    prepayment = models.CharField(max_length=PREPAYMENT_TEXT_MAX, blank=True, default="",
                                  help_text="Prepayment terms, e.g. 'yield maintenance' or '3-2-1 step-down'.")
    expires_on = models.DateField(null=True, blank=True)
    winning = models.BooleanField(default=False)
    notes = models.TextField(blank=True, default="")
    received_at = models.DateTimeField(default=timezone.now)
    deleted_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    # Every change, with who made it: the timeline's quote received, winner chosen and quote removed.
    history = HistoricalRecords()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["deal"], condition=Q(winning=True),
                                    name="uniq_winning_term_sheet_per_deal"),
            models.CheckConstraint(
                condition=(Q(rate_type="fixed", fixed_rate__isnull=False)
                           | Q(rate_type="floating", spread_bps__isnull=False) & ~Q(rate_index="")),
                name="term_sheet_rate_complete",
            ),
        ]
        indexes = [
            models.Index(fields=["deal", "deleted_at"], name="term_sheet_deal_live"),
            # The activity recompute counts recent quotes per placement.
            models.Index(fields=["received_at", "placement"], name="term_sheet_received"),
        ]

    def __str__(self) -> str:
        # Lists join the deal and the placement's lender (the row's checkbox is labelled with this).
        return f"{self.get_quote_type_display()} from {self.placement.lender.name} on {self.deal.title}"
