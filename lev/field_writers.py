"""Writers compiled once from a serializer prototype's bound fields that write an object out exactly as
DRF's `Serializer.to_representation` would, at a fraction of its cost (issue 24; LEV_FIELD_WRITERS).

DRF spends most of an object's write-out in general code asked again for every value: `Field.get_attribute`
walks `source_attrs` in a loop with a Mapping check and a callable check, and each type's
`to_representation` reads its settings again (`DecimalField` copies the decimal context and raises 0.1 to
a power for every number; `DateTimeField` asks asgiref's Local for the active time zone for every date-time).
A writer here decides once, per field of the prototype, how its value is read and written:

- read: a source that is one plain attribute name is `getattr(instance, name)`; what DRF does when that
  raises ObjectDoesNotExist (None), KeyError or AttributeError (the field's default, None when it allows
  null, left out when not required, else DRF's own error) or returns a callable (DRF's own
  `get_attribute`, which calls a method) is done as DRF does it. A dotted or "*" source, and any object
  that is a Mapping, take DRF's `get_attribute`.
- write: DRF's plain value fields get a fast path for the exact types their values are (a `str` for a
  CharField, an `int`, a `Decimal` already at the field's places, an aware `datetime`, ...), which returns
  what DRF's method would return for that value; any other value, and any field class without a writer
  here, goes to the field's own `to_representation`. Nested serializers (and many=True lists of them) are
  compiled the same way, recursively; one whose `to_representation` is marked `reads_only_the_object`
  keeps calling it.

The active time zone a DateTimeField without its own `timezone` converts to is looked up once per
write-out (one call of the writer a FieldsBuiltOnce class's `to_representation` makes), at its first
aware date-time, and not again for each value: Django's active time zone changes only through
`timezone.activate`/`deactivate` (`override` restores it on leaving), and nothing a qualifying serializer
runs while writing one object calls them -- DRF's plain fields do not, and the rule of lev.serializers
(`output_plan`) admits no code of the class's own beyond a `to_representation` that reads only the object.
That lookup is `current_timezone()`: Django's answer, read without asgiref's missing-attribute path when
no zone was ever activated in this context (see there).

Precondition: the fields given are ones lev.serializers' rule admits (`_field_qualifies`): DRF's plain
value fields (or subclasses overriding neither get_attribute nor to_representation) and nested
serializers whose `to_representation` is DRF's, FieldsBuiltOnce's or marked `reads_only_the_object`.
The writers hold no per-call state (the write-out's time zone lives in the `WriteOut` each call makes), so
threads share them. tests/lev/test_field_writers.py holds every writer to DRF's output, value by value.
"""

from __future__ import annotations

import contextvars
import datetime
from collections.abc import Callable, Mapping
from decimal import Decimal, getcontext
from typing import Any

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.db.models.manager import BaseManager
from django.utils import timezone
from rest_framework import ISO_8601, serializers
from rest_framework.fields import SkipField, empty
from rest_framework.relations import PKOnlyObject
from rest_framework.settings import api_settings

# A writer: (the value, or the object for a serializer, not None; the write-out) -> what DRF writes.
Writer = Callable[[Any, "WriteOut"], Any]
_UNSET = object()
# What a JSONField (not binary) or a ReadOnlyField writes as it is, DRF's methods returning the value itself.
_AS_IT_IS = frozenset({str, int, float, bool, dict, list})


def _active_zone_variable() -> contextvars.ContextVar | None:
    """The context variable behind Django's active time zone (django.utils.timezone._active, an asgiref
    Local whose storage is a `_CVar` holding one ContextVar), or None where asgiref keeps it otherwise."""
    try:
        storage = vars(timezone._active).get("_storage")
        variable = vars(storage).get("_data") if storage is not None else None
    except TypeError:  # no __dict__: another asgiref layout
        return None
    return variable if isinstance(variable, contextvars.ContextVar) else None


_ACTIVE_ZONE = _active_zone_variable()


