"""Input and output shapes of the placement, term sheet and comparison endpoints."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from deals.finance import DSCR_BASES
from deals.placements.comparison import BEST_RULE, ORDER_RULE
from deals.placements.models import Placement, TermSheet
from deals.placements.selectors import PlacementFilters, TermSheetFilters
from deals.placements.workflow import STATUS_CHOICES, STATUSES, UPDATE_STATUSES, automatic_statuses, next_statuses
from lev import limits
from lev.enums import QUOTE_TYPES, RATE_INDEXES, RATE_TYPES, RECOURSE_TYPES
from lev.errors import ErrorCode
from lev.serializers import (
    EnumField,
    RoundedDecimalField,
    StrictSerializer,
    TextRegexField,
    _messages,
    bool_field,
    bps_field,
    date_field,
    decimal_field,
    int_field,
    money_field,
    page_field,
    page_size_field,
    text_field,
)

# The one message of the create rule over two fields (the MCP tool and the fuzzers know it too).
CREATE_TARGET_MESSAGE = "pass lender_ids, or search_id (optionally with top_n)"


def id_field(help_text: str, *, required: bool = False, allow_null: bool = False) -> serializers.IntegerField:
    return int_field(min_value=1, max_value=limits.MAX_ID, required=required, allow_null=allow_null,
                     help_text=help_text)


def rate_field(help_text: str) -> RoundedDecimalField:
    return decimal_field(
        max_value=limits.RATE_PERCENT_MAX, **limits.RATE_COLUMN, fraction_floor=limits.RATE_PERCENT_FLOOR,
        help_text=help_text + f" 0, or {limits.RATE_PERCENT_FLOOR} to {limits.RATE_PERCENT_MAX}: a fraction such as "
                              "0.0625 is refused with the percent it likely means.")


def email_field() -> serializers.CharField:
    # The pattern of lev.limits, not Django's EmailValidator: the MCP tools' schema carries the same one.
    return TextRegexField(
        limits.EMAIL_PATTERN, max_length=limits.EMAIL_MAX, required=False, allow_blank=True, allow_null=True,
        help_text="The lender contact's email address.",
        error_messages=_messages(invalid="must be an email address such as name@lender.com",
                                 max_length=f"must be at most {limits.EMAIL_MAX} characters"),
    )


# --- input --------------------------------------------------------------------------------------------
class PlacementCreateInputSerializer(StrictSerializer):
    """Lenders by id, or the top N of a lender search of this deal (or both: lenders by id, keeping
    their rank in the search)."""

    lender_ids = serializers.ListField(
        child=id_field("A lender id."), required=False, min_length=1, max_length=limits.PLACEMENTS_PER_CREATE_MAX,
        help_text=f"Lenders to place the deal with (1 to {limits.PLACEMENTS_PER_CREATE_MAX}).",
        error_messages={"min_length": "must list at least one lender",
                        "max_length": f"may list at most {limits.PLACEMENTS_PER_CREATE_MAX} lenders",
                        "not_a_list": "must be a list", "empty": "must list at least one lender"},
    )
    search_id = id_field("A completed lender search of this deal.")
    top_n = int_field(min_value=1, max_value=limits.PLACEMENTS_PER_CREATE_MAX, allow_null=False,
                      help_text=f"Without lender_ids: place the top N of search_id (default "
                                f"{limits.PLACEMENT_TOP_N_DEFAULT}).")
    send = bool_field(help_text="true: the placements start `sent` (the deal went to the lenders); "
                                "default false: `draft`.")
    notes = text_field(max_length=limits.PLACEMENT_NOTES_MAX)
    contact_ids = serializers.ListField(
        child=id_field("A contact id."), required=False, max_length=limits.PLACEMENTS_PER_CREATE_MAX,
        help_text="The account's lender contacts to send to, at most one per lender placed: each placement "
                  "with a contact's lender goes to that contact.",
        error_messages={"max_length": f"may list at most {limits.PLACEMENTS_PER_CREATE_MAX} contacts",
                        "not_a_list": "must be a list"},
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        lender_ids, search_id = attrs.get("lender_ids"), attrs.get("search_id")
        if (lender_ids is None and search_id is None) or (lender_ids is not None and "top_n" in attrs):
            raise serializers.ValidationError({"non_field_errors": [CREATE_TARGET_MESSAGE]})
        return attrs


class PlacementUpdateInputSerializer(StrictSerializer):
    status = EnumField(UPDATE_STATUSES, required=False,
                       help_text="The next status (quoted comes from recording a term sheet, won from choosing "
                                 "the winning term sheet).")
    notes = text_field(max_length=limits.PLACEMENT_NOTES_MAX)
    decline_reason = text_field(max_length=limits.DECLINE_REASON_MAX,
                                help_text="Why the lender declined, in its words (the ranking's evidence quotes the "
                                          "latest one); blank clears it.")
    contact_name = text_field(max_length=limits.CONTACT_NAME_MAX, help_text="The lender contact's name.",
                              single_line=True)
    contact_email = email_field()
    contact_id = id_field("The account's contact at this placement's lender (null clears it); contact_name and "
                          "contact_email are filled in from it unless given.", allow_null=True)
    program_id = id_field("The lender's program the deal is placed under (null clears it).", allow_null=True)


class TermSheetInputSerializer(StrictSerializer):
    quote_type = EnumField(QUOTE_TYPES, required=False, help_text="Default term_sheet.")
    loan_amount = money_field(required=True, allow_null=False, help_text="Quoted loan, US dollars.")
    rate_type = EnumField(RATE_TYPES, required=True)
    fixed_rate = rate_field("Fixed quotes: percent per year (6.125 = 6.125 %).")
    rate_index = EnumField(RATE_INDEXES, required=False, allow_null=True, help_text="Floating quotes: the index.")
    spread_bps = bps_field(max_value=limits.SPREAD_BPS_MAX,
                           help_text="Floating quotes: basis points over the index (275 = 2.75 %).")
    term_months = int_field(min_value=1, max_value=limits.TERM_MONTHS_MAX)
    amortization_months = int_field(min_value=1, max_value=limits.AMORTIZATION_MONTHS_MAX,
                                    help_text="Null or left out: interest-only for the whole term.")
    interest_only_months = int_field(min_value=0, max_value=limits.TERM_MONTHS_MAX)
    max_ltv = decimal_field(max_value=limits.LTV_PERCENT_MAX, **limits.LTV_PERCENT_COLUMN,
                            fraction_floor=limits.LTV_PERCENT_FLOOR,
                            help_text=f"The lender's maximum loan-to-value, percent (75, not 0.75): 0, or "
                                      f"{limits.LTV_PERCENT_FLOOR} to {limits.LTV_PERCENT_MAX}.")
    min_dscr = decimal_field(max_value=limits.DSCR_INPUT_MAX, **limits.DSCR_INPUT_COLUMN,
                             help_text="The lender's minimum debt service coverage, e.g. 1.25.")
    recourse = EnumField(RECOURSE_TYPES, required=False, allow_null=True)
    origination_fee_percent = decimal_field(max_value=limits.FEE_PERCENT_MAX, **limits.FEE_PERCENT_COLUMN,
                                            fraction_floor=limits.FEE_PERCENT_FLOOR,
                                            help_text=f"Percent of the loan, paid at closing (1, not 0.01): 0, or "
                                                      f"{limits.FEE_PERCENT_FLOOR} to {limits.FEE_PERCENT_MAX}.")
    exit_fee_percent = decimal_field(max_value=limits.FEE_PERCENT_MAX, **limits.FEE_PERCENT_COLUMN,
                                     fraction_floor=limits.FEE_PERCENT_FLOOR,
                                     help_text=f"Percent of the loan, paid at repayment: 0, or "
                                               f"{limits.FEE_PERCENT_FLOOR} to {limits.FEE_PERCENT_MAX}.")
    prepayment = text_field(max_length=limits.PREPAYMENT_TEXT_MAX, help_text="Prepayment terms.")
    expires_on = date_field(help_text="The quote's expiry date, YYYY-MM-DD.")
    notes = text_field(max_length=limits.TERM_SHEET_NOTES_MAX)
    quoted_on = date_field(help_text="The day the lender quoted, YYYY-MM-DD: today (the default) or earlier, "
                                     "not before the placement was sent. Floating quotes are compared with "
                                     "the index rate of that day.")


class ComparisonQuerySerializer(StrictSerializer):
    limit = int_field(min_value=1, max_value=limits.PAGE_SIZE_MAX, allow_null=False,
                      help_text="Only the best N quotes (`count` still says how many were compared). Default: all.")


class PlacementListQuerySerializer(StrictSerializer):
    status = EnumField(STATUSES, required=False)
    lender_id = id_field("Only this lender's placements.")
    page = page_field()
    page_size = page_size_field()

    def to_filters(self) -> PlacementFilters:
        return PlacementFilters(status=self.validated_data.get("status"),
                                lender_id=self.validated_data.get("lender_id"))


class TermSheetListQuerySerializer(StrictSerializer):
    placement_id = id_field("Only this placement's term sheets.")
    lender_id = id_field("Only this lender's term sheets.")
    quote_type = EnumField(QUOTE_TYPES, required=False)
    winning = bool_field(help_text="true: only the winning term sheet.")
    page = page_field()
    page_size = page_size_field()

    def to_filters(self) -> TermSheetFilters:
        data = self.validated_data
        return TermSheetFilters(placement_id=data.get("placement_id"), lender_id=data.get("lender_id"),
                                quote_type=data.get("quote_type"), winning=data.get("winning"))


# --- output -------------------------------------------------------------------------------------------
class PlacementSerializer(serializers.ModelSerializer):
    lender_name = serializers.CharField(source="lender.name", read_only=True)
    program_title = serializers.SerializerMethodField()
    term_sheet_count = serializers.IntegerField(read_only=True, help_text="Live term sheets (quotes).")
    allowed_next_statuses = serializers.SerializerMethodField(
        help_text="Statuses PATCH may set next (every one of them is accepted from this status).")
    automatic_next_statuses = serializers.SerializerMethodField(
        help_text="Statuses this placement reaches by another call, never by PATCH: quoted by recording a term "
                  "sheet, won by choosing its term sheet as the winner.")

    class Meta:
        model = Placement
        fields = ("id", "deal_id", "lender_id", "lender_name", "program_id", "program_title", "contact_id",
                  "contact_name", "contact_email", "status", "allowed_next_statuses", "automatic_next_statuses",
                  "notes", "decline_reason", "source_search_id", "source_rank", "term_sheet_count", "sent_at",
                  "first_response_at", "decided_at", "archived_at", "created_at", "updated_at")

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_program_title(self, placement: Placement) -> str | None:
        return placement.program.title if placement.program_id and placement.program else None

    @extend_schema_field(serializers.ListField(child=serializers.ChoiceField(choices=STATUS_CHOICES)))
    def get_allowed_next_statuses(self, placement: Placement) -> list[str]:
        return next_statuses(placement.status)

    @extend_schema_field(serializers.ListField(child=serializers.ChoiceField(choices=STATUS_CHOICES)))
    def get_automatic_next_statuses(self, placement: Placement) -> list[str]:
        return automatic_statuses(placement.status)

    def to_representation(self, instance: Placement) -> dict[str, Any]:
        # A placement just created has no annotation: it has no term sheets yet.
        if not hasattr(instance, "term_sheet_count"):
            instance.term_sheet_count = 0
        return super().to_representation(instance)


class TermSheetSerializer(serializers.ModelSerializer):
    lender_id = serializers.IntegerField(source="placement.lender_id", read_only=True)
    lender_name = serializers.CharField(source="placement.lender.name", read_only=True)

    class Meta:
        model = TermSheet
        fields = ("id", "placement_id", "deal_id", "lender_id", "lender_name", "quote_type", "loan_amount",
                  "rate_type", "fixed_rate", "rate_index", "spread_bps", "term_months", "amortization_months",
                  "interest_only_months", "max_ltv", "min_dscr", "recourse", "origination_fee_percent",
                  "exit_fee_percent", "prepayment", "expires_on", "winning", "notes", "received_at", "created_at")


class PlacementDetailSerializer(PlacementSerializer):
    term_sheets = serializers.SerializerMethodField()

    class Meta(PlacementSerializer.Meta):
        fields = (*PlacementSerializer.Meta.fields, "term_sheets")

    @extend_schema_field(TermSheetSerializer(many=True))
    def get_term_sheets(self, placement: Placement) -> list[dict[str, Any]]:
        live = placement.term_sheets.filter(deleted_at=None).select_related("placement__lender").order_by("id")
        return TermSheetSerializer(live, many=True).data


class PlacementFailureSerializer(serializers.Serializer):
    lender_id = serializers.IntegerField()
    code = serializers.ChoiceField(choices=(ErrorCode.NOT_FOUND.value, ErrorCode.CONFLICT.value))
    message = serializers.CharField()
    placement_id = serializers.IntegerField(required=False,
                                            help_text="CONFLICT: the lender's open placement on this deal.")


class PlacementBatchSerializer(serializers.Serializer):
    deal_id = serializers.IntegerField(source="deal.pk")
    created = serializers.SerializerMethodField(help_text="How many placements this call made.")
    placements = PlacementSerializer(source="created", many=True)
    failed = PlacementFailureSerializer(many=True, help_text="Lenders not placed, each with why.")

    def get_created(self, batch) -> int:
        return len(batch.created)


class WinnerChoiceSerializer(serializers.Serializer):
    term_sheet = TermSheetSerializer()
    placement_id = serializers.IntegerField(source="term_sheet.placement_id")
    changed = serializers.BooleanField(help_text="false: this term sheet had already won; nothing changed.")
    lost_placement_ids = serializers.ListField(child=serializers.IntegerField(),
                                               help_text="The deal's other open placements, now lost.")


def _decimal(max_digits: int, decimal_places: int, help_text: str = "", *, null: bool = True
             ) -> serializers.DecimalField:
    return serializers.DecimalField(max_digits=max_digits, decimal_places=decimal_places, allow_null=null,
                                    coerce_to_string=False, help_text=help_text)


MONEY_OUT = limits.MONEY_MAX_DIGITS + 2  # derived amounts (debt service) may pass the stored maximum


class QuoteComparisonSerializer(serializers.Serializer):
    rank = serializers.IntegerField(help_text="1 = best (see the comparison's `order`).")
    term_sheet_id = serializers.IntegerField()
    placement_id = serializers.IntegerField()
    lender_id = serializers.IntegerField()
    lender_name = serializers.CharField()
    placement_status = serializers.CharField()
    quote_type = serializers.CharField()
    winning = serializers.BooleanField()
    rate_type = serializers.CharField()
    fixed_rate = _decimal(**limits.RATE_COLUMN)
    rate_index = serializers.CharField()
    base_rate = _decimal(**limits.RATE_COLUMN, help_text="Floating: the index's rate as of the quote's date (its "
                                                         "latest rate dated on or before it), percent.")
    base_rate_as_of = serializers.DateField(allow_null=True, help_text="The date of the base_rate used.")
    quoted_on = serializers.DateField(help_text="The local date the quote was received: its base rate is read "
                                                "as of it.")
    spread_bps = serializers.IntegerField(allow_null=True)
    all_in_rate = _decimal(8, 3, "Fixed rate, or base rate + spread; percent per year. Null: no rate of the index "
                                  "on or before the quote's date.")
    all_in_cost = _decimal(8, 3, "All-in rate plus fees spread over the term; percent per year.")
    proceeds = _decimal(MONEY_OUT, 2, "The quoted loan, US dollars.", null=False)
    net_proceeds = _decimal(MONEY_OUT, 2, "Proceeds less the origination fee.", null=False)
    origination_fee = _decimal(MONEY_OUT, 2, "US dollars.", null=False)
    exit_fee = _decimal(MONEY_OUT, 2, "US dollars.", null=False)
    total_fees = _decimal(MONEY_OUT, 2, "US dollars.", null=False)
    ltv = _decimal(limits.LTV_MAX_DIGITS, 2, "Loan / deal value, percent.")
    max_ltv = _decimal(**limits.LTV_PERCENT_COLUMN)
    annual_debt_service = _decimal(MONEY_OUT + 4, 2, "US dollars per year (amortizing, or interest only).")
    interest_only_debt_service = _decimal(MONEY_OUT + 4, 2, "During the interest-only period, US dollars/year.")
    dscr = _decimal(limits.DSCR_MAX_DIGITS + 4, 2, "Deal NOI / the debt service lenders underwrite (dscr_basis).")
    dscr_basis = serializers.ChoiceField(
        choices=DSCR_BASES, allow_null=True,
        help_text="interest_only: a bridge, construction, land or predevelopment loan with an interest-only period, "
                  "or a loan that never amortizes; amortizing: the others.")
    dscr_interest_only = _decimal(limits.DSCR_MAX_DIGITS + 4, 2, "Deal NOI / interest-only debt service.")
    dscr_amortizing = _decimal(limits.DSCR_MAX_DIGITS + 4, 2, "Deal NOI / amortizing debt service.")
    debt_yield = _decimal(limits.LTV_MAX_DIGITS, 2, "Deal NOI / the quoted loan, percent.")
    min_dscr = _decimal(**limits.DSCR_INPUT_COLUMN)
    term_months = serializers.IntegerField(allow_null=True)
    amortization_months = serializers.IntegerField(allow_null=True)
    interest_only_months = serializers.IntegerField()
    recourse = serializers.CharField()
    prepayment = serializers.CharField()
    expires_on = serializers.DateField(allow_null=True)
    expired = serializers.BooleanField()
    group = serializers.CharField(help_text="Its comparable group: term band, rate type, recourse "
                                            "(e.g. \"8 years and more fixed, non-recourse\").")
    sound = serializers.BooleanField(help_text="Within the lender's minimum DSCR (else the loan type's usual one) "
                                               "and maximum LTV at the quote's own terms.")
    best_in_group = serializers.BooleanField(help_text="The first valid, priced, sound quote of its group.")
    notes = serializers.ListField(child=serializers.CharField(), help_text="Short plain-language notes.")


class BaseRateUsedSerializer(serializers.Serializer):
    index = serializers.CharField()
    rate = _decimal(**limits.RATE_COLUMN, null=False)
    as_of = serializers.DateField(help_text="The date of this rate of the index.")




class ComparisonSerializer(serializers.Serializer):
    deal_id = serializers.IntegerField()
    requested_loan_amount = _decimal(limits.MONEY_MAX_DIGITS, 2)
    value = _decimal(limits.MONEY_MAX_DIGITS, 2, "The deal value leverage is measured against.")
    value_basis = serializers.CharField(allow_null=True)
    noi = _decimal(limits.MONEY_MAX_DIGITS, 2, "The NOI the DSCR is measured with, US dollars per year.")
    noi_basis = serializers.CharField(allow_null=True)
    base_rates = serializers.SerializerMethodField(
        help_text="Each market rate the floating quotes use (an index may appear with several dates).")
    order = serializers.SerializerMethodField()
    best_term_sheet_id = serializers.IntegerField(
        allow_null=True, help_text="The chosen winner, else the best when every contender is alike (`best_rule`); "
                                   "null when they are not: see trade_offs.")
    best_rule = serializers.SerializerMethodField()
    trade_offs = serializers.ListField(child=serializers.CharField(), help_text=(
        "Without a single best: what the leader gives and takes against each other group's best, in words."))
    count = serializers.SerializerMethodField(help_text="Quotes compared (all of them, whatever `limit`).")
    quotes = serializers.SerializerMethodField()
    unavailable = serializers.ListField(child=serializers.CharField(),
                                        help_text="What cannot be computed for this deal, and why.")

    @extend_schema_field(BaseRateUsedSerializer(many=True))
    def get_base_rates(self, comparison) -> list[dict[str, Any]]:
        return [{"index": index, "rate": rate, "as_of": as_of.isoformat()}
                for index, rate, as_of in comparison.base_rates]

    def get_order(self, comparison) -> str:
        return ORDER_RULE

    def get_best_rule(self, comparison) -> str:
        return BEST_RULE

    def get_count(self, comparison) -> int:
        return len(comparison.quotes)

    @extend_schema_field(QuoteComparisonSerializer(many=True))
    def get_quotes(self, comparison) -> list[dict[str, Any]]:
        limit = self.context.get("limit")
        return QuoteComparisonSerializer(comparison.quotes[:limit], many=True).data

