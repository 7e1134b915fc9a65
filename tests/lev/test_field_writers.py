"""lev.field_writers (LEV_FIELD_WRITERS) against DRF's own way: every output serializer of the project whose
class takes the bound way (found by walking the project's serializer modules), and a serializer holding
every DRF field class, write out objects with every field set, every field null, every attribute absent,
a Mapping, and unusual values (naive and non-UTC date-times, decimals with more places than the field or
none at all, huge and negative numbers, unicode, empty text, callables, PKOnlyObjects) to the same data
and the same JSON bytes -- or raise the same error -- as DRF does, under the default time zone, activated
non-UTC ones, USE_TZ off, other REST_FRAMEWORK formats and other decimal contexts. DRF's bound loop (the
writers off) is held to the same answers."""

from __future__ import annotations

import contextlib
import datetime
import decimal
import enum
import importlib
import pkgutil
import uuid
from decimal import Decimal
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ObjectDoesNotExist
from django.test import override_settings
from django.utils import timezone
from django.utils.functional import SimpleLazyObject
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy
from rest_framework import serializers
from rest_framework.relations import PKOnlyObject
from rest_framework.renderers import JSONRenderer

from lev.serializers import FieldsBuiltOnce, output_plan, reads_only_the_object

PACKAGES = ("lev", "lenders", "deals", "mcp_tools")
# The project's classes that take the bound way (tests/deals/test_bound_field_output.py decides each).
BOUND = {"CompanySerializer", "DealFinancialsSerializer", "DealPropertySerializer", "DealSerializer",
         "PipelineStageSerializer", "StageRefSerializer", "StageSerializer"}
UTC = datetime.UTC
NEW_YORK = ZoneInfo("America/New_York")


def project_serializer_classes() -> list[type]:
    """Every serializer class the project defines, its serializer and API modules imported first."""
    for package in PACKAGES:
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
            if info.name.rsplit(".", 1)[-1] in ("serializers", "api"):
                importlib.import_module(info.name)
    found, todo = set(), [serializers.BaseSerializer]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.split(".")[0] in PACKAGES:
                found.add(sub)
    return sorted(found, key=lambda c: (c.__module__, c.__name__))


def bound_classes() -> list[type]:
    """The project's output serializers whose objects are written out through a compiled plan."""
    return [c for c in project_serializer_classes() if issubclass(c, FieldsBuiltOnce) and output_plan(c)]


# --- values ------------------------------------------------------------------------------------------
class Kind(enum.Enum):
    A = "a"


class Shade(enum.StrEnum):
    RED = "red"


class Stamp(datetime.datetime):
    """A datetime subclass (as pandas' Timestamp is): DRF's way, not the fast path."""


class Money(Decimal):
    pass


class NoOffset(datetime.tzinfo):
    """A tzinfo without an offset: Django counts such a datetime naive."""

    def utcoffset(self, dt):
        return None


def _text_values() -> list:
    return ["", "Riverside", "Zoë\u2019s ünïcødé ✓ 😀 中文", "x" * 5000, "  padded  ", '"q" \\ </script>\n\t',
            mark_safe("<b>safe</b>"), gettext_lazy("Yes"), 42, Decimal("1.10"), Shade.RED,
            lambda: "called", lambda x: x, PKOnlyObject(pk=None), PKOnlyObject(pk=3), len]


def _decimal_values(field: serializers.DecimalField) -> list:
    places = field.decimal_places if field.decimal_places is not None else 2
    digits = field.max_digits if field.max_digits is not None else 20
    return [Decimal(0).scaleb(-places), Decimal("-0").scaleb(-places), Decimal(10**digits - 1).scaleb(-places),
            -Decimal(10**digits - 1).scaleb(-places), Decimal("123.456789123"), Decimal(125).scaleb(-places - 1),
            Decimal(5), Decimal("5.1"), Decimal("1E+2"), Decimal(10**digits).scaleb(-places),
            Decimal(7).scaleb(-places - 3),
            7, 0.1, True, " 3.14 ", Money("2.50"), Decimal("NaN"), Decimal("Infinity"), Decimal("-Infinity"),
            Decimal("sNaN"), "abc", PKOnlyObject(pk=None)]


