from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from deals import finance
from deals.companies.serializers import CompanyRefSerializer
from deals.documents.figures.selectors import figure_sources
from deals.models import Deal, DealFinancials, DealProperty
from deals.pipeline.serializers import STAGE_HELP, StageRefSerializer, UserRefSerializer
from deals.searches.ranking.criteria import missing_for_search
from deals.selectors import DEAL_ORDERINGS, DealFilters
from lev import limits
from lev.enums import ASSET_TYPES, BUSINESS_PLANS, DEAL_STATUSES, LOAN_TYPES, TRANSACTION_TYPES, US_STATES
from lev.openapi import nullable_fields
from lev.serializers import (
    EnumField,
    RoundedDecimalField,
    StrictSerializer,
    bool_field,
    cursor_field,
    date_field,
    int_field,
    money_field,
    page_field,
    page_size_field,
    regex_field,
    text_field,
)
from lev.vocabulary import LOAN_AMOUNT_RULE

INCLUDES = ("properties", "financials")


# --- input --------------------------------------------------------------------------------------
class PropertyInputSerializer(StrictSerializer):
    name = text_field(max_length=limits.PROPERTY_NAME_MAX, required=True, allow_blank=False,
                      help_text="Property name.")
    address = text_field(max_length=limits.PROPERTY_ADDRESS_MAX)
    city = text_field(max_length=limits.PROPERTY_CITY_MAX)
    state = EnumField(US_STATES, required=False, allow_blank=True,
                      help_text="2-letter US state code; a state's full name (Texas, new york) is accepted too.")
    zip = regex_field(limits.ZIP_PATTERN, message="must be a 5-digit ZIP code (or ZIP+4)")
    asset_type = EnumField(ASSET_TYPES, required=False, allow_blank=True)
    units = int_field(min_value=0, max_value=limits.UNITS_MAX)
    square_footage = int_field(min_value=0, max_value=limits.SQUARE_FOOTAGE_MAX)
    year_built = int_field(min_value=limits.YEAR_BUILT_MIN, max_value=limits.YEAR_BUILT_MAX)


class DealUpdateSerializer(StrictSerializer):
    """The deal's own fields (PATCH changes some of them). Properties are not among them: they are
    added, changed and removed one by one, so the PATCH schema does not offer them."""

    title = text_field(max_length=limits.DEAL_TITLE_MAX, required=True, allow_blank=False, help_text="Deal name.")
    loan_amount = money_field(loan_amount=True, help_text="Requested loan in US dollars, rounded to the cent: "
                                                         + LOAN_AMOUNT_RULE + ".")
    loan_type = EnumField(LOAN_TYPES, required=False)
    transaction_type = EnumField(TRANSACTION_TYPES, required=False)
    business_plan = EnumField(BUSINESS_PLANS, required=False, allow_blank=True)
    description = text_field(max_length=limits.DEAL_DESCRIPTION_MAX)
    estimated_close_date = date_field(help_text="YYYY-MM-DD")
    sponsor_id = int_field(min_value=1, max_value=limits.MAX_ID,
                           help_text="The sponsor: one of the account's companies (null clears it).")
    borrower_id = int_field(min_value=1, max_value=limits.MAX_ID,
                            help_text="The borrowing entity: one of the account's companies (null clears it).")
    owner_id = int_field(min_value=1, max_value=limits.MAX_ID,
                         help_text="Who runs the deal: a member of the account (default: its creator; null: nobody).")


class DealInputSerializer(DealUpdateSerializer):
    """A new deal, optionally with its first properties."""

    properties = PropertyInputSerializer(
        many=True, required=False, max_length=limits.PROPERTIES_PER_CREATE_MAX,
        error_messages={"max_length": f"may list at most {limits.PROPERTIES_PER_CREATE_MAX} properties",
                        "not_a_list": "must be a list"},
    )


