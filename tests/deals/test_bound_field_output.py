"""Output serializers' fields bound once per class (LEV_BOUND_FIELD_OUTPUT, lev.serializers.output_plan),
written out by DRF's loop over them (LEV_FIELD_WRITERS off) or by lev.field_writers' writers (on), against
DRF's own way (LEV_BOUND_FIELD_OUTPUT off): every serializer built on FieldsBuiltOnce writes the demo
data's real objects out byte for byte as DRF does, the REST deal read and the MCP get_deal answer the
same, and a serializer whose output could read its parent, its context or the request takes DRF's way.
On SQLite and PostgreSQL (whichever DATABASE_URL names). Every value a field can hold, in every time
zone: tests/lev/test_field_writers.py."""

from __future__ import annotations

import importlib
import threading
from decimal import Decimal
from io import StringIO

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.db.models import Q
from django.test import Client, override_settings
from django.utils import timezone
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer

from deals import selectors
from deals.models import Deal, DealFinancials, DealProperty, Stage
from deals.pipeline.selectors import pipeline_get
from deals.pipeline.serializers import PipelineSerializer
from deals.serializers import DealSerializer
from lev.accounts.models import Account, Membership
from lev.accounts.services import api_key_create
from lev.serializers import _OUTPUT_PLANS, FieldsBuiltOnce, output_plan, reads_only_the_object
from tests.mcp_tools.mcp_requests import ACCEPT, PROTOCOL, message

pytestmark = pytest.mark.django_db

INCLUDES = [frozenset(), frozenset({"properties"}), frozenset({"financials"}),
            frozenset({"properties", "financials"})]
SERIALIZER_MODULES = ("deals.api", "deals.searches.api", "deals.serializers", "deals.companies.serializers",
                      "deals.notes.serializers", "deals.pipeline.serializers", "lenders.serializers")
# Each class built on FieldsBuiltOnce, and whether its output takes the bound way (the others have a
# SerializerMethodField, which reads its parent).
BOUND = {"DealSerializer": True, "DealPropertySerializer": True, "DealFinancialsSerializer": True,
         "CompanySerializer": True, "StageRefSerializer": True, "StageSerializer": True,
         "PipelineStageSerializer": True, "ContactSerializer": False, "NoteSerializer": False,
         "StageChangeSerializer": False}


def fields_built_once_classes() -> list[type]:
    """Every output serializer on FieldsBuiltOnce (not this file's, nor lev.openapi's documentation-only
    subclasses, which write nothing out)."""
    for module in SERIALIZER_MODULES:
        importlib.import_module(module)
    found, todo = [], list(FieldsBuiltOnce.__subclasses__())
    while todo:
        cls = todo.pop()
        if not cls.__module__.startswith(("tests.", "lev.openapi")):
            found.append(cls)
        todo.extend(cls.__subclasses__())
    assert len({c.__name__ for c in found}) == len(found)
    return sorted(found, key=lambda c: c.__name__)


def render(data) -> bytes:
    return JSONRenderer().render(data)


# DRF's own way; DRF's loop over the fields bound once; lev.field_writers' writers of those fields.
WAYS = {"DRF": {"LEV_BOUND_FIELD_OUTPUT": False}, "bound loop": {"LEV_FIELD_WRITERS": False},
        "writers": {"LEV_BOUND_FIELD_OUTPUT": True, "LEV_FIELD_WRITERS": True}}


def way(name: str):
    return override_settings(**WAYS[name])


def both_ways(settings, write) -> bytes:
    """What `write()` renders DRF's way; asserts the bound ways render the same bytes."""
    rendered = {}
    for name in WAYS:
        with way(name):
            rendered[name] = render(write())
    assert rendered["bound loop"] == rendered["DRF"]
    assert rendered["writers"] == rendered["DRF"]
    return rendered["DRF"]


