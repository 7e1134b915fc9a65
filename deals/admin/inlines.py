"""The deal page's property and financials inlines, saved through the deal services (see
`DealAdmin.save_formset` in deals/admin/deal.py)."""

from __future__ import annotations

from django.contrib import admin

from deals.admin.forms import DealFinancialsForm, DealPropertyForm
from deals.models import DealFinancials, DealProperty
from lev import formatting


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

