from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from rest_framework import serializers

from lenders import program_terms
from lenders.models import AssetType, Lender, LenderProgram
from lenders.program_terms import TERM_FIELDS
from lenders.selectors import DirectoryFilters
from lev import limits
from lev.enums import (
    ASSET_TYPES,
    CAPITAL_SOURCE_TYPES,
    LENDER_TYPES,
    LOAN_TYPES,
    POSITIONS,
    PROGRAM_LOAN_TYPES,
    RATE_INDEXES,
    RATE_TYPES,
    RECOURSE_TYPES,
    US_STATES,
)
from lev.limits import MONEY_COLUMN, SEARCH_TEXT_MAX
from lev.serializers import (
    BasisPointsField,
    EnumField,
    EnumListField,
    StrictSerializer,
    TextRegexField,
    _messages,
    cursor_field,
    decimal_field,
    money_field,
    page_field,
    page_size_field,
    text_field,
)
from lev.vocabulary import LOAN_AMOUNT_RULE


class DirectoryQuerySerializer(StrictSerializer):
    query = text_field(max_length=SEARCH_TEXT_MAX, help_text="Words in the lender's name or city.")
    lender_type = EnumField(LENDER_TYPES, required=False)
    state = EnumField(US_STATES, required=False,
                      help_text="Headquarters state, 2-letter code; a state's full name (Texas) is accepted too.")
    asset_type = EnumField(ASSET_TYPES, required=False)
    loan_type = EnumField(LOAN_TYPES, required=False)
    loan_amount = money_field(
        allow_null=False, loan_amount=True,
        help_text="A loan size one active program must cover, US dollars: " + LOAN_AMOUNT_RULE + ".",
    )
    min_loan_amount = money_field(positive=False, allow_null=False)
    max_loan_amount = money_field(positive=False, allow_null=False)
    cursor = cursor_field()
    page = page_field(help_text="Deprecated: follow `next` (a cursor) instead; a page number reads the lenders "
                                "before its page.")
    page_size = page_size_field()

    def to_filters(self) -> DirectoryFilters:
        data = {k: v for k, v in self.validated_data.items() if k not in ("cursor", "page", "page_size")}
        return DirectoryFilters(**data)


OWN_HELP = "The account's own (added by its team, read by it alone); false: the directory's."


class LenderListItemSerializer(serializers.ModelSerializer):
    own = serializers.BooleanField(read_only=True, help_text=OWN_HELP)
    program_count = serializers.IntegerField(read_only=True)
    min_loan = serializers.DecimalField(**MONEY_COLUMN, read_only=True, coerce_to_string=False)
    max_loan = serializers.DecimalField(**MONEY_COLUMN, read_only=True, coerce_to_string=False)

    class Meta:
        model = Lender
        fields = ("id", "name", "lender_types", "city", "state", "program_count", "min_loan", "max_loan", "own")


class LenderProgramSerializer(serializers.ModelSerializer):
    """A program, with its terms (each null or "" when the program does not state it): rate_type
    (fixed, floating or ""), rate_index, spread_min_bps/spread_max_bps (whole basis points over the index),
    fixed_rate_min/fixed_rate_max and min_debt_yield (percents, 6.25 = 6.25 %), term_months_min/max,
    amortization_years, interest_only_months."""

    own = serializers.BooleanField(read_only=True, help_text=OWN_HELP)

    class Meta:
        model = LenderProgram
        fields = ("id", "title", "status", "loan_types", "recourse_types", "min_loan_amount", "max_loan_amount",
                  "capital_source_type", "positions", "sponsor_states", "asset_types", "max_ltv", "min_dscr",
                  *TERM_FIELDS, "own")


class LenderSerializer(serializers.ModelSerializer):
    own = serializers.BooleanField(read_only=True, help_text=OWN_HELP)
    programs = LenderProgramSerializer(many=True, read_only=True)

    class Meta:
        model = Lender
        fields = ("id", "name", "website", "city", "state", "about", "lender_types", "category", "own", "programs")


class AssetTypeSerializer(serializers.ModelSerializer):
    class Meta:
        model = AssetType
        fields = ("slug", "name")


# --- input: an account's own lenders and programs ---------------------------------------------------------
def _some_of(values: tuple[str, ...], least: int | None = None, **kwargs) -> EnumListField:
    """Some of `values` (each at most once makes at most all of them), at least `least` when given."""
    return EnumListField(values, min_length=least, max_length=len(values), required=False, allow_null=True,
                         **kwargs)


class LenderInputSerializer(StrictSerializer):
    """A lender of the account's own (a lender the directory lacks)."""

    name = text_field(max_length=limits.LENDER_NAME_MAX, required=True, allow_blank=False,
                      help_text="The lender's name: not a directory lender's (add programs to that one instead).")
    website = TextRegexField(
        limits.WEBSITE_PATTERN, max_length=limits.LENDER_WEBSITE_MAX, required=False, allow_blank=True,
        allow_null=True, help_text="https://…",
        error_messages=_messages(invalid="must be a web address starting with http:// or https:// "
                                         "(https://example.com)",
                                 max_length=f"must be at most {limits.LENDER_WEBSITE_MAX} characters"))
    city = text_field(max_length=limits.LENDER_CITY_MAX, help_text="Headquarters city.")
    state = EnumField(US_STATES, required=False, allow_blank=True, allow_null=True,
                      help_text="Headquarters state, 2-letter code (or the state's name).")
    about = text_field(max_length=limits.LENDER_ABOUT_MAX, help_text="What the team knows of the lender.")
    lender_types = _some_of(LENDER_TYPES)


