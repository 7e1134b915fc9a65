"""The admin's "Record a quote" form: a lender's term sheet, copied from its email by the deal team.

The form only draws the fields (labels in words, the index by its name, today's date) and reads what
a person types ("$18,500,000" or "18.5M" for the loan). Whether the quote is valid is the API's
business: the values go through the REST endpoint's `TermSheetInputSerializer` and then
`services.term_sheet_add` — the same bounds, the same rate rules, the same "quoted_on" rules and
refusals as every other door — and their messages are shown beside the fields, in words.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from django import forms
from django.utils import timezone
from django.utils.text import capfirst

from deals.placements.serializers import TermSheetInputSerializer
from lev import limits
from lev.enums import QUOTE_TYPES, RATE_INDEX_NAMES, RATE_INDEXES, RECOURSE_TYPES
from lev.errors import ApplicationError, BusinessRuleViolation, ValidationFailed
from lev.formatting import day, label
from lev.vocabulary import money_from_text

NONE_CHOSEN = ("", "—")
# The form's sections, in the order a term sheet reads (the template draws one fieldset each).
SECTIONS = (
    ("The quote", ("quote_type", "loan_amount", "quoted_on", "expires_on")),
    ("The rate", ("rate_type", "fixed_rate", "rate_index", "spread_bps")),
    ("Terms", ("term_months", "amortization_months", "interest_only_months", "recourse", "prepayment")),
    ("Underwriting and fees", ("max_ltv", "min_dscr", "origination_fee_percent", "exit_fee_percent")),
    ("Notes", ("notes",)),
)
_ISO_DAY = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")


def _number(step: str = "any", **attrs: Any) -> forms.NumberInput:
    return forms.NumberInput(attrs={"step": step, "inputmode": "decimal", **attrs})


def _text(*, label_text: str, help_text: str = "", widget: forms.Widget | None = None,
          required: bool = False) -> forms.CharField:
    """A field kept as the text typed: the serializer reads it (and says what is wrong with it)."""
    return forms.CharField(label=label_text, help_text=help_text, required=required, widget=widget,
                           error_messages={"required": "Enter this: it is required."})


def words(message: str) -> str:
    """An API message said to a person: a sentence, the rate type in words, days as "Nov 25, 2026"."""
    text = str(message).replace("a fixed rate_type", "a fixed rate").replace("a floating rate_type", "a floating rate")
    text = text.replace("; send ", "; enter ")
    text = _ISO_DAY.sub(lambda m: day(dt.date.fromisoformat(m[1])), text)
    if text.startswith("is "):
        text = "This " + text
    text = capfirst(text)
    return text if text.endswith((".", "?", "!")) else text + "."


class RecordQuoteForm(forms.Form):
    quote_type = forms.ChoiceField(label="Kind of quote", initial="term_sheet",
                                   choices=[(v, v.replace("_", " ").capitalize()) for v in QUOTE_TYPES])
    loan_amount = _text(label_text="Loan amount", required=True,
                        help_text="US dollars, as the term sheet says it: 18500000, $18,500,000 or 18.5M.",
                        widget=forms.TextInput(attrs={"inputmode": "decimal", "autocomplete": "off"}))
    quoted_on = forms.CharField(label="Quoted on", required=False, widget=forms.DateInput(attrs={"type": "date"}),
                                help_text="The day the lender quoted: today, or an earlier day since the deal "
                                          "was sent.")
    expires_on = forms.CharField(label="Expires on", required=False, widget=forms.DateInput(attrs={"type": "date"}),
                                 help_text="When the quote lapses, if it says.")
    rate_type = forms.ChoiceField(label="Rate", choices=[("fixed", "Fixed"), ("floating", "Floating")],
                                  initial="fixed", widget=forms.RadioSelect,
                                  error_messages={"required": "Choose fixed or floating."})
    fixed_rate = _text(label_text="Fixed rate (% a year)", help_text="A fixed quote: 6.125 for 6.125%.",
                       widget=_number("0.001", min="0", max=str(limits.RATE_PERCENT_MAX)))
    rate_index = forms.ChoiceField(label="Index", required=False,
                                   choices=[NONE_CHOSEN, *((v, RATE_INDEX_NAMES[v]) for v in RATE_INDEXES)],
                                   help_text="A floating quote: the market rate it is priced over.")
    spread_bps = _text(label_text="Spread (basis points)", help_text="A floating quote: 275 for 2.75% over the index.",
                       widget=_number("1", min="0", max=str(limits.SPREAD_BPS_MAX)))
    term_months = _text(label_text="Term (months)", help_text="120 for ten years.",
                        widget=_number("1", min="1", max=str(limits.TERM_MONTHS_MAX)))
    amortization_months = _text(label_text="Amortization (months)",
                                help_text="360 for thirty years; empty: interest-only for the whole term.",
                                widget=_number("1", min="1", max=str(limits.AMORTIZATION_MONTHS_MAX)))
    interest_only_months = _text(label_text="Interest-only (months)", help_text="Empty: none.",
                                 widget=_number("1", min="0", max=str(limits.TERM_MONTHS_MAX)))
    recourse = forms.ChoiceField(label="Recourse", required=False,
                                 choices=[NONE_CHOSEN, *((v, label(v)) for v in RECOURSE_TYPES)])
    prepayment = _text(label_text="Prepayment", help_text="e.g. yield maintenance, or 3-2-1 step-down.",
                       widget=forms.TextInput(attrs={"maxlength": str(limits.PREPAYMENT_TEXT_MAX)}))
    max_ltv = _text(label_text="Max loan-to-value (%)", help_text="75 for 75%.",
                    widget=_number("0.01", min="0", max=str(limits.LTV_PERCENT_MAX)))
    min_dscr = _text(label_text="Min debt service coverage", help_text="1.25 for 1.25x.",
                     widget=_number("0.01", min="0", max=str(limits.DSCR_INPUT_MAX)))
    origination_fee_percent = _text(label_text="Origination fee (%)", help_text="Paid at closing: 1 for 1%.",
                                    widget=_number("0.001", min="0", max=str(limits.FEE_PERCENT_MAX)))
    exit_fee_percent = _text(label_text="Exit fee (%)", help_text="Paid at repayment: 0.5 for 0.5%.",
                             widget=_number("0.001", min="0", max=str(limits.FEE_PERCENT_MAX)))
    notes = _text(label_text="Notes", help_text="Conditions, rate lock, anything else the term sheet says.",
                  widget=forms.Textarea(attrs={"rows": 4, "maxlength": str(limits.TERM_SHEET_NOTES_MAX)}))

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["quoted_on"].initial = timezone.localdate().isoformat()
        self.fields["quoted_on"].widget.attrs["max"] = timezone.localdate().isoformat()
        self.validated: dict[str, Any] = {}

    def sections(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(title, [self[name] for name in names]) for title, names in SECTIONS]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.errors:
            return cleaned
        data = {name: value for name, value in cleaned.items() if value not in ("", None)}
        amount = data.get("loan_amount")
        if amount is not None and money_from_text(amount) is not None:
            data["loan_amount"] = str(money_from_text(amount))  # "$18,500,000", "18.5M"
        serializer = TermSheetInputSerializer(data=data)
        if serializer.is_valid():
            self.validated = dict(serializer.validated_data)
        else:
            self.add_refusal(serializer.errors)
        return cleaned

    def add_refusal(self, fields: dict[str, Any]) -> None:
        """The errors of the API's validation, each beside its field (or above the form)."""
        for name, messages in fields.items():
            for message in messages if isinstance(messages, list | tuple) else [messages]:
                self.add_error(name if name in self.fields else None, words(message))

    def refused(self, error: ApplicationError) -> None:
        """A refusal of the service: a rule over fields (beside them), or the workflow's, in its words."""
        if isinstance(error, ValidationFailed) and error.fields:
            self.add_refusal(error.fields)
        elif isinstance(error, BusinessRuleViolation):
            self.add_error(None, error.customer_message)
        else:
            self.add_error(None, words(getattr(error, "customer_message", None) or error.message))
