"""REST input and output of market rates."""

from __future__ import annotations

from rest_framework import serializers

from lev import limits
from lev.enums import RATE_INDEXES
from lev.serializers import EnumField, StrictSerializer, date_field, page_field, page_size_field

RATE_HELP = "Percent per year (4.31 = 4.31 %)."
# A rule over two parameters (OpenAPI cannot state it; the parameters' descriptions do).
SINCE_AFTER_UNTIL = "must be on or before until"


def _rate(help_text: str = RATE_HELP, *, null: bool = True) -> serializers.DecimalField:
    return serializers.DecimalField(**limits.RATE_COLUMN, coerce_to_string=False, allow_null=null,
                                    help_text=help_text)


class MarketRatesQuerySerializer(StrictSerializer):
    index = EnumField(RATE_INDEXES, required=False, help_text="Only this index (default: every index).")
    as_of = date_field(help_text="The date the rates are read as of (YYYY-MM-DD); default today. Each index's "
                                 "latest rate dated on or before it.")


class MarketRateHistoryQuerySerializer(StrictSerializer):
    since = date_field(help_text="The first date (YYYY-MM-DD), included, on or before until; default: the first "
                                 "rate.")
    until = date_field(help_text="The last date (YYYY-MM-DD), included; default: the latest rate.")
    page = page_field()
    page_size = page_size_field()

    def validate(self, data):
        since, until = data.get("since"), data.get("until")
        if since is not None and until is not None and since > until:
            raise serializers.ValidationError({"since": [SINCE_AFTER_UNTIL]})
        return data


class MarketRateAsOfSerializer(serializers.Serializer):
    """An index's rate as of the date asked, or rate and date null when it has none that early."""

    index = serializers.ChoiceField(choices=RATE_INDEXES)
    name = serializers.CharField(help_text='The index\'s name, e.g. "3-month Term SOFR".')
    rate = _rate(RATE_HELP + " Null: no rate of this index on or before as_of.")
    date = serializers.DateField(allow_null=True, help_text="The date of the rate used (on or before as_of).")
    days_old = serializers.IntegerField(allow_null=True, help_text="Days from `date` to as_of.")


class MarketRatesSerializer(serializers.Serializer):
    as_of = serializers.DateField()
    results = MarketRateAsOfSerializer(many=True)


class MarketRateHistoryItemSerializer(serializers.Serializer):
    date = serializers.DateField(source="on")
    rate = _rate(null=False)
    source = serializers.CharField(help_text='Where it came from: "admin", "csv <file name>", "demo".')


class BaseRateSerializer(serializers.Serializer):
    """GET /base-rates/ (deprecated): each index's latest rate, in the shape the old list had."""

    index = serializers.ChoiceField(choices=RATE_INDEXES)
    rate = _rate(null=False)
    as_of = serializers.DateField(source="on")
    updated_at = serializers.DateTimeField()
