"""Choices read the way agents write them (issue 39): case, separators and the common synonyms
("apartments", "Multi-Family" -> multifamily), from one table (lev.vocabulary.SYNONYMS) that every door
uses and docs/vocabulary.md shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lev import enums
from lev.vocabulary import BRIDGE_MESSAGE, SYNONYMS, canonical_choice, phrase
from tests.mcp_tools.test_tool_arguments import Caller

DOC = Path(__file__).resolve().parents[2] / "docs" / "vocabulary.md"
FIELDS = {"asset_type": enums.ASSET_TYPES, "loan_type": enums.LOAN_TYPES, "transaction_type": enums.TRANSACTION_TYPES,
          "business_plan": enums.BUSINESS_PLANS, "lender_type": enums.LENDER_TYPES, "recourse": enums.RECOURSE_TYPES,
          "rate_type": enums.RATE_TYPES, "quote_type": enums.QUOTE_TYPES}


@pytest.mark.parametrize(("sent", "values", "meant"), [
    ("Multi-Family", enums.ASSET_TYPES, "multifamily"),
    ("apartments", enums.ASSET_TYPES, "multifamily"),
    ("multi family", enums.ASSET_TYPES, "multifamily"),
    ("MF", enums.ASSET_TYPES, "multifamily"),
    ("Self Storage", enums.ASSET_TYPES, "self_storage"),
    ("mini-storage", enums.ASSET_TYPES, "self_storage"),
    ("Hotel", enums.ASSET_TYPES, "hospitality"),
    ("lodging", enums.ASSET_TYPES, "hospitality"),
    ("Warehouse", enums.ASSET_TYPES, "industrial"),
    ("logistics", enums.ASSET_TYPES, "industrial"),
    ("Shopping Center", enums.ASSET_TYPES, "retail"),
    ("perm", enums.LOAN_TYPES, "permanent"),
    ("Permanent Loan", enums.LOAN_TYPES, "permanent"),
    ("perm", enums.PROGRAM_LOAN_TYPES, "permanent"),
    ("purchase", enums.TRANSACTION_TYPES, "acquisition"),
    ("Refi", enums.TRANSACTION_TYPES, "refinance"),
    ("ground-up", enums.TRANSACTION_TYPES, "new_construction"),
    ("Non-Recourse", enums.RECOURSE_TYPES, "non_recourse"),
    ("nonrecourse", enums.RECOURSE_TYPES, "non_recourse"),
    ("Variable", enums.RATE_TYPES, "floating"),
    ("New Hampshire", enums.US_STATES, "NH"),
])
def test_synonyms_case_and_separators_name_their_value(sent, values, meant):
    assert canonical_choice(sent, values) == meant


def test_bridge_stays_a_question_not_a_synonym():
    from lev.vocabulary import Slip

    for sent in ("bridge", "Bridge Loan", "BRIDGE"):
        with pytest.raises(Slip, match=re.escape(BRIDGE_MESSAGE)):
            canonical_choice(sent, enums.LOAN_TYPES)


def test_the_docs_table_is_the_synonyms_table():
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \| (.+) \|$", DOC.read_text(), re.M)
    documented = {(field, value): tuple(re.findall(r'"([^"]+)"', words)) for field, value, words in rows}
    expected = {}
    for field, values in FIELDS.items():
        for value, words in SYNONYMS.get(values, {}).items():
            expected[(field, value)] = words
    assert documented == expected
    # Every synonym is a phrase as matched, and none is a value of its own enum (it would be dead).
    for values, table in SYNONYMS.items():
        for words in table.values():
            assert all(phrase(w) == w and w.replace(" ", "_") not in values for w in words)


@pytest.mark.django_db
def test_rest_and_mcp_take_synonyms_and_answer_the_value(api, api_key):
    rest = api.post("/api/v1/deals/", {
        "title": "Harbor Point", "loan_type": "Perm", "transaction_type": "Purchase",
        "properties": [{"name": "A", "asset_type": "Multi-Family", "state": "Texas"},
                       {"name": "B", "asset_type": "apartments"}]}, format="json")
    assert rest.status_code == 201, rest.content
    body = rest.json()
    assert (body["loan_type"], body["transaction_type"]) == ("permanent", "acquisition")
    assert [p["asset_type"] for p in body["properties"]] == ["multifamily", "multifamily"]
    tools = Caller(api_key)
    deal = tools.ok("create_deal", {"title": "Dock 9", "transaction_type": "refi", "loan_type": "permanent loan",
                                    "properties": [{"name": "W", "asset_type": "Warehouse"}]})["deal"]
    assert (deal["transaction_type"], deal["loan_type"]) == ("refinance", "permanent")
    assert deal["properties"][0]["asset_type"] == "industrial"
    # Filters read the same words.
    assert api.get("/api/v1/deals/", {"transaction_type": "purchase"}).json()["count"] == 1
    assert tools.ok("list_deals", {"transaction_type": "Refi"})["total"] == 1
    # What names no value is still refused with the values listed.
    refused = api.post("/api/v1/deals/", {"title": "T", "properties": [{"name": "X", "asset_type": "castle"}]},
                       format="json")
    assert refused.status_code == 400 and "must be one of: multifamily" in refused.json()["message"]