def _datetime_values() -> list:
    micro = datetime.datetime(2026, 3, 8, 6, 30, 0, 123456, tzinfo=UTC)
    return [micro, micro.replace(microsecond=0), micro.astimezone(NEW_YORK),
            datetime.datetime(2026, 7, 4, 12, tzinfo=NEW_YORK),
            datetime.datetime(2026, 11, 1, 1, 30, tzinfo=NEW_YORK, fold=1),
            datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=5, minutes=30))),
            datetime.datetime(2026, 1, 2, tzinfo=ZoneInfo("UTC")),
            datetime.datetime(2026, 1, 2, 3, 4, 5),  # naive
            datetime.datetime(2026, 3, 8, 2, 30),  # naive, does not exist in New York
            datetime.datetime(2026, 11, 1, 1, 30),  # naive, twice in New York
            datetime.datetime.max.replace(tzinfo=UTC), datetime.datetime.min.replace(tzinfo=UTC),
            datetime.datetime(2026, 1, 2, tzinfo=NoOffset()), Stamp(2026, 1, 2, tzinfo=UTC),
            datetime.date(2026, 1, 2), "2026-01-02T03:04:05Z", PKOnlyObject(pk=None)]


def _date_values() -> list:
    return [datetime.date(2026, 1, 2), datetime.date.min, datetime.date.max, datetime.datetime(2026, 1, 2, 3, 4),
            "2026-01-02", PKOnlyObject(pk=None)]


def _integer_values() -> list:
    return [0, -1, 2**63 - 1, -(2**63), 10**40, True, Decimal("3.9"), 2.7, "12", "abc", PKOnlyObject(pk=None),
            PKOnlyObject(pk=3)]


def _choice_values(field: serializers.ChoiceField) -> list:
    return [*list(field.choices)[:4], "", "no-such-choice", 1, Kind.A, Shade.RED, mark_safe("x"),
            PKOnlyObject(pk=None)]


def values_for(field: serializers.Field) -> list:
    """Values (never None) an object may hold for `field`: the usual and the unusual."""
    if isinstance(field, serializers.ListSerializer):
        children = objects_for(field.child, few=True)
        return [[children[0], children[-1]], [], (children[1], children[2])]
    if isinstance(field, serializers.BaseSerializer):
        return [*objects_for(field, few=True), PKOnlyObject(pk=None)]
    if isinstance(field, serializers.BooleanField):
        return [True, False, 1, 0, "yes", "false", "null", 2, PKOnlyObject(pk=None)]
    if isinstance(field, serializers.ChoiceField):  # before CharField's kin: MultipleChoiceField is one
        values = _choice_values(field)
        if isinstance(field, serializers.MultipleChoiceField):
            values = [set(values[:2]), [], ["", "no-such-choice"]]
        return values
    if isinstance(field, serializers.DecimalField):
        return _decimal_values(field)
    if isinstance(field, serializers.DateTimeField):
        return _datetime_values()
    if isinstance(field, serializers.DateField):
        return _date_values()
    if isinstance(field, serializers.IntegerField):
        return _integer_values()
    if isinstance(field, serializers.FloatField):
        return [1.5, -0.0, 1e308, 5, Decimal("1.1"), float("nan"), "2.5", PKOnlyObject(pk=None)]
    if isinstance(field, serializers.UUIDField):
        return [uuid.UUID(int=7), "not-a-uuid"]
    if isinstance(field, serializers.TimeField):
        return [datetime.time(1, 2, 3), datetime.time(4, 5, tzinfo=UTC), ""]
    if isinstance(field, serializers.DurationField):
        return [datetime.timedelta(days=1, seconds=3), datetime.timedelta(0)]
    if isinstance(field, serializers.ListField):
        return [[values_for(field.child)[0], None], [], ("a", "b")]
    if isinstance(field, serializers.DictField):
        return [{"a": values_for(field.child)[0], 2: None}, {}]
    if isinstance(field, serializers.JSONField | serializers.ReadOnlyField):
        return [{"a": [1, "ü", None]}, [1, 2], "text", 3, True, 1.5, Decimal("1.5"), PKOnlyObject(pk=None)]
    return _text_values()  # CharField and its kin; any other field