def term_number(help_text: str, least: int | Decimal, most: int | Decimal) -> serializers.DecimalField:
    """A number from `least` to `most` (the bounds the schema states, refused in lenders.program_terms'
    words); within them lenders.program_terms judges it as sent — a fraction sent for a percent, a spread
    or a count that is not whole, a min DSCR of 0 — with the words every door that writes a program uses."""
    return serializers.DecimalField(
        max_digits=None, decimal_places=None, required=False, allow_null=True, coerce_to_string=False,
        min_value=Decimal(least), max_value=Decimal(most), help_text=help_text,
        error_messages=_messages(invalid="must be a number", max_value=program_terms.at_most(most),
                                 min_value=program_terms.MORE_THAN_ZERO if least else program_terms.ZERO_OR_MORE))


def percent(help_text: str, name: str) -> serializers.DecimalField:
    """A percent of lenders.program_terms.PERCENTS, as the API takes every percent (lev.serializers): a
    fraction sent for it refused with the value probably meant (the schema states that gap), rounded to
    its column's places."""
    floor, most, places = program_terms.PERCENTS[name]
    return decimal_field(max_value=most, decimal_places=places, max_digits=places + 3, help_text=help_text,
                         fraction_floor=floor)


def whole_number(help_text: str, name: str) -> serializers.IntegerField:
    """A whole number within lenders.program_terms' bounds for `name`, refused in its words."""
    least, most = program_terms.WHOLE_NUMBERS[name]
    # A spread's field also says which basis points a percent such as 2.85 meant (285).
    kind, extra = ((BasisPointsField, {"sentence_case": True}) if name.endswith("_bps")
                   else (serializers.IntegerField, {}))
    return kind(
        required=False, allow_null=True, min_value=least, max_value=most, help_text=help_text,
        error_messages=_messages(invalid=program_terms.WHOLE_NUMBER, max_value=program_terms.at_most(most),
                                 min_value=program_terms.at_least(least) if least else program_terms.ZERO_OR_MORE,
                                 max_string_length=program_terms.at_most(most)),
        **extra)


# Decimal places each judged number is stored with (the rest are whole numbers).
_PLACES = {"min_dscr": limits.DSCR_INPUT_COLUMN["decimal_places"]}


class LenderProgramInputSerializer(StrictSerializer):
    """A program of the account's own. Percents as percents (75 = 75 %), spreads in whole basis points."""

    title = text_field(max_length=limits.PROGRAM_TITLE_MAX, required=True, allow_blank=False,
                       help_text="The program's name, e.g. Bridge - Multifamily.")
    status = EnumField(tuple(LenderProgram.Status.values), required=False, help_text="active (default) or inactive.")
    # What a program lends on, in what position: at least one each, or no deal could ever match it.
    loan_types = _some_of(PROGRAM_LOAN_TYPES, 1)
    recourse_types = _some_of(RECOURSE_TYPES)
    min_loan_amount = money_field(positive=False)
    max_loan_amount = money_field(positive=False)
    capital_source_type = EnumField(CAPITAL_SOURCE_TYPES, required=False, allow_blank=True, allow_null=True)
    positions = _some_of(POSITIONS, 1, help_text="Senior when left out.")
    sponsor_states = _some_of(US_STATES, help_text="Empty: nationwide.")
    asset_types = _some_of(ASSET_TYPES, 1)
    max_ltv = percent("Percent (75 = 75 %).", "max_ltv")
    min_dscr = term_number("A ratio above 0 (1.25), kept to 2 decimals.", limits.PROGRAM_MIN_DSCR_LEAST,
                           limits.DSCR_INPUT_MAX)
    rate_type = EnumField(RATE_TYPES, required=False, allow_blank=True, allow_null=True)
    rate_index = EnumField(RATE_INDEXES, required=False, allow_blank=True, allow_null=True,
                           help_text="The index a floating rate is priced over.")
    spread_min_bps = whole_number("Whole basis points over the index (275 = 2.75 %).", "spread_min_bps")
    spread_max_bps = whole_number("Whole basis points over the index.", "spread_max_bps")
    fixed_rate_min = percent("Percent per year (6.25 = 6.25 %).", "fixed_rate_min")
    fixed_rate_max = percent("Percent per year.", "fixed_rate_max")
    term_months_min = whole_number("Whole months.", "term_months_min")
    term_months_max = whole_number("Whole months.", "term_months_max")
    amortization_years = whole_number("Whole years.", "amortization_years")
    interest_only_months = whole_number("Whole months.", "interest_only_months")
    min_debt_yield = percent("NOI / loan, percent.", "min_debt_yield")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        errors = program_terms.field_errors(attrs)
        if errors:
            raise serializers.ValidationError(errors)
        for name, value in attrs.items():
            if value is None or not isinstance(value, Decimal):
                continue
            if name in _PLACES:
                attrs[name] = value.quantize(Decimal(1).scaleb(-_PLACES[name]), rounding=ROUND_HALF_UP)
        return attrs
