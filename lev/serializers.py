"""Input-serializer building blocks whose error messages read `<field> <message>`.

`ValidationFailed` renders the first error as `Validation failed: loan_amount must be greater
than 0`, so messages here are phrased to follow a field name.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any

from django.core.validators import ProhibitNullCharactersValidator, RegexValidator
from rest_framework import serializers
from rest_framework.fields import ProhibitSurrogateCharactersValidator

from lev.enums import choices
from lev.limits import (
    CONTROL_CHARACTERS,
    LIST_CURSOR_MAX,
    LOAN_AMOUNT_MIN,
    MONEY_DECIMAL_PLACES,
    MONEY_MAX,
    MONEY_MAX_DIGITS,
    MONEY_MIN_POSITIVE,
    NON_BLANK_ONE_LINE_TEXT_PATTERN,
    NON_BLANK_TEXT_PATTERN,
    ONE_LINE_TEXT_PATTERN,
    PAGE_NUMBER_MAX,
    PAGE_SIZE_DEFAULT,
    PAGE_SIZE_MAX,
    TEXT_PATTERN,
)
from lev.vocabulary import (
    MONEY_EXAMPLE,
    WHOLE_NUMBER_MESSAGE,
    Slip,
    bps_from_percent,
    bps_message,
    canonical_choice,
    date_message,
    loan_amount_too_small_message,
    money_text_message,
    percent_fraction_message,
    sentence,
)

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
    """An enum matched ignoring case and separators ("Value-Add" is value_add), with the aliases and
    slip messages of `lev.vocabulary` ("Texas" is TX; "bridge" says which bridge values exist);
    anything else is refused with a message listing the allowed values."""

    def __init__(self, values: tuple[str, ...], **kwargs: Any):
        self.values = values
        self.upper = all(v.isupper() for v in values)
        kwargs.setdefault("error_messages", _messages(invalid_choice="must be one of: " + ", ".join(values)))
        # The same (value, label) pairs as the model fields, so OpenAPI names one enum per list.
        super().__init__(choices=choices(values), **kwargs)

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, str):
            try:
                data = canonical_choice(data, self.values)
            except Slip as slip:
                raise serializers.ValidationError(str(slip)) from None
            if data == "" and self.allow_blank:
                return ""
        return super().to_internal_value(data)


class EnumListField(serializers.ListField):
    def __init__(self, values: tuple[str, ...], **kwargs: Any):
        kwargs.setdefault("error_messages", _messages(not_a_list="must be a list"))
        super().__init__(child=EnumField(values), **kwargs)


class RoundedDecimalField(serializers.DecimalField):
    """A number rounded half-up to `decimal_places` before its digits are checked, as the MCP tools
    do: a JSON number such as 94300242956.43105 (or a rate of 1e-249) is the value it says, not an
    error about decimals the OpenAPI schema never mentioned (it states minimum and maximum only).

    A percent field passes `fraction_floor`: a value above 0 and below it is a fraction sent for a
    percent (0.0725 for 7.25) and is refused with the value probably meant (lev.vocabulary)."""

    def __init__(self, *args: Any, fraction_floor: Decimal | None = None, **kwargs: Any):
        self.fraction_floor = fraction_floor
        super().__init__(*args, **kwargs)

    def validate_precision(self, value: Decimal) -> Decimal:
        if self.fraction_floor is not None and self.max_value is not None:
            # The value sent, before rounding: 0.0725 means 7.25, not the 7.3 of 0.073.
            message = percent_fraction_message(value, floor=self.fraction_floor, maximum=self.max_value,
                                               places=self.decimal_places)
            if message is not None:
                raise serializers.ValidationError(message, code="fraction")
        # The bounds apply to the value sent, as the schema states them: -0.001 is below a
        # minimum of 0 even though it rounds to 0.00.
        if self.min_value is not None and value < self.min_value:
            self.fail("min_value", min_value=self.min_value)
        if self.max_value is not None and value > self.max_value:
            self.fail("max_value", max_value=self.max_value)
        try:
            value = value.quantize(Decimal(1).scaleb(-self.decimal_places), rounding=ROUND_HALF_UP,
                                   context=Context(prec=self.max_digits + 2))
        except InvalidOperation:  # far too many whole digits to round at this precision
            self.fail("max_whole_digits", max_whole_digits=self.max_whole_digits)
        return super().validate_precision(value)


class MoneyField(RoundedDecimalField):
    """US dollars, rounded half-up to the cent (see RoundedDecimalField). Text such as "18.5M" is
    refused with the number it stands for."""

    def to_internal_value(self, data: Any) -> Decimal:
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if isinstance(data, str) and any(getattr(d, "code", "") == "invalid" for d in exc.detail):
                raise serializers.ValidationError(money_text_message(data), code="invalid") from None
            raise


class LoanAmountField(MoneyField):
    """A loan amount: above 0 (the reference's message) and at least LOAN_AMOUNT_MIN, refused below
    it with the amount it likely means (18.5 -> did you mean 18500000?)."""

    def validate_precision(self, value: Decimal) -> Decimal:
        if value <= 0:
            self.fail("min_value", min_value=self.min_value)
        if value < LOAN_AMOUNT_MIN:
            raise serializers.ValidationError(loan_amount_too_small_message(value), code="min_value")
        return super().validate_precision(value)


def money_field(*, required: bool = False, positive: bool = True, allow_null: bool = True,
                help_text: str = "US dollars", loan_amount: bool = False) -> serializers.DecimalField:
    """US dollars: above 0 (`positive`) or 0 and more; with `loan_amount`, at least LOAN_AMOUNT_MIN."""
    minimum = LOAN_AMOUNT_MIN if loan_amount else MONEY_MIN_POSITIVE if positive else 0
    field_class = LoanAmountField if loan_amount else MoneyField
    return field_class(
        max_digits=MONEY_MAX_DIGITS,
        decimal_places=MONEY_DECIMAL_PLACES,
        min_value=minimum,
        max_value=MONEY_MAX,
        required=required,
        allow_null=allow_null,
        coerce_to_string=False,
        help_text=help_text,
        error_messages=_messages(
            invalid="must be " + MONEY_EXAMPLE,
            min_value="must be greater than 0" if positive or loan_amount else "must be 0 or more",
            max_value=f"must be at most {MONEY_MAX}",
            max_digits=f"must be at most {MONEY_MAX}",
            max_whole_digits=f"must be at most {MONEY_MAX}",
            max_decimal_places=f"may have at most {MONEY_DECIMAL_PLACES} decimal places",
            max_string_length="is too long",
        ),
    )


def decimal_field(*, max_value: int, decimal_places: int, max_digits: int, help_text: str = "",
                  fraction_floor: Decimal | None = None) -> RoundedDecimalField:
    """A figure from 0 to `max_value` (a rate, a percentage, a ratio), rounded half-up to
    `decimal_places` like money is to the cent: 6.2555 is 6.256, not an error about decimal places or
    digits the OpenAPI schema never states (it states minimum and maximum only). A percent passes
    `fraction_floor` (see RoundedDecimalField). Not money: text that is no number "must be a number",
    never "a number of US dollars"."""
    return RoundedDecimalField(
        max_digits=max_digits, decimal_places=decimal_places, min_value=Decimal(0), max_value=Decimal(max_value),
        required=False, allow_null=True, coerce_to_string=False, help_text=help_text, fraction_floor=fraction_floor,
        error_messages=_messages(
            invalid="must be a number", min_value="must be 0 or more", max_value=f"must be at most {max_value}",
            max_digits=f"must be at most {max_value}", max_whole_digits=f"must be at most {max_value}",
            max_decimal_places=f"may have at most {decimal_places} decimal places", max_string_length="is too long",
        ),
    )


_CONTROL = re.compile(f"[{CONTROL_CHARACTERS}]")


def no_control_characters(value: str) -> None:
    """Text may not hold C0 control characters (tab, newline and carriage return aside) nor lone
    surrogates: PostgreSQL refuses NUL, UTF-8 cannot encode a surrogate, and neither is ever meant."""
    if _CONTROL.search(value):
        raise serializers.ValidationError("may not contain control characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise serializers.ValidationError("must be valid Unicode text (it holds a lone surrogate)") from None


class _NoControlCharacters:
    """Our control-character check first, in place of DRF's NUL and surrogate validators, so the
    message reads `<field> may not contain control characters`. (A mixin, not a change made after
    construction: serializers deep-copy their fields by calling the constructor again.)"""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.validators = [
            v for v in self.validators
            if not isinstance(v, ProhibitNullCharactersValidator | ProhibitSurrogateCharactersValidator)
        ]

    def to_internal_value(self, data: Any) -> Any:
        # Text is a JSON string, as the schema states: DRF would store the number -5.8e16 as text.
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)

    def run_validators(self, value: Any) -> None:
        # Alone and first: DRF reports every failing validator, and text with a control character
        # also fails the schema's pattern validator; one message says it.
        no_control_characters(value)
        super().run_validators(value)


class TextField(_NoControlCharacters, serializers.CharField):
    def run_validation(self, data: Any = serializers.empty) -> Any:
        # The length the schema states is the length sent: a 201-character title is refused even
        # when trimming its leading space would bring it to 200.
        if isinstance(data, str) and self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().run_validation(data)


class TextRegexField(_NoControlCharacters, serializers.RegexField):
    def __init__(self, regex: str, **kwargs: Any):
        super().__init__(regex=regex, **kwargs)


# CR and LF: what starts a header line of its own (the other controls are refused as such).
_LINE_BREAK = re.compile(r"[\r\n]")


def one_line(value: str) -> None:
    """A name or subject that goes into an email header: a line break in it would start a header of its
    own (header injection), so it is refused."""
    if _LINE_BREAK.search(value or ""):
        raise serializers.ValidationError("must be one line (no line breaks)")


class OneLineText(RegexValidator):
    """The one-line pattern (stated in the OpenAPI schema), a line break said as such first."""

    def __call__(self, value: Any) -> None:
        one_line(value)
        super().__call__(value)


def text_field(*, max_length: int, required: bool = False, allow_blank: bool = True,
               help_text: str = "", single_line: bool = False) -> serializers.CharField:
    # Control characters and blank text are refused before this validator runs (with their own
    # messages); it is what states those rules in the OpenAPI schema, as the pattern the MCP tools'
    # schemas carry too.
    if single_line:
        pattern = ONE_LINE_TEXT_PATTERN if allow_blank else NON_BLANK_ONE_LINE_TEXT_PATTERN
    else:
        pattern = TEXT_PATTERN if allow_blank else NON_BLANK_TEXT_PATTERN
    return TextField(
        max_length=max_length,
        required=required,
        allow_blank=allow_blank,
        trim_whitespace=True,
        help_text=help_text,
        validators=[(OneLineText if single_line else RegexValidator)(
            pattern, message="may not be blank or hold control characters")],
        error_messages=_messages(max_length=f"must be at most {max_length} characters", invalid="must be text"),
    )


def regex_field(pattern: str, *, message: str, required: bool = False, allow_blank: bool = True,
                help_text: str = "") -> serializers.RegexField:
    """Text matching `pattern`. Whitespace is trimmed first, so Python's `$` matching before a final
    newline never lets one through; the pattern stays ECMA-262 for the OpenAPI schema."""
    return TextRegexField(
        pattern,
        required=required, allow_blank=allow_blank, help_text=help_text,
        error_messages=_messages(invalid=message),
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
            invalid=WHOLE_NUMBER_MESSAGE,
            min_value=f"must be at least {min_value}",
            max_value=f"must be at most {max_value}",
            max_string_length="is too long",
        ),
    )


class BasisPointsField(serializers.IntegerField):
    """Whole basis points; a number with decimals that reads as a percent (a spread of 2.85 sent for
    285 bps) is refused with the basis points meant (lev.vocabulary.bps_message). `sentence_case`: the
    message as a form shows it (the lender program fields' words)."""

    def __init__(self, *args: Any, sentence_case: bool = False, **kwargs: Any):
        self.sentence_case = sentence_case
        super().__init__(*args, **kwargs)

    def to_internal_value(self, data: Any) -> int:
        if bps_from_percent(data, maximum=self.max_value or 0) is not None:
            message = bps_message(data, maximum=self.max_value or 0)
            raise serializers.ValidationError(sentence(message) if self.sentence_case else message, code="invalid")
        return super().to_internal_value(data)


def bps_field(*, max_value: int, help_text: str = "") -> BasisPointsField:
    """A spread in whole basis points from 0 to `max_value` (a term sheet's spread_bps)."""
    return BasisPointsField(
        min_value=0, max_value=max_value, required=False, allow_null=True, help_text=help_text,
        error_messages=_messages(invalid=WHOLE_NUMBER_MESSAGE, min_value="must be at least 0",
                                 max_value=f"must be at most {max_value}", max_string_length="is too long"),
    )


class IsoDateField(serializers.DateField):
    """A date in YYYY-MM-DD; one written another common way ("Feb 26, 2027", "2/26/2027") is refused
    with the ISO date read from it ("did you mean 2027-02-26?")."""

    def to_internal_value(self, value: Any) -> Any:
        try:
            return super().to_internal_value(value)
        except serializers.ValidationError:
            hinted = date_message(value, self.error_messages["invalid"])
            if hinted != self.error_messages["invalid"]:
                raise serializers.ValidationError(hinted, code="invalid") from None
            raise


def date_field(*, required: bool = False, help_text: str = "") -> serializers.DateField:
    return IsoDateField(
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


def page_size_field(default: int = PAGE_SIZE_DEFAULT) -> serializers.IntegerField:
    return int_field(min_value=1, max_value=PAGE_SIZE_MAX, allow_null=False,
                     help_text=f"Default {default}, max {PAGE_SIZE_MAX}.")


class CursorField(serializers.CharField):
    """Opaque text checked by lev.pagination (never stored, never reaches a query as text), so any
    text that is not a cursor, NUL or a lone surrogate included, gets that one message there."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.validators = [v for v in self.validators if not isinstance(
            v, ProhibitNullCharactersValidator | ProhibitSurrogateCharactersValidator)]


def cursor_field() -> serializers.CharField:
    """A keyset list's `cursor` (lev.pagination): opaque, checked there; here only its length."""
    return CursorField(
        required=False, allow_blank=False, trim_whitespace=False, max_length=LIST_CURSOR_MAX,
        help_text="Opaque: the `cursor` of a page's next or previous link, used with the same filters and "
                  "ordering; omit it for the first page.",
        error_messages=_messages(blank="may not be empty; omit cursor for the first page",
                                 max_length=f"must be at most {LIST_CURSOR_MAX} characters", invalid="must be text"),
    )


def page_field(help_text: str = "Default 1.") -> serializers.IntegerField:
    return int_field(min_value=1, max_value=PAGE_NUMBER_MAX, allow_null=False, help_text=help_text)


class PageQuerySerializer(StrictSerializer):
    """`?page=N&page_size=M` of a list with no filters (a deal's properties, a lender's programs)."""

    page = page_field()
    page_size = page_size_field()
