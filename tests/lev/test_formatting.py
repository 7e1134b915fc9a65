"""Figures as the admin shows them (lev.formatting) and the unit-aware admin fields (lev.admin_forms)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django import forms

from lev import formatting
from lev.admin_forms import EnumListField, UnitInput, money_field, percent_field
from lev.enums import US_STATES


@pytest.mark.parametrize(("value", "text"), [
    (Decimal("18500000"), "$18,500,000"), (Decimal("18500000.00"), "$18,500,000"), (1250.5, "$1,250.50"),
    (Decimal("-5000"), "-$5,000"), (0, "$0"), (None, "—"), ("", "—"), ("abc", "—"), (Decimal("NaN"), "—"),
])
def test_money(value, text):
    assert formatting.money(value) == text


def test_percent_multiple_and_labels():
    assert formatting.percent(Decimal("71.15")) == "71.15%"
    assert formatting.percent(Decimal("65.00")) == "65%" and formatting.percent(72.5, 1) == "72.5%"
    assert formatting.multiple(Decimal("1.2")) == "1.20x" and formatting.multiple(None) == "—"
    assert formatting.label("heavy_bridge") == "Heavy Bridge" and formatting.label("cmbs") == "CMBS"
    assert formatting.label("TX") == "TX"
    assert formatting.labels(["office", "multifamily"], ("multifamily", "office")) == "Multifamily, Office"
    assert formatting.labels([]) == "—"


def test_sponsor_states_read_as_coverage():
    assert formatting.coverage([]) == "Nationwide" and formatting.coverage(None) == "Nationwide"
    assert formatting.coverage(["TX", "OK", "LA", "TX"]) == "LA, OK, TX"
    assert formatting.coverage(US_STATES) == "AK, AL, AR, AZ, CA, CO, CT, DC +44 more"


class Form(forms.Form):
    amount = money_field()
    rate = percent_field(label="Rate", max_value=Decimal(30), decimal_places=3)
    states = EnumListField(("TX", "OK", "LA"))


def test_money_and_percent_fields_read_what_a_person_types():
    form = Form({"amount": " $18,500,000.50 ", "rate": "6.25 %", "states": ["LA", "TX"]})
    assert form.is_valid(), form.errors
    assert form.cleaned_data == {"amount": Decimal("18500000.50"), "rate": Decimal("6.25"), "states": ["TX", "LA"]}
    refused = Form({"amount": "18.5M", "rate": "31", "states": ["Texas"]})
    assert not refused.is_valid()
    assert refused.errors["amount"] == ["Enter a number, e.g. 18,500,000 (US dollars)."]
    assert refused.errors["rate"] == ["Ensure this value is less than or equal to 30."]
    assert refused.errors["states"] == ["Select a valid choice. Texas is not one of the available choices."]


def test_a_money_input_shows_the_stored_amount_with_separators():
    html = UnitInput(prefix="$ ", grouped=True).render("amount", Decimal("18500000.00"))
    assert html.startswith('<span class="lev-unit">$ <input') and 'value="18,500,000"' in html
    assert 'value="1,250.50"' in UnitInput(grouped=True).render("amount", Decimal("1250.5"))
    assert 'value="6.25"' in UnitInput(suffix=" %").render("rate", Decimal("6.250"))
    assert 'value="18.5M"' in UnitInput(grouped=True).render("amount", "18.5M")  # a refused entry, shown back


def test_whole_dollars_and_spreads_read_as_a_deal_team_writes_them():
    assert formatting.dollars(Decimal("1352487.49")) == "$1,352,487"
    assert formatting.dollars(Decimal("138750")) == "$138,750" and formatting.dollars(None) == "—"
    assert formatting.basis_points(350) == "3.50%" and formatting.basis_points(285) == "2.85%"
    assert formatting.basis_points(None) == "—"
