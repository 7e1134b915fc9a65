from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce

from deals import finance
from deals.companies.models import Company, Contact
from deals.documents.figures.models import FigureSource
from deals.documents.models import Document, DocumentVersion
from deals.history.models import HistoryImport
from deals.notes.models import Note
from deals.outreach.models import (
    InboundEmail,
    OutboundEmail,
    OutreachEvent,
    OutreachSend,
    OutreachTemplate,
    PackageLink,
)
from deals.pipeline.models import Stage, StageChange, active_deals
from deals.placements.models import Placement, TermSheet
from deals.searches.models import LenderMatch, LenderSearch
from lev import limits
from lev.enums import ASSET_TYPES, BUSINESS_PLANS, LOAN_TYPES, TRANSACTION_TYPES, US_STATES, choices

# The deal list's sort values (deals.selectors.deal_list_keyset). A missing loan amount or closing date
# sorts as a value past every real one (last going up, first going down, as PostgreSQL sorts NULLs),
# so that a page's key is never NULL; each is indexed with (account, archived) and the id, so any
# page of the list is one index range scan however many deals the account has.
# One more digit than money: room for the value past MONEY_MAX.
SORT_AMOUNT = models.DecimalField(max_digits=limits.MONEY_MAX_DIGITS + 1, decimal_places=limits.MONEY_DECIMAL_PLACES)
SORT_DATE = models.DateField()
DEAL_SORT_VALUES = {
    "created_at": F("created_at"),
    "updated_at": F("updated_at"),
    "title": F("title"),
    "loan_amount": Coalesce("loan_amount", Value(Decimal(10) ** 12, output_field=SORT_AMOUNT),
                            output_field=SORT_AMOUNT),
    "estimated_close_date": Coalesce("estimated_close_date", Value(dt.date(9999, 12, 31), output_field=SORT_DATE),
                                     output_field=SORT_DATE),
}


class DealQuerySet(models.QuerySet):
    def active(self) -> DealQuerySet:
        """Deals being worked: not archived, in an open stage (deals.pipeline.models.active_deals)."""
        return self.filter(active_deals())

    def bulk_create(self, objs, *args, **kwargs):
        """As `save()` does one by one: each deal without a stage starts in its account's first stage,
        and is owned by its creator unless an owner is given."""
        objs, first = list(objs), {}
        for deal in objs:
            if deal.stage_id is None:
                if deal.account_id not in first:
                    first[deal.account_id] = Stage.objects.first_of(deal.account_id)
                deal.stage = first[deal.account_id]
            if deal.owner_id is None:
                deal.owner_id = deal.created_by_id
        return super().bulk_create(objs, *args, **kwargs)


class Deal(models.Model):
    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="deals")
    title = models.CharField(max_length=limits.DEAL_TITLE_MAX)
    loan_amount = models.DecimalField(**limits.MONEY_COLUMN, null=True, blank=True)
    loan_type = models.CharField(max_length=20, choices=choices(LOAN_TYPES), default="tbd")
    transaction_type = models.CharField(max_length=20, choices=choices(TRANSACTION_TYPES), default="tbd")
    business_plan = models.CharField(max_length=20, choices=choices(BUSINESS_PLANS), blank=True, default="")
    description = models.TextField(blank=True, default="")
    estimated_close_date = models.DateField(null=True, blank=True)
    # The account's own companies (deals.companies.services checks the account): who sponsors the deal
    # and the entity that borrows. A company removed leaves the deal without one.
    sponsor = models.ForeignKey("deals.Company", null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="sponsored_deals")
    borrower = models.ForeignKey("deals.Company", null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="borrowed_deals", help_text="The borrowing entity.")
    archived = models.BooleanField(default=False)
    archived_at = models.DateTimeField(null=True, blank=True)
    # The team's own id of the deal (a CRM id, a file number), unique in its account when given: the key
    # a history import recognises a deal by, so importing a file again creates nothing (deals/history).
    external_id = models.CharField(max_length=limits.DEAL_EXTERNAL_ID_MAX, blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Where the deal is in its account's pipeline (deals.pipeline), and who on the team runs it: a member
    # of the account, its creator unless changed. A new deal starts in the account's first stage.
    stage = models.ForeignKey("deals.Stage", on_delete=models.RESTRICT, related_name="deals")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Bumped by every change to the deal, its properties or financials; lender searches remember
    # the version they ranked, so a changed deal is never served a stale search.
    version = models.PositiveIntegerField(default=1)

    objects = DealQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(F("account"), F("archived"), DEAL_SORT_VALUES[key], F("id"), name=f"deals_deal_list_{name}")
            for key, name in (("created_at", "created"), ("updated_at", "updated"), ("title", "title"),
                              ("loan_amount", "amount"), ("estimated_close_date", "close"))
        ] + [models.Index(fields=["account", "archived", "stage"], name="deals_deal_stage")]
        constraints = [
            models.UniqueConstraint(fields=["account", "external_id"], condition=~Q(external_id=""),
                                    name="uniq_deal_external_id_per_account"),
        ]

    def __str__(self) -> str:
        return self.title

    def save(self, *args, **kwargs) -> None:
        # A deal always has a stage and, from the start, an owner: its creator unless one was given.
        if self.stage_id is None and self.account_id is not None:
            self.stage = Stage.objects.first_of(self.account_id)
        if self._state.adding and self.owner_id is None:
            self.owner_id = self.created_by_id
        super().save(*args, **kwargs)