class Raises:
    """An attribute of an Obj that raises `error` when read (as a property or a related object may)."""

    def __init__(self, error: Exception):
        self.error = error

    def __repr__(self):
        return f"Raises({self.error!r})"


# DRF: ObjectDoesNotExist is None; KeyError and AttributeError are the field's default, None, left out or
# an error naming the field; anything else goes up.
RAISING = [Raises(ObjectDoesNotExist("gone")), Raises(KeyError("k")), Raises(AttributeError("a")),
           Raises(ValueError("v"))]


class Obj(SimpleNamespace):
    """An object holding only the attributes given (any other raises AttributeError); its `pk` is its `id`
    (CompanyRefSerializer's own to_representation reads it)."""

    def __getattribute__(self, name):
        value = super().__getattribute__(name)
        if isinstance(value, Raises):
            raise value.error
        return value

    def __getattr__(self, name):
        if name == "pk" and "id" in self.__dict__:
            return self.__dict__["id"]
        raise AttributeError(name)


def objects_for(serializer: serializers.Serializer, *, few: bool = False) -> list:
    """Objects for `serializer` (bound): one with every field's first (usual) value; one with every field
    None; for each field, one per other value, the rest usual; one with no attribute at all; each
    attribute absent in turn; and a dict (a Mapping, which DRF reads by key). `few`: the first two, one
    varied, the empty one and the dict."""
    fields = [f for f in serializer.fields.values() if not f.write_only]
    columns = {f.source_attrs[0]: values_for(f) for f in fields if len(f.source_attrs) == 1}
    usual = {name: values[0] for name, values in columns.items()}
    varied = [Obj(**{**usual, name: value}) for name, values in columns.items() for value in values[1:]]
    as_dict = {name: values[1 % len(values)] for name, values in columns.items()}
    nulls = Obj(**dict.fromkeys(columns))
    if few:
        return [Obj(**usual), nulls, *varied[:1], Obj(), as_dict]
    absent = [Obj(**{n: v for n, v in usual.items() if n != name}) for name in columns]
    raising = [Obj(**{**usual, name: error}) for name in columns for error in RAISING]
    # Proxies whose type is not what they are: one of an object, then one of a dict (DRF asks isinstance).
    proxies = [SimpleLazyObject(lambda: Obj(**usual)), SimpleLazyObject(lambda: dict(as_dict))]
    return [Obj(**usual), nulls, *varied, Obj(), *absent, *raising, *proxies, as_dict]


# --- the three ways ----------------------------------------------------------------------------------
WAYS = {"DRF": {"LEV_BOUND_FIELD_OUTPUT": False}, "bound loop": {"LEV_FIELD_WRITERS": False},
        "writers": {"LEV_BOUND_FIELD_OUTPUT": True, "LEV_FIELD_WRITERS": True}}


def outcome(write) -> tuple:
    """What `write()` gives: its data and JSON bytes (or the renderer's error), or the error it raised."""
    try:
        data = write()
    except Exception as exc:
        return ("raised", type(exc), str(exc))
    try:
        rendered = JSONRenderer().render(data)
    except Exception as exc:
        rendered = ("render raised", type(exc), str(exc))
    return ("written", data, rendered)


def assert_same(got: tuple, expected: tuple, what: str) -> None:
    assert got[0] == expected[0], (what, got, expected)
    if got[0] == "raised":
        assert got == expected, what
        return
    data, rendered = got[1], got[2]
    assert rendered == expected[2], what  # the JSON bytes
    assert repr(data) == repr(expected[1]), what  # the same types, not just equal values (1 is not True)
    if "nan" not in repr(expected[1]).lower():  # NaN is equal to nothing, itself included
        assert data == expected[1], what


def every_way(write, what: str) -> tuple:
    """What `write()` gives DRF's way; asserts the bound loop and the writers give the same."""
    results = {}
    for way, switches in WAYS.items():
        with override_settings(**switches):
            results[way] = outcome(write)
    for way in ("bound loop", "writers"):
        assert_same(results[way], results["DRF"], f"{what}, {way}")
    return results["DRF"]


# Each environment a write-out may meet: the active time zone, USE_TZ, DRF's formats and coercions, the
# thread's decimal context.
def rest_framework(**overrides) -> override_settings:
    return override_settings(REST_FRAMEWORK={**django_settings.REST_FRAMEWORK, **overrides})