class FinancialsInputSerializer(StrictSerializer):
    purchase_price = money_field()
    estimated_value = money_field()
    in_place_noi = money_field(positive=False, help_text="Net operating income per year, US dollars.")
    stabilized_noi = money_field(positive=False, help_text="Net operating income per year, US dollars.")
    existing_debt = money_field(positive=False)
    cash_out = money_field(positive=False)
    # Kept to 3 decimals, rounded half-up as the MCP tool does; a fraction (0.0725) is refused with the
    # percent it likely means (lev.limits.RATE_PERCENT_FLOOR).
    interest_rate = RoundedDecimalField(
        **limits.INTEREST_RATE_COLUMN, min_value=0, max_value=limits.INTEREST_RATE_MAX, required=False,
        allow_null=True, coerce_to_string=False, fraction_floor=limits.RATE_PERCENT_FLOOR,
        help_text=f"Percent per year (6.25 = 6.25 %): 0, or {limits.RATE_PERCENT_FLOOR} to "
                  f"{limits.INTEREST_RATE_MAX}; a fraction such as 0.0625 is refused with the percent it likely "
                  "means.", error_messages={
            "invalid": "must be a number", "min_value": "must be 0 or more",
            "max_value": f"must be at most {limits.INTEREST_RATE_MAX}",
            "max_decimal_places": "may have at most 3 decimal places", "max_digits": "is too large",
        },
    )
    amortization_years = int_field(min_value=limits.AMORTIZATION_YEARS_MIN, max_value=limits.AMORTIZATION_YEARS_MAX)
    interest_only_months = int_field(
        min_value=0, max_value=limits.INTEREST_ONLY_MONTHS_MAX,
        help_text="Interest-only months at the start of the loan (0, or null: none).")


class DealListQuerySerializer(StrictSerializer):
    loan_type = EnumField(LOAN_TYPES, required=False)
    transaction_type = EnumField(TRANSACTION_TYPES, required=False)
    business_plan = EnumField(BUSINESS_PLANS, required=False)
    min_loan_amount = money_field(positive=False, allow_null=False,
                                  help_text="US dollars, rounded to the cent; not above max_loan_amount.")
    max_loan_amount = money_field(positive=False, allow_null=False)
    status = EnumField(DEAL_STATUSES, required=False, help_text=(
        "active (default): not archived, in an open stage; closed / dead: not archived, in a won / dead "
        "stage; archived; all. With `stage` and no status: that stage's deals that are not archived."))
    archived = bool_field(help_text="true: the same as status=archived (the older way; a status given decides).")
    search = text_field(max_length=limits.SEARCH_TEXT_MAX)
    stage = text_field(max_length=limits.STAGE_NAME_MAX, help_text=STAGE_HELP)
    ordering = EnumField(DEAL_ORDERINGS, required=False)
    cursor = cursor_field()
    page = page_field(help_text="Deprecated: follow `next` (a cursor) instead; a page number reads the deals "
                                "before its page.")
    page_size = page_size_field()

    def validate(self, attrs):
        low, high = attrs.get("min_loan_amount"), attrs.get("max_loan_amount")
        if low is not None and high is not None and low > high:
            raise serializers.ValidationError({"min_loan_amount": ["must not exceed max_loan_amount"]})
        if "status" in attrs:
            # A status given decides; `archived` is its older spelling, read only without one (a schema-valid
            # pair is never refused: the fuzz suites).
            attrs.pop("archived", None)
        return attrs

    def to_filters(self) -> DealFilters:
        data = {k: v for k, v in self.validated_data.items() if k not in ("cursor", "page", "page_size")}
        return DealFilters(**data)


class IncludeQuerySerializer(StrictSerializer):
    include = serializers.CharField(required=False, allow_blank=True)

    def validate_include(self, value: str) -> frozenset[str]:
        parts = {p.strip().lower() for p in value.split(",") if p.strip()}
        unknown = parts - set(INCLUDES)
        if unknown:
            raise serializers.ValidationError("must be a comma-separated list of: " + ", ".join(INCLUDES))
        return frozenset(parts)


# --- output -------------------------------------------------------------------------------------
class DealPropertySerializer(serializers.ModelSerializer):
    """A property of a deal: where it is, what it is and its size."""

    class Meta:
        model = DealProperty
        fields = ("id", "name", "address", "city", "state", "zip", "asset_type", "units",
                  "square_footage", "year_built", "created_at", "updated_at")


def _ratio(help_text: str) -> serializers.DecimalField:
    return serializers.DecimalField(
        max_digits=limits.DSCR_MAX_DIGITS, decimal_places=limits.RATIO_DECIMAL_PLACES, read_only=True,
        allow_null=True, coerce_to_string=False, help_text=help_text)


class FigureSourceRefSerializer(serializers.Serializer):
    document_id = serializers.IntegerField()
    version = serializers.IntegerField(help_text="The document's version the figure was read from.")
    file_name = serializers.CharField()
    applied_at = serializers.DateTimeField()


