"""The deal admin's forms: the API's bounds (lev.limits), money typed and shown as money."""

from __future__ import annotations

from django import forms
from django.core.validators import RegexValidator

from deals import services
from deals.models import Deal, DealFinancials, DealProperty
from lev import formatting, limits
from lev.admin_forms import money_field, percent_field


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