ENVIRONMENTS = {
    "default": contextlib.nullcontext,
    "New York": lambda: timezone.override(NEW_YORK),
    "Kathmandu": lambda: timezone.override("Asia/Kathmandu"),
    "USE_TZ off": lambda: override_settings(USE_TZ=False),
    "other formats": lambda: rest_framework(DATETIME_FORMAT="%d/%m/%Y %H:%M:%S%z", DATE_FORMAT="%Y/%m/%d",
                                            COERCE_DECIMAL_TO_STRING=True, COERCE_BIGINT_TO_STRING=True),
    "no formats": lambda: rest_framework(DATETIME_FORMAT=None, DATE_FORMAT=None),
    "rounding down": lambda: decimal.localcontext(rounding=decimal.ROUND_DOWN, prec=5),
    "narrow exponents": lambda: decimal.localcontext(Emin=-4, Emax=4),
}


def check_class(cls: type) -> int:
    """Writes out every object for `cls` one by one, and a few as a list, in every environment; how many
    were written out (not refused with an error) in all."""
    objects = objects_for(cls())
    written = 0
    for environment, enter in ENVIRONMENTS.items():
        with enter():
            for i, obj in enumerate(objects):
                got = every_way(lambda obj=obj: cls(obj).data, f"{cls.__name__} #{i}, {environment}")
                written += got[0] == "written"
            listed = [objects[0], objects[1], objects[-1]]
            every_way(lambda listed=listed: cls(listed, many=True).data, f"{cls.__name__} list, {environment}")
    assert written > len(objects) * len(ENVIRONMENTS) / 2  # most objects are written out, not refused
    return len(objects)


# --- the project's classes ---------------------------------------------------------------------------
def test_the_walk_finds_every_class_that_takes_the_bound_way():
    assert {c.__name__ for c in bound_classes()} == BOUND  # a new one: add it to tests/deals too


@pytest.mark.parametrize("cls", bound_classes(), ids=lambda c: c.__name__)
def test_every_bound_project_serializer_writes_what_drf_writes(cls):
    assert check_class(cls) > 10


def test_the_values_reach_both_sides_of_every_fast_path():
    """The deal's values hold both what a fast path takes and what it leaves to DRF: aware UTC and other
    date-times (New York: converted), decimals at the field's places and not, text and not."""
    from deals.serializers import DealSerializer

    objects = objects_for(DealSerializer())
    loan_amounts = [vars(o).get("loan_amount") for o in objects if type(o) is Obj]
    assert Decimal("0.00") in loan_amounts and Decimal("123.456789123") in loan_amounts
    with timezone.override(NEW_YORK):
        data = DealSerializer(objects[0]).data
    assert data["created_at"] == "2026-03-08T01:30:00.123456-05:00" and data["loan_amount"] == Decimal("0.00")
    assert data["stage"]["id"] == 0 and data["title"] == ""


# --- every DRF field class -----------------------------------------------------------------------------
class RefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    at = serializers.DateTimeField()


class MarkedSerializer(serializers.Serializer):
    name = serializers.CharField()

    @reads_only_the_object
    def to_representation(self, instance):
        return {"name": str(getattr(instance, "name", "?"))}