@pytest.fixture
def demo(db):
    call_command("seed_demo", "--lenders", "60", stdout=StringIO())
    account = Account.objects.get(slug="demo-capital")
    # Null refs beside the demo's full ones: a deal with no owner, sponsor or borrower, nor financials.
    bare = Deal.objects.filter(account=account).order_by("id").first()
    Deal.objects.create(account=account, title="Bare", stage=bare.stage, loan_type=bare.loan_type,
                        transaction_type=bare.transaction_type)
    return account


def test_the_switches_are_on_by_default():
    assert django_settings.LEV_BOUND_FIELD_OUTPUT is True and django_settings.LEV_FIELD_WRITERS is True


def test_every_class_on_fields_built_once_is_decided_as_expected():
    classes = fields_built_once_classes()
    assert {c.__name__: bool(output_plan(c)) for c in classes} == BOUND  # a new class: add it here and below
    # A subclass with its own get_fields (the OpenAPI's nullable copy) may depend on more than its class.
    from deals.api import DealFinancialsDoc
    assert output_plan(DealFinancialsDoc) == ()


def test_every_serializer_writes_the_demo_objects_out_as_drf_does(demo, settings):
    """Each class over every object of its model in the demo data, one by one and as a list."""
    objects = {
        Deal: list(Deal.objects.select_related("stage", "owner", "sponsor", "borrower").order_by("id")),
        Stage: list(Stage.objects.order_by("id")),
    }
    checked = set()
    for cls in fields_built_once_classes():
        if cls.__name__ == "PipelineStageSerializer":
            items = pipeline_get(account=demo).stages  # its counts and totals come from the pipeline read
        else:
            model = cls.Meta.model
            items = objects.get(model) or list(model.objects.order_by("id"))
        assert items, cls.__name__
        for item in items:
            both_ways(settings, lambda: cls(item).data)  # noqa: B023
        both_ways(settings, lambda: cls(items, many=True).data)  # noqa: B023
        checked.add(cls.__name__)
    assert checked == set(BOUND)
    # Both kinds of what the answers hold were there: null and set refs, decimals, dates, choices.
    deals = objects[Deal]
    for ref in ("owner", "sponsor", "borrower"):
        assert any(getattr(d, ref) is None for d in deals) and any(getattr(d, ref) for d in deals), ref
    assert any(d.loan_amount is None for d in deals) and any(d.loan_amount for d in deals)
    assert any(d.estimated_close_date for d in deals) and any(d.business_plan for d in deals)
    assert DealFinancials.objects.exists() and DealProperty.objects.exists()
    assert PipelineSerializer(pipeline_get(account=demo)).data["results"]  # the nested many=True list


def test_every_demo_deal_with_every_include_reads_as_drf_writes_it(demo, settings):
    with_financials = set(DealFinancials.objects.values_list("deal_id", flat=True))
    deals = list(Deal.objects.filter(account=demo).order_by("id"))
    assert any(d.pk in with_financials for d in deals) and any(d.pk not in with_financials for d in deals)
    for zone in (None, "America/New_York"):  # the default time zone (UTC) and an activated one
        with timezone.override(zone):
            for deal in deals:
                for include in INCLUDES:
                    read = selectors.deal_get(account=demo, deal_id=deal.pk, include=include)
                    answer = both_ways(settings, lambda: DealSerializer(read, include=include).data)  # noqa: B023
                    for key in include:
                        assert f'"{key}":'.encode() in answer
    assert b"-05:00" in answer or b"-04:00" in answer


def test_a_deal_without_its_required_relations_reads_as_drf_writes_it(demo, settings):
    """An unsaved deal: no id, and its stage (a required relation) raises RelatedObjectDoesNotExist, which
    DRF writes as null; a loan amount with more places than the column."""
    deal = Deal(title="Unsaved", loan_amount=Decimal("1.005"), loan_type="bridge", transaction_type="acquisition")
    answer = both_ways(settings, lambda: DealSerializer(deal).data)
    assert b'"stage":null' in answer and b'"id":null' in answer and b'"loan_amount":1.0' in answer