class DealProperty(models.Model):
    deal = models.ForeignKey(Deal, on_delete=models.CASCADE, related_name="properties")
    name = models.CharField(max_length=limits.PROPERTY_NAME_MAX)
    address = models.CharField(max_length=limits.PROPERTY_ADDRESS_MAX, blank=True, default="")
    city = models.CharField(max_length=limits.PROPERTY_CITY_MAX, blank=True, default="")
    state = models.CharField(max_length=2, choices=[(s, s) for s in US_STATES], blank=True, default="")
    zip = models.CharField(max_length=limits.ZIP_MAX, blank=True, default="")
    asset_type = models.CharField(max_length=32, choices=choices(ASSET_TYPES), blank=True, default="")
    units = models.PositiveIntegerField(null=True, blank=True)
    square_footage = models.PositiveIntegerField(null=True, blank=True)
    year_built = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "deal properties"

    def __str__(self) -> str:
        return self.name


class DealFinancials(models.Model):
    deal = models.OneToOneField(Deal, on_delete=models.CASCADE, related_name="financials")
    purchase_price = models.DecimalField(**limits.MONEY_COLUMN, null=True, blank=True)
    estimated_value = models.DecimalField(**limits.MONEY_COLUMN, null=True, blank=True)
    in_place_noi = models.DecimalField(**limits.MONEY_COLUMN, null=True, blank=True)
    stabilized_noi = models.DecimalField(**limits.MONEY_COLUMN, null=True, blank=True)
    existing_debt = models.DecimalField(**limits.MONEY_COLUMN, null=True, blank=True)
    cash_out = models.DecimalField(**limits.MONEY_COLUMN, null=True, blank=True)
    interest_rate = models.DecimalField(
        **limits.INTEREST_RATE_COLUMN, null=True, blank=True, help_text="Annual rate in percent, for DSCR."
    )
    amortization_years = models.PositiveSmallIntegerField(default=limits.AMORTIZATION_YEARS_DEFAULT)
    interest_only_months = models.PositiveSmallIntegerField(
        default=0, help_text="Interest-only months at the start of the requested loan (0: it amortizes from the "
                             "first payment).")
    # Read from the deal's rent roll and T-12 and applied from them (deals.documents.figures; each applied
    # figure's source is a FigureSource): a year's effective gross income and operating expenses, the
    # occupied units' share in percent, and the occupied units' rent over a year.
    effective_gross_income = models.DecimalField(**limits.MONEY_COLUMN, null=True, blank=True)
    operating_expenses = models.DecimalField(**limits.MONEY_COLUMN, null=True, blank=True)
    occupancy = models.DecimalField(max_digits=5, decimal_places=2, null=True, blank=True,
                                    help_text="Occupied units in percent of the units.")
    in_place_rent = models.DecimalField(**limits.MONEY_COLUMN, null=True, blank=True,
                                        help_text="The occupied units' rent over a year.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "deal financials"

    def __str__(self) -> str:
        return f"Financials of {self.deal.title}"

    @property
    def noi(self) -> Decimal | None:
        """The NOI the ratios use: in place, else stabilized."""
        return self.in_place_noi or self.stabilized_noi

    @property
    def ltv(self) -> Decimal | None:
        """Loan-to-value in percent: loan / (estimated value, else purchase price)."""
        value = self.estimated_value or self.purchase_price
        loan = self.deal.loan_amount
        if not value or not loan:
            return None
        return (loan / value * 100).quantize(Decimal("0.01"))

    @property
    def debt_yield(self) -> Decimal | None:
        """NOI / loan amount, percent (deals.finance.debt_yield)."""
        return finance.debt_yield(self.noi, self.deal.loan_amount)

    @property
    def annual_debt_service(self) -> Decimal | None:
        """The amortizing annual debt service (after any interest-only period)."""
        loan = self.deal.loan_amount
        if not loan or self.interest_rate is None:
            return None
        return finance.amortizing_annual_payment(loan, self.interest_rate, self.amortization_years * 12)

    @property
    def interest_only_debt_service(self) -> Decimal | None:
        """The annual debt service during the interest-only period; None without one."""
        loan = self.deal.loan_amount
        if not loan or self.interest_rate is None or not self.interest_only_months:
            return None
        return finance.interest_only_annual_payment(loan, self.interest_rate)

    @property
    def coverage(self) -> dict[str, Decimal | str | None]:
        """dscr (what lenders underwrite for this loan type), dscr_basis, dscr_interest_only and
        dscr_amortizing (deals.finance.coverage), computed once per instance."""
        cached = self.__dict__.get("_coverage")
        key = (self.noi, self.deal.loan_amount, self.deal.loan_type, self.interest_rate, self.amortization_years,
               self.interest_only_months)
        if cached is None or cached[0] != key:
            cached = (key, finance.coverage(self.noi, self.deal.loan_type,
                                            amortizing_service=self.annual_debt_service,
                                            interest_only_service=self.interest_only_debt_service))
            self.__dict__["_coverage"] = cached
        return cached[1]

    @property
    def dscr(self) -> Decimal | None:
        """Debt service coverage lenders underwrite: NOI (in place, else stabilized) / the interest-only
        or the amortizing annual debt service (deals.finance.underwritten_basis)."""
        return self.coverage["dscr"]

    @property
    def dscr_basis(self) -> str | None:
        return self.coverage["dscr_basis"]

    @property
    def dscr_interest_only(self) -> Decimal | None:
        return self.coverage["dscr_interest_only"]

    @property
    def dscr_amortizing(self) -> Decimal | None:
        return self.coverage["dscr_amortizing"]


# Every model of the app, its rooms' included, so Django registers them with this module.
__all__ = ["Company", "Contact", "Deal", "DealFinancials", "DealProperty", "Document", "DocumentVersion",
           "FigureSource", "HistoryImport", "InboundEmail", "LenderMatch", "LenderSearch", "Note", "OutboundEmail",
           "OutreachEvent", "OutreachSend", "OutreachTemplate", "PackageLink", "Placement", "Stage", "StageChange",
           "TermSheet"]