class EveryFieldSerializer(FieldsBuiltOnce, serializers.Serializer):
    """Every plain DRF field class, with the settings each writer reads (a fast path or DRF's way)."""

    text = serializers.CharField()
    email = serializers.EmailField(allow_null=True)
    url = serializers.URLField(required=False)
    slug = serializers.SlugField(default="dflt")
    regex = serializers.RegexField(r"^a", required=False, allow_null=True)
    ip = serializers.IPAddressField(required=False)
    uid = serializers.UUIDField(required=False)
    uid_hex = serializers.UUIDField(format="hex", required=False)
    count = serializers.IntegerField(required=False)
    big = serializers.BigIntegerField(required=False)
    big_text = serializers.BigIntegerField(coerce_to_string=True, required=False)
    ratio = serializers.FloatField(required=False)
    amount = serializers.DecimalField(max_digits=12, decimal_places=2, required=False)
    amount_text = serializers.DecimalField(max_digits=5, decimal_places=3, coerce_to_string=True, required=False)
    amount_up = serializers.DecimalField(max_digits=8, decimal_places=1, rounding=decimal.ROUND_UP, required=False)
    amount_local = serializers.DecimalField(max_digits=8, decimal_places=2, localize=True, required=False)
    amount_normal = serializers.DecimalField(max_digits=8, decimal_places=2, normalize_output=True, required=False)
    amount_any = serializers.DecimalField(max_digits=None, decimal_places=None, required=False)
    amount_wide = serializers.DecimalField(max_digits=None, decimal_places=4, required=False)
    at = serializers.DateTimeField(required=False)
    at_tokyo = serializers.DateTimeField(default_timezone=ZoneInfo("Asia/Tokyo"), required=False)
    at_text = serializers.DateTimeField(format="%Y-%m-%d %H:%M %Z", required=False)
    at_raw = serializers.DateTimeField(format=None, required=False)
    at_iso_upper = serializers.DateTimeField(format="ISO-8601", required=False)
    day = serializers.DateField(required=False)
    day_text = serializers.DateField(format="%d.%m.%Y", required=False)
    clock = serializers.TimeField(required=False)
    span = serializers.DurationField(required=False)
    choice = serializers.ChoiceField(choices=[("open", "Open"), ("won", "Won")], required=False)
    choice_int = serializers.ChoiceField(choices=[(1, "One"), (2, "Two")], required=False)
    choice_enum = serializers.ChoiceField(choices=[(Kind.A, "A"), (Shade.RED, "Red")], required=False)
    choices = serializers.MultipleChoiceField(choices=["open", "won"], required=False)
    flag = serializers.BooleanField(required=False)
    flag_null = serializers.BooleanField(allow_null=True, required=False)
    blob = serializers.JSONField(required=False)
    blob_binary = serializers.JSONField(binary=True, required=False)
    raw = serializers.ReadOnlyField()
    numbers = serializers.ListField(child=serializers.IntegerField(), required=False)
    labels = serializers.DictField(child=serializers.CharField(), required=False)
    ref = RefSerializer(required=False, allow_null=True)
    refs = RefSerializer(many=True, required=False)
    marked = MarkedSerializer(required=False)
    ref_name = serializers.CharField(source="ref.name", required=False)
    hidden = serializers.CharField(write_only=True)


class InvertedBooleanField(serializers.BooleanField):
    TRUE_VALUES = {"yes"}
    FALSE_VALUES = {"no", True}  # DRF writes True as False


class ShiftedDateTimeField(serializers.DateTimeField):
    def enforce_timezone(self, value):
        return super().enforce_timezone(value) + datetime.timedelta(hours=1)


class TruncatingDecimalField(serializers.DecimalField):
    def quantize(self, value):
        return value.quantize(Decimal(1), rounding=decimal.ROUND_DOWN)


class ShoutedChoiceField(serializers.ChoiceField):
    """Its choices' mapping is computed when read: DRF's to_representation reads it for every value."""

    @property
    def choice_strings_to_values(self):
        return {text: text.upper() for text in self._texts}

    @choice_strings_to_values.setter
    def choice_strings_to_values(self, mapping):
        self._texts = list(mapping)


class KinSerializer(FieldsBuiltOnce, serializers.Serializer):
    """Subclasses of DRF's fields that keep its to_representation but change what it reads: DRF's way."""

    flag = InvertedBooleanField(required=False)
    at = ShiftedDateTimeField(required=False)
    amount = TruncatingDecimalField(max_digits=8, decimal_places=2, required=False)
    choice = ShoutedChoiceField(choices=["open", "won"], required=False)
    whole = serializers.JSONField(source="*", required=False)  # the object itself


def test_the_every_field_serializer_takes_the_bound_way():
    assert [f.field_name for f in output_plan(EveryFieldSerializer)][:3] == ["text", "email", "url"]
    assert [f.field_name for f in output_plan(KinSerializer)] == ["flag", "at", "amount", "choice", "whole"]


@pytest.mark.parametrize("cls", [EveryFieldSerializer, KinSerializer], ids=lambda c: c.__name__)
def test_every_drf_field_class_writes_what_drf_writes(cls):
    assert check_class(cls) > 20