def test_the_bound_way_copies_no_field_per_object(demo, settings):
    deal_id = Deal.objects.filter(account=demo, properties__isnull=False).order_by("id").first().pk
    deal = selectors.deal_get(account=demo, deal_id=deal_id,
                              include=frozenset({"properties", "financials"}))
    settings.LEV_BOUND_FIELD_OUTPUT = True
    serializer = DealSerializer(deal, include=frozenset({"properties", "financials"}))
    assert serializer.data["properties"] and serializer.data["financials"]
    assert "fields" not in serializer.__dict__  # DRF's cached field copy was never built
    settings.LEV_BOUND_FIELD_OUTPUT = False
    serializer = DealSerializer(deal)
    assert serializer.data and "fields" in serializer.__dict__  # the long way: DRF's copy


def demo_key(account) -> str:
    member = Membership.objects.filter(account=account).order_by("id").first()
    return api_key_create(user=member.user, account=account, name="bound-output test")[1]


def test_rest_deal_reads_and_mcp_get_deal_answer_the_same_on_and_off(demo, settings):
    settings.LEV_RATE_LIMIT_READS = "100000/min"
    key = demo_key(demo)
    client = Client()
    auth = {"Authorization": f"Bearer {key}"}
    mcp_headers = {**auth, "Accept": ACCEPT, "MCP-Protocol-Version": PROTOCOL}
    for deal_id in Deal.objects.filter(account=demo).order_by("id").values_list("id", flat=True):
        for include in ("", "properties", "financials", "properties,financials"):
            def rest(deal_id=deal_id, include=include):
                answer = client.get(f"/api/v1/deals/{deal_id}/", {"include": include} if include else {},
                                    headers={**auth, "Accept": "application/json", "X-Request-Id": "same"})
                assert answer.status_code == 200
                return answer.content
            ways = {}
            for name in WAYS:
                with way(name):
                    ways[name] = rest()
            assert ways["writers"] == ways["bound loop"] == ways["DRF"]
        arguments = {"deal_id": deal_id}
        ways = {}
        for name in WAYS:
            with way(name):
                answer = client.generic("POST", "/mcp", message("tools/call", {"name": "get_deal",
                                                                                "arguments": arguments}),
                                        content_type="application/json",
                                        headers={**mcp_headers, "X-Request-Id": "same"})
            assert answer.status_code == 200 and b'"isError":false' in answer.content.replace(b" ", b"")
            ways[name] = answer.content
        assert ways["writers"] == ways["bound loop"] == ways["DRF"]