class DealFinancialsSerializer(serializers.ModelSerializer):
    """A deal's financials: the inputs stated and the ratios worked out from them."""

    # Wide enough for any ratio the stored inputs allow (lev.limits): a $1 loan on a $12M value,
    # or a $12M loan on a $1 value, must read back, not fail every read of the deal.
    ltv = serializers.DecimalField(
        max_digits=limits.LTV_MAX_DIGITS, decimal_places=limits.RATIO_DECIMAL_PLACES, read_only=True,
        allow_null=True, coerce_to_string=False,
        help_text="Loan-to-value in percent (loan / estimated value, else purchase price); null when not computable.",
    )
    dscr = _ratio("Debt service coverage lenders underwrite (NOI / annual debt service on dscr_basis); null when "
                  "not computable.")
    dscr_basis = serializers.ChoiceField(
        choices=finance.DSCR_BASES, read_only=True, allow_null=True,
        help_text="The debt service dscr is on: interest_only (bridge, construction, land and predevelopment "
                  "loans with an interest-only period) or amortizing (the others).")
    dscr_interest_only = _ratio("NOI / interest-only debt service, during the interest-only period; null without "
                                "one.")
    dscr_amortizing = _ratio("NOI / amortizing debt service (after any interest-only period).")
    debt_yield = serializers.DecimalField(
        max_digits=limits.LTV_MAX_DIGITS, decimal_places=limits.RATIO_DECIMAL_PLACES, read_only=True,
        allow_null=True, coerce_to_string=False,
        help_text="Debt yield in percent (NOI / loan amount); null when not computable.",
    )

    sources = serializers.SerializerMethodField(
        help_text="Where each figure applied from a document came from (its rent roll or T-12; docs/documents.md): "
                  "field -> {document_id, version, file_name, applied_at}; empty when none was. `units` is the "
                  "deal's property's.")

    class Meta:
        model = DealFinancials
        fields = ("purchase_price", "estimated_value", "in_place_noi", "stabilized_noi", "existing_debt",
                  "cash_out", "interest_rate", "amortization_years", "interest_only_months", "ltv", "debt_yield",
                  "dscr", "dscr_basis", "dscr_interest_only", "dscr_amortizing", "effective_gross_income",
                  "operating_expenses", "occupancy", "in_place_rent", "sources", "updated_at")
        read_only_fields = ("effective_gross_income", "operating_expenses", "occupancy", "in_place_rent")
        extra_kwargs = {
            "effective_gross_income": {"help_text": "A year's effective gross income, from the T-12 applied."},
            "operating_expenses": {"help_text": "A year's operating expenses, from the T-12 applied."},
            "occupancy": {"help_text": "Occupied units in percent, from the rent roll applied."},
            "in_place_rent": {"help_text": "The occupied units' rent over a year, from the rent roll applied."},
        }

    @extend_schema_field(serializers.DictField(child=FigureSourceRefSerializer()))
    def get_sources(self, financials: DealFinancials) -> dict[str, dict[str, Any]]:
        # Read with the financials where the caller already has them (the summary), else one query.
        known = getattr(financials, "figure_sources_read", None)
        return known if known is not None else figure_sources(deal_id=financials.deal_id)


# The financials as the API documents them (one OpenAPI component, "DealFinancials", wherever they are
# answered): the derived ratios and updated_at may be null.
DealFinancialsDoc = nullable_fields(DealFinancialsSerializer, "ltv", "dscr", "updated_at")


class DealSerializer(serializers.ModelSerializer):
    """A deal: the loan asked for, its stage and owner, sponsor and borrower, and when it was changed."""

    sponsor = CompanyRefSerializer(read_only=True, allow_null=True, help_text="The sponsor (a company), or null.")
    borrower = CompanyRefSerializer(read_only=True, allow_null=True,
                                    help_text="The borrowing entity (a company), or null.")
    stage = StageRefSerializer(help_text="Where the deal is in the account's pipeline.")
    owner = UserRefSerializer(allow_null=True, help_text="Who on the team runs the deal.")

    class Meta:
        model = Deal
        fields = ("id", "title", "loan_amount", "loan_type", "transaction_type", "business_plan",
                  "description", "estimated_close_date", "stage", "owner", "sponsor", "borrower", "archived",
                  "archived_at", "created_at", "updated_at")

    def __init__(self, *args, include: frozenset[str] = frozenset(), **kwargs):
        super().__init__(*args, **kwargs)
        self.include = include

    def to_representation(self, instance: Deal):
        data = super().to_representation(instance)
        if "properties" in self.include:
            data["properties"] = DealPropertySerializer(instance.properties.all(), many=True).data
        if "financials" in self.include:
            # A missing one-to-one raises RelatedObjectDoesNotExist, an AttributeError.
            # Without financials yet, every figure is null: one shape for clients.
            financials = getattr(instance, "financials", None) or DealFinancials(deal=instance)
            data["financials"] = DealFinancialsSerializer(financials).data
        return data