def current_timezone() -> datetime.tzinfo:
    """`timezone.get_current_timezone()`, the same answer. Django asks asgiref's Local for its `value`,
    which, when no zone is active (always, on this site's requests), takes the lock and raises and
    catches an AttributeError whose message formats the storage's repr: 15-25 us of an MCP get_deal
    (issue 24). When the Local's context variable has never been set in this context, no zone was
    activated in it (activate() sets it; deactivate() and leaving override() set it again, without the
    zone), and the answer is the default zone without asking; in every other case Django is asked."""
    if _ACTIVE_ZONE is not None and _ACTIVE_ZONE.get(None) is None:
        return timezone.get_default_timezone()
    return timezone.get_current_timezone()


class WriteOut:
    """What one write-out of one object looks up once: the active time zone (see the module docstring)."""

    __slots__ = ("timezone",)

    def __init__(self) -> None:
        self.timezone: Any = _UNSET

    def active_timezone(self) -> datetime.tzinfo | None:
        """DateTimeField.default_timezone(), asked once."""
        if self.timezone is _UNSET:
            self.timezone = current_timezone() if settings.USE_TZ else None
        return self.timezone


def defined_by(cls: type, name: str) -> type | None:
    """The class of `cls`'s MRO whose own namespace holds `name`."""
    return next((klass for klass in cls.__mro__ if name in klass.__dict__), None)


def _keeps(field: serializers.Field, base: type, *names: str) -> bool:
    """Whether `field` still has `base`'s own attributes `names` (methods or class data its
    to_representation reads), so a fast path written from `base`'s code holds for it."""
    return all(getattr(getattr(field, name), "__func__", getattr(field, name)) is getattr(base, name) for name in names)


def _in_field(field: serializers.Field) -> Callable[[Any], Any]:
    """What DRF's loop writes for a non-None value of `field` read from an object: None for a PKOnlyObject
    without a pk, else the field's own to_representation."""
    to_representation = field.to_representation

    def write(value: Any) -> Any:
        if isinstance(value, PKOnlyObject) and value.pk is None:
            return None
        return to_representation(value)

    return write


# --- value fields: each builder returns (the one exact type whose values the field writes as they are, or
# None; a writer for the rest), or None when the field's settings have no fast path. `slow` is what DRF
# does with a value the fast path does not take.
def _char(field, slow):
    # CharField.to_representation is str(value): a str is itself.
    return str, lambda value, out: value if type(value) is str else slow(value)


def _integer(field, slow):
    return int, lambda value, out: value if type(value) is int else slow(value)  # int(value)


def _big_integer(field, slow):
    own_coerce = getattr(field, "coerce_to_string", _UNSET)

    def write(value, out):
        if type(value) is int:
            coerce = api_settings.COERCE_BIGINT_TO_STRING if own_coerce is _UNSET else own_coerce
            return str(value) if coerce else value
        return slow(value)

    return None, write


def _float(field, slow):
    return float, lambda value, out: value if type(value) is float else slow(value)  # float(value)


def _boolean(field, slow):
    if not _keeps(field, serializers.BooleanField, "TRUE_VALUES", "FALSE_VALUES", "NULL_VALUES", "_lower_if_str"):
        return None
    # DRF's sets hold True and False: each is written as itself.
    return bool, lambda value, out: value if type(value) is bool else slow(value)


def _as_it_is(field, slow):
    if isinstance(field, serializers.JSONField) and field.binary:
        return None
    return None, lambda value, out: value if type(value) in _AS_IT_IS else slow(value)


def _choice(field, slow):
    def write(value, out):
        if type(value) is str:
            # ChoiceField.to_representation: '' as it is, else the choice its text names, or the value.
            return field.choice_strings_to_values.get(value, value) if value else value
        return slow(value)

    # Choices that are all plain text (a model field's, an EnumField's) map each text to itself: a str is
    # written as it is (an equal str). Only when the mapping is DRF's, made once from `choices`.
    plain = (type(field).choices is serializers.ChoiceField.choices
             and "choice_strings_to_values" in vars(field)
             and all(type(key) is str for key in field.choice_strings_to_values.values()))
    return (str if plain else None), write


