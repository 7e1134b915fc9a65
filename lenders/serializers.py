from __future__ import annotations

from rest_framework import serializers

from lenders.models import AssetType, Lender, LenderProgram
from lenders.program_terms import TERM_FIELDS
from lenders.selectors import DirectoryFilters
from lev.enums import ASSET_TYPES, LENDER_TYPES, LOAN_TYPES, US_STATES
from lev.limits import MONEY_COLUMN, SEARCH_TEXT_MAX
from lev.serializers import (
    EnumField,
    StrictSerializer,
    cursor_field,
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


class LenderListItemSerializer(serializers.ModelSerializer):
    program_count = serializers.IntegerField(read_only=True)
    min_loan = serializers.DecimalField(**MONEY_COLUMN, read_only=True, coerce_to_string=False)
    max_loan = serializers.DecimalField(**MONEY_COLUMN, read_only=True, coerce_to_string=False)

    class Meta:
        model = Lender
        fields = ("id", "name", "lender_types", "city", "state", "program_count", "min_loan", "max_loan")


class LenderProgramSerializer(serializers.ModelSerializer):
    """A program, with its terms (each null or "" when the program does not state it): rate_type
    (fixed, floating or ""), rate_index, spread_min_bps/spread_max_bps (whole basis points over the index),
    fixed_rate_min/fixed_rate_max and min_debt_yield (percents, 6.25 = 6.25 %), term_months_min/max,
    amortization_years, interest_only_months."""

    class Meta:
        model = LenderProgram
        fields = ("id", "title", "status", "loan_types", "recourse_types", "min_loan_amount", "max_loan_amount",
                  "capital_source_type", "positions", "sponsor_states", "asset_types", "max_ltv", "min_dscr",
                  *TERM_FIELDS)


class LenderSerializer(serializers.ModelSerializer):
    programs = LenderProgramSerializer(many=True, read_only=True)

    class Meta:
        model = Lender
        fields = ("id", "name", "website", "city", "state", "about", "lender_types", "category", "programs")


class AssetTypeSerializer(serializers.ModelSerializer):
    class Meta:
        model = AssetType
        fields = ("slug", "name")