def deal_output(row: dict[str, Any]) -> dict[str, Any]:
    """What `DealSerializer(deal).data` answers for the deal `row` (deals.selectors.deal_row), written
    directly: the deal detail is the hottest answer of both doors, and DRF's field-by-field walk of the
    serializer costs more than the rest of its work together (docs/benchmarks.md, issue 40).
    tests/deals/test_deal_output.py holds the two to the same JSON bytes over deals with every field null
    and set, money at every scale, date-times in and out of an active time zone, and every related row
    missing or present: a field added to DealSerializer must be added here too, or that test fails."""
    zone = timezone.get_current_timezone()  # DRF's DateTimeField writes a date-time in the active zone
    close_date = row["estimated_close_date"]
    return {
        "id": row["id"],
        "title": row["title"],
        # The column's Decimal, at cents as read (both databases' converters): DRF's DecimalField writes it so.
        "loan_amount": row["loan_amount"],
        "loan_type": row["loan_type"],
        "transaction_type": row["transaction_type"],
        "business_plan": row["business_plan"],
        "description": row["description"],
        "estimated_close_date": None if close_date is None else close_date.isoformat(),
        "stage": {"id": row["stage__id"], "key": row["stage__key"], "name": row["stage__name"],
                  "kind": row["stage__kind"]},
        "owner": None if row["owner__id"] is None else {"id": row["owner__id"], "username": row["owner__username"]},
        "sponsor": _company_ref(row, "sponsor"),
        "borrower": _company_ref(row, "borrower"),
        "archived": row["archived"],
        "archived_at": _datetime(row["archived_at"], zone),
        "created_at": _datetime(row["created_at"], zone),
        "updated_at": _datetime(row["updated_at"], zone),
    }


def _datetime(value: dt.datetime | None, zone: dt.tzinfo) -> str | None:
    """ISO 8601 in `zone`, UTC written as `Z`: DRF's DateTimeField output (DATETIME_FORMAT iso-8601)."""
    if value is None:
        return None
    text = value.astimezone(zone).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _company_ref(row: dict[str, Any], relation: str) -> dict[str, Any] | None:
    """CompanyRefSerializer's answer for the deal's sponsor or borrower (null without one)."""
    if row[f"{relation}__id"] is None:
        return None
    return {"id": row[f"{relation}__id"], "name": row[f"{relation}__name"], "kind": row[f"{relation}__kind"]}


class DealListItemSerializer(serializers.ModelSerializer):
    """A deal of a list, with its property count and whether a lender search can rank it now.
    Reads `deal.properties.all()`, which `selectors.deal_list` prefetches for a whole page."""

    property_count = serializers.SerializerMethodField()
    ready_for_search = serializers.SerializerMethodField(
        help_text="True when a lender search can rank the deal now (never for an archived deal).")
    missing_for_search = serializers.SerializerMethodField(
        help_text="What the deal lacks before a lender search, in words (empty when ready): a loan amount, "
                  "a property, or a property's state or asset type (the first few named, the rest counted).")
    stage = StageRefSerializer()
    owner = UserRefSerializer(allow_null=True)

    class Meta:
        model = Deal
        fields = ("id", "title", "loan_amount", "loan_type", "transaction_type", "business_plan",
                  "estimated_close_date", "stage", "owner", "archived", "property_count", "ready_for_search",
                  "missing_for_search", "updated_at")

    def get_property_count(self, deal: Deal) -> int:
        return len(deal.properties.all())

    def get_ready_for_search(self, deal: Deal) -> bool:
        return not deal.archived and not self.get_missing_for_search(deal)

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_missing_for_search(self, deal: Deal) -> list[str]:
        return missing_for_search(deal, list(deal.properties.all()))