def test_concurrent_threads_share_the_prototype(demo, settings):
    """The request thread and the probe thread write deals out at once, the plan decided while they run."""
    settings.LEV_BOUND_FIELD_OUTPUT = False
    deals = [selectors.deal_get(account=demo, deal_id=pk, include=frozenset({"financials"}))
             for pk in Deal.objects.filter(account=demo).values_list("id", flat=True)]
    for deal in deals:  # the relations loaded before the threads start: they touch no database
        deal.properties.all()
    expected = [render(DealSerializer(d, include=frozenset({"financials"})).data) for d in deals]
    settings.LEV_BOUND_FIELD_OUTPUT = True
    for cls in fields_built_once_classes():
        _OUTPUT_PLANS.pop(cls, None)
    start, failures = threading.Barrier(4), []

    def write():
        start.wait()
        for _ in range(30):
            got = [render(DealSerializer(d, include=frozenset({"financials"})).data) for d in deals]
            if got != expected:
                failures.append(got)

    threads = [threading.Thread(target=write) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    assert output_plan(DealSerializer)


# --- serializers that must take DRF's way ----------------------------------------------------------
class ViewerField(serializers.CharField):
    """A custom field that reads the context: bound in a prototype it would see the prototype's (none)."""

    def to_representation(self, value):
        return f"{value} for {self.context.get('viewer', 'nobody')}"


class ContextStageSerializer(FieldsBuiltOnce, serializers.ModelSerializer):
    name = ViewerField()

    class Meta:
        model = Stage
        fields = ("id", "name")


class ContextRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()

    def to_representation(self, instance):
        return {"id": instance.pk, "seen_by": self.context.get("viewer")}


class DealWithContextRefSerializer(FieldsBuiltOnce, serializers.ModelSerializer):
    stage = ContextRefSerializer()

    class Meta:
        model = Deal
        fields = ("id", "stage")


class DealWithMethodSerializer(FieldsBuiltOnce, serializers.ModelSerializer):
    seen_by = serializers.SerializerMethodField()

    class Meta:
        model = Deal
        fields = ("id", "seen_by")

    def get_seen_by(self, deal):
        return self.context.get("viewer")


class DealWithRelationSerializer(FieldsBuiltOnce, serializers.ModelSerializer):
    class Meta:
        model = Deal
        fields = ("id", "stage")  # a PrimaryKeyRelatedField


class DealWithCallableDefaultSerializer(FieldsBuiltOnce, serializers.ModelSerializer):
    viewer = serializers.CharField(read_only=True, default=serializers.CreateOnlyDefault("x"))

    class Meta:
        model = Deal
        fields = ("id", "viewer")


class PlainRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()


class MarkedRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()

    @reads_only_the_object
    def to_representation(self, instance):
        return {"id": instance.pk, "name": instance.name}


class PlainPropertySerializer(serializers.Serializer):
    name = serializers.CharField()
    units = serializers.IntegerField(allow_null=True)


class DealWithPlainRefsSerializer(FieldsBuiltOnce, serializers.ModelSerializer):
    stage = PlainRefSerializer()
    named = MarkedRefSerializer(source="stage")
    property_names = serializers.ListField(child=serializers.CharField(), source="properties.all", read_only=True)
    properties = PlainPropertySerializer(many=True, read_only=True)  # a nested many=True list

    class Meta:
        model = Deal
        fields = ("id", "stage", "named", "property_names", "properties", "loan_amount")


@pytest.mark.parametrize("cls", [ContextStageSerializer, DealWithContextRefSerializer, DealWithMethodSerializer,
                                 DealWithRelationSerializer, DealWithCallableDefaultSerializer])
def test_a_serializer_that_may_read_its_context_takes_drfs_way(demo, settings, cls):
    assert output_plan(cls) == ()
    model = cls.Meta.model
    for item in model.objects.order_by("id")[:20]:
        answer = both_ways(settings, lambda: cls(item, context={"viewer": "carol"}).data)  # noqa: B023
        if cls is not DealWithRelationSerializer and cls is not DealWithCallableDefaultSerializer:
            assert b"carol" in answer  # the context it was given, not the prototype's


def test_nested_plain_and_marked_serializers_take_the_bound_way(demo, settings):
    assert [f.field_name for f in output_plan(DealWithPlainRefsSerializer)] == [
        "id", "stage", "named", "property_names", "properties", "loan_amount"]
    for deal in Deal.objects.select_related("stage").filter(account=demo):
        both_ways(settings, lambda: DealWithPlainRefsSerializer(deal).data)  # noqa: B023
    assert Deal.objects.filter(~Q(loan_amount=None), properties__isnull=False, account=demo).exists()


class NeedsViewerSerializer(FieldsBuiltOnce, serializers.ModelSerializer):
    """Cannot be built bare (no prototype without a viewer): DRF's way."""

    class Meta:
        model = Stage
        fields = ("id", "name")

    def __init__(self, *args, viewer: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.viewer = viewer


def test_a_serializer_that_cannot_be_built_bare_takes_drfs_way(demo, settings):
    assert output_plan(NeedsViewerSerializer) == ()
    for stage in Stage.objects.order_by("id")[:5]:
        both_ways(settings, lambda: NeedsViewerSerializer(stage, viewer="carol").data)  # noqa: B023
