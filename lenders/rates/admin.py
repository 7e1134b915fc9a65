"""Admin of market rates (registered by an import in lenders/admin.py): each index's dated rates.

Global (not tenant-scoped): market data every account's comparisons read, so model permissions decide
who may change it (superusers; staff of an account only see the list when given the view permission),
and only superusers delete. A CSV of many dates is imported with `manage.py import_market_rates`."""

from __future__ import annotations

from decimal import Decimal

from django import forms
from django.contrib import admin

from lenders.rates.models import MarketRate
from lev import limits
from lev.accounts.admin_bases import ADMIN_CSS, GlobalAdmin
from lev.admin_forms import percent_field
from lev.enums import RATE_INDEX_NAMES
from lev.formatting import percent


class MarketRateForm(forms.ModelForm):
    rate = percent_field(label="Rate", max_value=Decimal(limits.RATE_PERCENT_MAX), **limits.RATE_COLUMN,
                         help_text="Percent per year (4.31 = 4.31 %).")

    class Meta:
        model = MarketRate
        fields = ["index", "on", "rate", "source"]


@admin.register(MarketRate)
class MarketRateAdmin(GlobalAdmin):
    """Each index's rate by date. A floating quote is compared with its index's latest rate dated on or
    before the quote's date.

    Global (not tenant-scoped): market data every account's comparisons read."""

    form = MarketRateForm
    # The latest day's rates of every index first, as a desk reads a rate sheet.
    list_display = ["on", "name", "rate_text", "source", "updated_at"]
    list_display_links = ["on", "name"]
    list_filter = ["index", "source"]
    date_hierarchy = "on"
    search_fields = ["index", "source"]
    ordering = ["-on", "index"]
    readonly_fields = ["created_at", "updated_at"]
    list_per_page = 100

    class Media:
        css = ADMIN_CSS

    @admin.display(description="Index", ordering="index")
    def name(self, row: MarketRate) -> str:
        return RATE_INDEX_NAMES.get(row.index, row.index)

    @admin.display(description="Rate (percent per year)", ordering="rate")
    def rate_text(self, row: MarketRate) -> str:
        return percent(row.rate, 3)

    def get_changeform_initial_data(self, request):
        return {"source": "admin", **super().get_changeform_initial_data(request)}