def test_a_serializer_made_with_partial_leaves_out_a_missing_default_as_drf_does():
    """DRF's get_default skips a field with a default when the root serializer is partial."""
    obj = Obj(text="t")
    got = every_way(lambda: EveryFieldSerializer(obj, partial=True).data, "partial")
    assert got[0] == "written" and "slug" not in got[1] and "text" in got[1]
    assert EveryFieldSerializer(obj).data["slug"] == "dflt"


# --- the write-out's time zone --------------------------------------------------------------------------
def test_each_write_out_asks_the_active_time_zone_again():
    """The time zone is kept for one object, never from one write-out to the next."""
    obj = Obj(**{name: None for name in ("text", "email", "slug", "raw", "ref", "refs", "marked")},
              at=datetime.datetime(2026, 1, 2, 12, tzinfo=UTC))
    assert EveryFieldSerializer(obj).data["at"] == "2026-01-02T12:00:00Z"
    with timezone.override(NEW_YORK):
        assert EveryFieldSerializer(obj).data["at"] == "2026-01-02T07:00:00-05:00"
    with timezone.override("Asia/Kathmandu"):
        assert EveryFieldSerializer(obj).data["at"] == "2026-01-02T17:45:00+05:45"
    assert EveryFieldSerializer(obj).data["at"] == "2026-01-02T12:00:00Z"


def test_the_current_time_zone_is_djangos_in_every_state():
    """lev.field_writers.current_timezone answers what Django's get_current_timezone answers: nothing
    activated, activated, deactivated again, overridden and restored, in another thread and in a copied
    context; and its shortcut is the one taken here (asgiref's layout is the one it reads)."""
    import contextvars
    import threading

    from lev import field_writers

    assert field_writers._ACTIVE_ZONE is not None  # the shortcut is live with the pinned asgiref
    states = []

    def both() -> None:
        states.append((field_writers.current_timezone(), timezone.get_current_timezone()))

    both()
    with timezone.override(NEW_YORK):
        both()
        with timezone.override(None):
            both()
        both()
    both()
    timezone.activate("Asia/Kathmandu")
    try:
        both()
        contextvars.copy_context().run(both)
        thread = threading.Thread(target=both)
        thread.start()
        thread.join()
    finally:
        timezone.deactivate()
    both()
    assert all(ours == djangos for ours, djangos in states), states
    zones = [str(ours) for ours, _ in states]
    default = str(timezone.get_default_timezone())
    assert zones == [default, str(NEW_YORK), default, str(NEW_YORK), default, "Asia/Kathmandu",
                     "Asia/Kathmandu", default, default], zones


def test_the_writers_leave_drfs_per_value_methods_alone(settings, monkeypatch):
    """What the writers are for: a deal's values are read and written without DRF's get_attribute or
    the value fields' to_representation, and the active time zone is asked once per object, not per
    date-time. (Counted, not replaced: DRF's methods still run when called.)"""
    from deals.serializers import DealSerializer

    deal = objects_for(DealSerializer())[0]
    deal.archived_at = deal.created_at  # three date-times
    expected = DealSerializer(deal).data  # the plans decided before DRF's methods are wrapped
    calls = []

    def counting(owner, name, label):
        method = getattr(owner, name)

        def count(*args, **kwargs):
            calls.append(label)
            return method(*args, **kwargs)

        monkeypatch.setattr(owner, name, count)

    for owner in (serializers.CharField, serializers.IntegerField, serializers.BigIntegerField,
                  serializers.DecimalField, serializers.DateTimeField, serializers.DateField,
                  serializers.ChoiceField, serializers.BooleanField):
        counting(owner, "to_representation", f"{owner.__name__}.to_representation")
    counting(serializers.Field, "get_attribute", "get_attribute")
    counting(timezone, "get_current_timezone", "get_current_timezone")
    assert DealSerializer(deal).data == expected
    assert calls == ["get_current_timezone"]
    settings.LEV_FIELD_WRITERS = False  # DRF's loop over the bound fields: every method, every value
    calls.clear()
    assert DealSerializer(deal).data == expected
    assert calls.count("get_current_timezone") == 3 and calls.count("get_attribute") == 16 + 4 + 2
