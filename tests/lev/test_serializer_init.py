"""FieldsBuiltOnce's __init__ (LEV_BOUND_FIELD_OUTPUT): an output serializer made with an object and at most a
context takes the state DRF's own __init__ would give it, copied from the class's first instance, without
DRF's Field.__init__ and its write to the class attribute Field._creation_counter. Held to DRF's way for
every FieldsBuiltOnce class of the project: the same instance state attribute for attribute (the creation
counter aside), nothing mutable shared between instances, the same data written, and every other way of
making one (data, partial, many, other keyword arguments) still DRF's."""

from __future__ import annotations

import pytest
from rest_framework import serializers
from rest_framework.fields import Field

from lev import serializers as lev_serializers
from lev.serializers import FieldsBuiltOnce
from tests.lev.test_field_writers import Obj, objects_for, project_serializer_classes

CLASSES = [c for c in project_serializer_classes() if issubclass(c, FieldsBuiltOnce)]


def drf_made(cls, *args, **kwargs):
    """An instance made by DRF's own __init__ (no state recorded or copied)."""
    kept = lev_serializers._INIT_STATES.pop(cls, None)
    lev_serializers._INIT_STATES[cls] = None  # present: nothing is recorded, and None is never copied
    try:
        return cls(*args, **kwargs)
    finally:
        del lev_serializers._INIT_STATES[cls]
        if kept is not None:
            lev_serializers._INIT_STATES[cls] = kept


def copied(cls, *args, **kwargs):
    """An instance made the short way (the class's state recorded first when it was not yet)."""
    cls()
    assert lev_serializers._INIT_STATES.get(cls) is not None, cls
    counter = Field._creation_counter
    made = cls(*args, **kwargs)
    assert Field._creation_counter == counter, "the short way wrote Field._creation_counter"
    return made


def state(instance) -> dict:
    return {k: v for k, v in vars(instance).items() if k != "_creation_counter"}


def test_there_are_classes_to_hold():
    assert {"DealSerializer", "CompanySerializer", "StageRefSerializer", "NoteSerializer"} <= {
        c.__name__ for c in CLASSES}


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_the_copied_state_is_drfs(cls):
    obj = Obj()
    context = {"request": None}
    for args, kwargs in [((), {}), ((obj,), {}), ((obj,), {"context": context}), ((), {"instance": obj})]:
        ours, drfs = copied(cls, *args, **kwargs), drf_made(cls, *args, **kwargs)
        assert state(ours) == state(drfs), (cls, args, kwargs)
        assert type(ours) is type(drfs) is cls
    ours, other = copied(cls, obj), copied(cls, obj)
    # Nothing mutable is shared between instances: the context, the style and the error messages.
    assert ours._context is not other._context and ours.context == {}
    assert ours.style is not other.style and ours.error_messages is not other.error_messages
    ours.error_messages["required"] = "changed"
    assert cls(obj).error_messages["required"] != "changed"
    assert copied(cls, obj, context=context).context is context


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_the_copied_instance_writes_what_drfs_writes(cls):
    for obj in objects_for(cls(), few=True)[:2]:
        try:
            expected = drf_made(cls, obj).data
        except Exception as exc:  # what DRF raises, the short way must raise too
            with pytest.raises(type(exc)):
                copied(cls, obj).data  # noqa: B018
        else:
            assert copied(cls, obj).data == expected


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_other_way_of_making_one_is_drfs(cls):
    cls()  # the state recorded
    counter = Field._creation_counter
    with_data = cls(data={"x": 1})
    assert with_data.initial_data == {"x": 1} and Field._creation_counter == counter + 1
    assert cls(Obj(), partial=True).partial is True
    assert cls(Obj(), read_only=True).read_only is True
    assert isinstance(cls([Obj()], many=True), serializers.ListSerializer)
    assert Field._creation_counter > counter + 1


def test_a_subclass_setting_its_own_attributes_first_keeps_them(settings):
    """What a subclass's own __init__ sets before DRF's is its own, never copied from the first instance."""

    class Tagged(FieldsBuiltOnce, serializers.Serializer):
        name = serializers.CharField()

        def __init__(self, *args, tag: str = "", **kwargs):
            self.tag = tag
            super().__init__(*args, **kwargs)

    Tagged(tag="first")
    assert Tagged(Obj(name="n"), tag="second").tag == "second"
    assert Tagged(Obj(name="n"), tag="second").data == {"name": "n"}


def test_with_bound_field_output_off_drfs_init_runs(settings):
    settings.LEV_BOUND_FIELD_OUTPUT = False
    from deals.serializers import DealSerializer

    DealSerializer()
    counter = Field._creation_counter
    DealSerializer(Obj())
    assert Field._creation_counter == counter + 1
