"""The wire does not change unless a change says so (issue 40's acceptance: tools/list, the OpenAPI
schema and every tool's answer byte-identical before and after a restructure). tests/wire/corpus.py
replays the recorded scenario over a freshly seeded demo at one fixed moment; every answer's status,
content type and body must be the recorded one, byte for byte.

The corpus is recorded on the embedded default (SQLite: ids start at 1 with the sequences reset, and
the row order of ties is SQLite's), so the test runs there. `LEV_WIRE_RECORD=1` writes corpus.json anew,
for a change that means to change the wire (say so in its commit)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from django.db import connection

from tests.wire.corpus import replay

CORPUS = Path(__file__).with_name("corpus.json")

pytestmark = [pytest.mark.slow, pytest.mark.django_db(reset_sequences=True)]


def _first_difference(now: dict, then: dict) -> str:
    """The entry's label and where its body first differs, with some context either side."""
    a, b = now["body"], then["body"]
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return (f"{now['label']}: status {now['status']} (recorded {then['status']}); body differs at {at}: "
            f"{a[max(0, at - 80):at + 80]!r} (recorded {b[max(0, at - 80):at + 80]!r})")


def test_every_recorded_answer_is_the_same_bytes():
    if connection.vendor != "sqlite":
        pytest.skip("the corpus is recorded on the embedded default (SQLite)")
    entries = replay()
    if os.environ.get("LEV_WIRE_RECORD") == "1":
        CORPUS.write_text(json.dumps(entries, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    recorded = json.loads(CORPUS.read_text(encoding="utf-8"))
    assert [e["label"] for e in entries] == [e["label"] for e in recorded]
    for now, then in zip(entries, recorded, strict=True):
        assert now == then, _first_difference(now, then)
    # The scenario reaches what it means to: answers of every kind, not a run of refusals.
    calls = [e for e in entries if e["request"].get("message", {}).get("method") == "tools/call"]
    good = [e for e in calls if '"isError": true' not in e["body"] and '"isError":true' not in e["body"]]
    assert len(good) >= 50 and len(calls) - len(good) >= 80, (len(good), len(calls))