def _decimal(field, slow):
    if not _keeps(field, serializers.DecimalField, "quantize"):
        return None
    places, digits = field.decimal_places, field.max_digits
    if places is None or digits is None or field.localize or field.normalize_output:
        return None
    own_coerce = getattr(field, "coerce_to_string", _UNSET)
    quantum = Decimal(1).scaleb(-places)
    whole = digits - places
    emin, emax = -(places + digits), digits

    def write(value, out):
        # A Decimal already at the field's places with no more than max_digits digits (a numeric column's
        # value) is what DRF's quantize returns unchanged: no digit is dropped, so the rounding and traps of
        # the thread's decimal context play no part. Its exponent limits would only if absurdly narrow
        # (DRF would signal): then, and for any other value, DRF's own way.
        if type(value) is Decimal and value.same_quantum(quantum) and value.adjusted() < whole:
            context = getcontext()
            if context.Emin <= emin and context.Emax >= emax:
                coerce = api_settings.COERCE_DECIMAL_TO_STRING if own_coerce is _UNSET else own_coerce
                return f"{value:f}" if coerce else value
        return slow(value)

    return None, write


def _datetime(field, slow):
    if not _keeps(field, serializers.DateTimeField, "enforce_timezone", "default_timezone"):
        return None
    own_format = getattr(field, "format", _UNSET)
    own_timezone = getattr(field, "timezone", _UNSET)
    if own_timezone is None:
        return None  # naive output: DRF's way

    def write(value, out):
        # An aware datetime: DRF's enforce_timezone is astimezone(the field's or the active time zone).
        if type(value) is datetime.datetime and value.utcoffset() is not None:
            output_format = api_settings.DATETIME_FORMAT if own_format is _UNSET else own_format
            if output_format == ISO_8601:
                zone = own_timezone
                if zone is _UNSET:
                    zone = out.timezone
                    if zone is _UNSET:
                        zone = out.active_timezone()
                if zone is not None:
                    try:
                        text = value.astimezone(zone).isoformat()
                    except OverflowError:
                        return slow(value)  # DRF's "Datetime value out of range."
                    return text[:-6] + "Z" if text.endswith("+00:00") else text
        return slow(value)

    return None, write


def _date(field, slow):
    own_format = getattr(field, "format", _UNSET)

    def write(value, out):
        if type(value) is datetime.date:
            output_format = api_settings.DATE_FORMAT if own_format is _UNSET else own_format
            if output_format == ISO_8601:
                return value.isoformat()
        return slow(value)

    return None, write


# Keyed by the class whose to_representation the field runs (lev.serializers admits a subclass only when
# it overrides neither get_attribute nor to_representation: EnumField is a ChoiceField here).
_VALUE_WRITERS = {
    serializers.CharField: _char,
    serializers.IntegerField: _integer,
    serializers.BigIntegerField: _big_integer,
    serializers.FloatField: _float,
    serializers.BooleanField: _boolean,
    serializers.ChoiceField: _choice,
    serializers.DecimalField: _decimal,
    serializers.DateTimeField: _datetime,
    serializers.DateField: _date,
    serializers.JSONField: _as_it_is,
    serializers.ReadOnlyField: _as_it_is,
}


class _Never:
    """No value is of this type: the fast type of a field that has none."""


def _field_writer(field: serializers.Field) -> tuple[type, Writer]:
    """(An exact type whose values DRF writes as they are for `field`, or _Never; what DRF's loop writes for
    a non-None value read for it)."""
    if isinstance(field, serializers.BaseSerializer):
        return _Never, serializer_writer(field, as_field=True)
    slow = _in_field(field)
    build = _VALUE_WRITERS.get(defined_by(type(field), "to_representation"))
    built = build(field, slow) if build else None
    if built is None:
        return _Never, lambda value, out: slow(value)
    fast_type, write = built
    return fast_type or _Never, write


