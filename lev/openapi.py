"""OpenAPI pieces every REST view shares: the one error body, the error responses each kind of
operation can give, and the Idempotency-Key header. The schema must say what the API does, since
clients and the schemathesis fuzz suite (tests/fuzz) both take it at its word."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiSerializerExtension, OpenApiSerializerFieldExtension
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema_serializer
from rest_framework import serializers

from lev.errors import ErrorCode
from lev.limits import IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_KEY_PATTERN

# Plain strings in the schema (its enum lists them in ErrorCode's order).
ERROR_CODES = tuple(code.value for code in ErrorCode)


class ErrorSerializer(serializers.Serializer):
    """The API's one error body (documentation only)."""

    code = serializers.ChoiceField(choices=ERROR_CODES)
    message = serializers.CharField(help_text="Starts with the code's prefix, e.g. `Validation failed: `.")
    details = serializers.DictField(help_text="`fields` for validation errors; `customer_message` for "
                                              "business rules; `retry_after_seconds` for rate limits.")


_DESCRIPTIONS = {
    400: "Validation failed: a parameter or the body is invalid (`details.fields` names each).",
    401: "Unauthorized: no API key, or an invalid, revoked or expired one.",
    403: "Forbidden: the key's role or scopes do not allow this.",
    404: "Not found (also for another account's objects).",
    409: "Conflict, or a business rule (`BUSINESS_RULE`, with `details.customer_message`).",
    413: "The request body is too large.",
    429: "Rate limit exceeded: wait `Retry-After` seconds.",
    503: "A dependency of the API is down: retry after `Retry-After` seconds.",
}


def error_responses(*statuses: int) -> dict[int, OpenApiResponse]:
    return {status: OpenApiResponse(ErrorSerializer, description=_DESCRIPTIONS[status]) for status in statuses}


READ_ERRORS = error_responses(400, 401, 403, 404, 429, 503)
WRITE_ERRORS = error_responses(400, 401, 403, 404, 409, 413, 429, 503)

IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "minLength": 1, "maxLength": IDEMPOTENCY_KEY_MAX, "pattern": IDEMPOTENCY_KEY_PATTERN},
    OpenApiParameter.HEADER,
    description="Optional: repeat a create with the same key and body and the first response is replayed "
                "(`Idempotent-Replayed: true`) instead of creating again. Visible ASCII, 1-255 characters.",
)


class StrictSerializerScheme(OpenApiSerializerExtension):
    """A StrictSerializer refuses keys it does not know, so its schema says additionalProperties:
    false (otherwise a schema-valid body with an extra key would be refused)."""

    target_class = "lev.serializers.StrictSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_basic_serializer(self.target, direction)
        schema["additionalProperties"] = False
        return schema


class PercentFieldScheme(OpenApiSerializerFieldExtension):
    """A percent field with a `fraction_floor` (lev.serializers.RoundedDecimalField) refuses a value
    above 0 and below the floor (a fraction sent for a percent): its schema says so with `not`, so a
    schema-valid value is never refused. OpenAPI 3.0's boolean exclusiveMinimum/Maximum."""

    target_class = "lev.serializers.RoundedDecimalField"
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        floor = getattr(self.target, "fraction_floor", None)
        if floor is not None and direction == "request":
            schema["not"] = {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": float(floor),
                             "exclusiveMaximum": True}
        return schema


def nullable_fields(serializer: type[serializers.Serializer], *names: str) -> type[serializers.Serializer]:
    """A documentation-only subclass of `serializer` (same component name) whose `names` are marked
    nullable: fields the view can return as null although the serializer does not say so."""

    class Documented(serializer):  # type: ignore[valid-type, misc]
        def get_fields(self):
            fields = super().get_fields()
            for name in names:
                fields[name].allow_null = True
            return fields

    name = serializer.__name__.removesuffix("Serializer")
    Documented.__name__ = Documented.__qualname__ = f"{name}Serializer"
    return extend_schema_serializer(component_name=name)(Documented)
