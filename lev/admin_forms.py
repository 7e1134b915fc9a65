"""Admin form fields: money typed and shown as money, percentages and multiples with their unit,
and enum lists edited as checkboxes (stored as JSON lists of slugs). Server-side widgets only:
nothing is loaded from outside the site."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin
from django.utils.html import format_html

from lev import limits
from lev.formatting import label_choices, labels
from lev.vocabulary import percent_fraction_message, sentence

# What a person may type around a number: "$18,500,000", "18 500 000", "71.5 %", "1.25x".
_DECORATION = re.compile(r"[\s,$%xX\u00a0]")


class UnitInput(forms.TextInput):
    """A text input with its unit beside it ($ before, % or x after). Text, not type=number, so
    "18,500,000" is accepted as typed and the stored value is shown with thousands separators."""

    def __init__(self, *, prefix: str = "", suffix: str = "", grouped: bool = False, attrs=None):
        super().__init__(attrs={"inputmode": "decimal", "class": "lev-unit-input", **(attrs or {})})
        self.prefix, self.suffix, self.grouped = prefix, suffix, grouped

    def format_value(self, value: Any) -> str | None:
        if value is None or value == "":
            return None
        if isinstance(value, Decimal) and self.grouped:
            whole = value == value.to_integral_value()
            return f"{value:,.0f}" if whole else f"{value:,.2f}"
        if isinstance(value, Decimal):  # 6.250 -> 6.25, 77.00 -> 77
            return format(value.normalize(), "f")
        return str(value)  # what the person typed, shown back with its error

    def render(self, name, value, attrs=None, renderer=None):
        field = super().render(name, value, attrs, renderer)
        return format_html('<span class="lev-unit">{}{}{}</span>', self.prefix, field, self.suffix)


class UnitDecimalField(forms.DecimalField):
    """A DecimalField that ignores the unit and separators a person types around the number."""

    def __init__(self, *, unit_hint: str, fraction_floor: Decimal | None = None, **kwargs):
        self.fraction_floor = fraction_floor
        kwargs.setdefault("required", False)
        kwargs.setdefault("error_messages", {"invalid": f"Enter a number, e.g. {unit_hint}."})
        super().__init__(**kwargs)

    def to_python(self, value):
        if isinstance(value, str):
            value = _DECORATION.sub("", value)
        return super().to_python(value)

    def validate(self, value):
        # A percent typed as a fraction (0.0725 for 7.25 %): the API's rule and words (lev.vocabulary).
        if value is not None and self.fraction_floor is not None:
            message = percent_fraction_message(value, floor=self.fraction_floor, maximum=self.max_value,
                                               places=self.decimal_places)
            if message is not None:
                raise forms.ValidationError(sentence(message), code="fraction")
        super().validate(value)


def money_field(*, label: str | None = None, positive: bool = True, help_text: str = "") -> UnitDecimalField:
    """US dollars within the API's bounds (lev.limits); `positive`: more than 0, else 0 or more."""
    return UnitDecimalField(
        label=label, help_text=help_text, unit_hint="18,500,000 (US dollars)",
        max_digits=limits.MONEY_MAX_DIGITS, decimal_places=limits.MONEY_DECIMAL_PLACES,
        min_value=limits.MONEY_MIN_POSITIVE if positive else Decimal(0), max_value=limits.MONEY_MAX,
        widget=UnitInput(prefix="$ ", grouped=True),
    )


def percent_field(*, label: str, max_value: Decimal,
                  decimal_places: int = limits.LTV_PERCENT_COLUMN["decimal_places"],
                  max_digits: int = limits.LTV_PERCENT_COLUMN["max_digits"], help_text: str = "",
                  fraction_floor: Decimal | None = None) -> UnitDecimalField:
    """A percent within `max_value`, with the digits and decimal places of its column (lev.limits: a
    `*_COLUMN` passed as keywords; an LTV's by default); `fraction_floor` as the API's (lev.limits)."""
    return UnitDecimalField(
        label=label, help_text=help_text, fraction_floor=fraction_floor, unit_hint="72.5 (percent)",
        min_value=Decimal(0), max_value=max_value,
        max_digits=max_digits, decimal_places=decimal_places, widget=UnitInput(suffix=" %"),
    )


def multiple_field(*, label: str, max_value: Decimal, help_text: str = "") -> UnitDecimalField:
    return UnitDecimalField(
        label=label, help_text=help_text, unit_hint="1.25", min_value=Decimal(0), max_value=max_value,
        **limits.DSCR_INPUT_COLUMN, widget=UnitInput(suffix=" x"),
    )


class EnumListField(forms.MultipleChoiceField):
    """A JSON list of enum slugs as checkboxes; the cleaned list follows the enum's order, so the
    stored list and the bit mask built from it (lev.enums.mask_of) always agree."""

    def __init__(self, universe: tuple[str, ...], *, compact: bool = False, **kwargs):
        self.universe = universe
        kwargs.setdefault("required", False)
        css = "lev-checkboxes lev-checkboxes--compact" if compact else "lev-checkboxes"
        super().__init__(choices=label_choices(universe), widget=forms.CheckboxSelectMultiple(attrs={"class": css}),
                         **kwargs)

    def prepare_value(self, value):
        # A stored list may hold a value the enum no longer has: it shows unchecked (and is dropped
        # on save) rather than failing the page.
        return [v for v in (value or []) if v in self.universe]

    def clean(self, value) -> list[str]:
        chosen = set(super().clean(value))
        return [v for v in self.universe if v in chosen]


def _in_words(field: str, universe: tuple[str, ...], title: str):
    def display(self, obj) -> str:
        return labels(getattr(obj, field, None), universe)
    display.__name__ = f"{field}_in_words"
    return admin.display(description=title)(display)


class ListsInWordsForViewers:
    """For a ModelAdmin or an inline whose form edits enum lists (EnumListField): whoever may only view
    the page reads those lists in words ("Multifamily, Office"), as the checkboxes label them, rather
    than the admin's read-only JSON (["multifamily", "office"]). `words_fields`: {field: (universe,
    title)}; each gets a read-only `<field>_in_words` shown in its place."""

    words_fields: dict[str, tuple[tuple[str, ...], str]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for field, (universe, title) in cls.words_fields.items():
            setattr(cls, f"{field}_in_words", _in_words(field, universe, title))

    def shows_words(self, request, obj=None) -> bool:
        return not self.has_change_permission(request, obj)

    def _swapped(self, names):
        swapped, seen = [], set()
        for name in names:
            if isinstance(name, (list, tuple)):
                swapped.append(tuple(self._swapped(name)))
                continue
            name = f"{name}_in_words" if name in self.words_fields else name
            if name not in seen:
                seen.add(name)
                swapped.append(name)
        return swapped

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if not self.words_fields or not self.shows_words(request, obj):
            return fieldsets
        return [(title, {**options, "fields": self._swapped(options["fields"])}) for title, options in fieldsets]

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if self.words_fields and self.shows_words(request, obj):
            fields += [f"{name}_in_words" for name in self.words_fields if f"{name}_in_words" not in fields]
        return fields