def serializer_writer(serializer: serializers.BaseSerializer, *, as_field: bool = False) -> Writer:
    """A writer of `serializer.to_representation(instance)`, the serializer bound in a prototype; `as_field`:
    of what DRF's loop writes for a non-None value read for it as a field of its parent (None for a
    PKOnlyObject without a pk)."""
    if isinstance(serializer, serializers.ListSerializer):
        child = serializer_writer(serializer.child)

        def write_list(data, out):
            if as_field and isinstance(data, PKOnlyObject) and data.pk is None:
                return None
            iterable = data.all() if isinstance(data, BaseManager) else data
            return [child(item, out) for item in iterable]

        return write_list
    if getattr(type(serializer).to_representation, "reads_only_the_object", False):
        to_representation = serializer.to_representation
        if not as_field:
            return lambda instance, out: to_representation(instance)

        def write_marked(value, out):
            if isinstance(value, PKOnlyObject) and value.pk is None:
                return None
            return to_representation(value)

        return write_marked
    return fields_writer(tuple(serializer._readable_fields), as_field=as_field)


def write_with_fields(fields: tuple, instance: Any) -> dict:
    """DRF's Serializer.to_representation over `fields` (bound in a prototype)."""
    ret = {}
    for field in fields:
        try:
            attribute = field.get_attribute(instance)
        except SkipField:
            continue
        check_for_none = attribute.pk if isinstance(attribute, PKOnlyObject) else attribute
        if check_for_none is None:
            ret[field.field_name] = None
        else:
            ret[field.field_name] = field.to_representation(attribute)
    return ret


def _missing(field: serializers.Field, instance: Any) -> Any:
    """Field.get_attribute's answer when the attribute raised KeyError or AttributeError."""
    if field.default is not empty:
        return field.get_default()
    if field.allow_null:
        return None
    if not field.required:
        raise SkipField()
    return field.get_attribute(instance)  # raises DRF's own error, naming the field and the object


_OBJECT, _MAPPING, _PK_ONLY = range(3)
# What objects of a type are to DRF's loop, asked once per type, not per object: a Mapping (read by key,
# not attribute), a PKOnlyObject (None as a field's value when it has no pk), or any other object.
_KINDS: dict[type, int] = {}


def _kind(instance: Any) -> int:
    kind = (_MAPPING if isinstance(instance, Mapping) else _PK_ONLY if isinstance(instance, PKOnlyObject)
            else _OBJECT)
    if defined_by(type(instance), "__class__") is object:  # not a proxy (SimpleLazyObject): its type decides
        _KINDS[type(instance)] = kind
    return kind


def fields_writer(fields: tuple, *, as_field: bool = False) -> Writer:
    """A writer of DRF's Serializer.to_representation over `fields` (readable fields bound in a prototype);
    `as_field`: see serializer_writer."""
    plan = []
    for field in fields:
        source = field.source_attrs
        plain = type(field).get_attribute is serializers.Field.get_attribute and len(source) == 1
        plan.append((field.field_name, source[0] if plain else None, field, *_field_writer(field)))
    plan = tuple(plan)

    def write(instance, out):
        kind = _KINDS.get(type(instance))
        if kind is None:
            kind = _kind(instance)
        if kind != _OBJECT:
            if kind == _MAPPING:  # DRF reads a key, not an attribute
                return write_with_fields(fields, instance)
            if as_field and instance.pk is None:
                return None
        ret = {}
        for name, attr, field, fast_type, write_value in plan:
            try:
                if attr is None:
                    value = field.get_attribute(instance)
                else:
                    try:
                        value = getattr(instance, attr)
                    except ObjectDoesNotExist:
                        value = None
                    except (KeyError, AttributeError):
                        value = _missing(field, instance)
                    else:
                        if type(value) is fast_type:  # a str of a CharField, an int of an IntegerField, ...
                            ret[name] = value
                            continue
                        if callable(value):  # a method DRF calls, or a callable it keeps: its own rule
                            value = field.get_attribute(instance)
            except SkipField:
                continue
            ret[name] = None if value is None else write_value(value, out)
        return ret

    return write
