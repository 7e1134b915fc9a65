"""Input-serializer building blocks whose error messages read `<field> <message>`.

`ValidationFailed` renders the first error as `Validation failed: loan_amount must be greater
than 0`, so messages here are phrased to follow a field name.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from rest_framework import serializers

from lev.enums import choices

COMMON_MESSAGES = {
    "required": "is required",
    "null": "may not be null",
    "blank": "may not be blank",
    "invalid": "is invalid",
}


def _messages(**extra: str) -> dict[str, str]:
    return {**COMMON_MESSAGES, **extra}


class StrictSerializer(serializers.Serializer):
    """Rejects keys it does not know, so a typo never passes silently."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError({"non_field_errors": ["expected a JSON object"]})
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({name: ["is not a known field"] for name in unknown})
        return super().to_internal_value(data)


class EnumField(serializers.ChoiceField):
    """An enum matched case-insensitively (values all lower- or all upper-case, e.g. state codes);
    the error message lists the allowed values."""

    def __init__(self, values: tuple[str, ...], **kwargs: Any):
        self.values = values
        self.upper = all(v.isupper() for v in values)
        kwargs.setdefault("error_messages", _messages(invalid_choice="must be one of: " + ", ".join(values)))
        # The same (value, label) pairs as the model fields, so OpenAPI names one enum per list.
        super().__init__(choices=choices(values), **kwargs)

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, str):
            data = data.strip().upper() if self.upper else data.strip().lower()
            if data == "" and self.allow_blank:
                return ""
        return super().to_internal_value(data)


class EnumListField(serializers.ListField):
    def __init__(self, values: tuple[str, ...], **kwargs: Any):
        kwargs.setdefault("error_messages", _messages(not_a_list="must be a list"))
        super().__init__(child=EnumField(values), **kwargs)


def money_field(*, required: bool = False, positive: bool = True, allow_null: bool = True,
                help_text: str = "US dollars") -> serializers.DecimalField:
    minimum = Decimal("0.01") if positive else Decimal("0")
    return serializers.DecimalField(
        max_digits=14,
        decimal_places=2,
        min_value=minimum,
        required=required,
        allow_null=allow_null,
        coerce_to_string=False,
        help_text=help_text,
        error_messages=_messages(
            invalid="must be a number",
            min_value="must be greater than 0" if positive else "must be 0 or more",
            max_digits="must be less than 1,000,000,000,000",
            max_whole_digits="must be less than 1,000,000,000,000",
            max_decimal_places="may have at most 2 decimal places",
            max_string_length="is too long",
        ),
    )


def text_field(*, max_length: int, required: bool = False, allow_blank: bool = True,
               help_text: str = "") -> serializers.CharField:
    return serializers.CharField(
        max_length=max_length,
        required=required,
        allow_blank=allow_blank,
        trim_whitespace=True,
        help_text=help_text,
        error_messages=_messages(max_length=f"must be at most {max_length} characters", invalid="must be text"),
    )


def int_field(*, min_value: int | None = None, max_value: int | None = None, required: bool = False,
              allow_null: bool = True, help_text: str = "") -> serializers.IntegerField:
    return serializers.IntegerField(
        min_value=min_value,
        max_value=max_value,
        required=required,
        allow_null=allow_null,
        help_text=help_text,
        error_messages=_messages(
            invalid="must be a whole number",
            min_value=f"must be at least {min_value}",
            max_value=f"must be at most {max_value}",
            max_string_length="is too long",
        ),
    )


def date_field(*, required: bool = False, help_text: str = "") -> serializers.DateField:
    return serializers.DateField(
        required=required,
        allow_null=True,
        help_text=help_text,
        error_messages=_messages(invalid="must be a date in YYYY-MM-DD format",
                                 datetime="must be a date, not a date-time"),
    )


def bool_field(*, required: bool = False, help_text: str = "") -> serializers.BooleanField:
    return serializers.BooleanField(
        required=required, help_text=help_text, error_messages=_messages(invalid="must be true or false")
    )


def page_size_field(default: int = 20) -> serializers.IntegerField:
    return int_field(min_value=1, max_value=100, allow_null=False, help_text=f"Default {default}, max 100.")
