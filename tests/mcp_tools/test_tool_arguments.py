"""Arguments mean exactly what each tool's input schema says (issue #9, section 5, and tampered
cursors from section 2).

Most calls go through `LevMCP.call_tool_sync` in-process (the function both /mcp paths end in), with
the caller's API key, so the API behind the tools is the real one; a few go over the real endpoint.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from decimal import Decimal
from typing import Any

import pytest
from django.test import RequestFactory
from rest_framework import serializers

from deals.companies.serializers import (
    CompanyInputSerializer,
    CompanyListQuerySerializer,
    ContactInputSerializer,
    ContactListQuerySerializer,
)
from deals.documents.serializers import DocumentListQuerySerializer
from deals.history.models import HistoryImport
from deals.models import Company, Contact, Deal, DealProperty, Document
from deals.notes.serializers import NoteInputSerializer, NoteListQuerySerializer
from deals.outreach.models import OutreachSend
from deals.outreach.serializers import OutreachSendInputSerializer
from deals.pipeline.serializers import DealMoveSerializer
from deals.placements.serializers import (
    ComparisonQuerySerializer,
    PlacementCreateInputSerializer,
    PlacementListQuerySerializer,
    PlacementUpdateInputSerializer,
    TermSheetInputSerializer,
    TermSheetListQuerySerializer,
)
from deals.searches.models import LenderSearch
from deals.searches.serializers import SearchResultsQuerySerializer
from deals.serializers import (
    DealInputSerializer,
    DealListQuerySerializer,
    FinancialsInputSerializer,
    PropertyInputSerializer,
)
from deals.summaries.serializers import SummaryQuerySerializer
from lenders.rates.serializers import MarketRatesQuerySerializer
from lenders.serializers import DirectoryQuerySerializer, LenderInputSerializer, LenderProgramInputSerializer
from lev import limits
from lev.serializers import PageQuerySerializer
from mcp_tools.server import get_server
from tests.deals.fixtures import eager_jobs
from tests.deals.placements.helpers import place, quote
from tests.factories import DealFactory, DealPropertyFactory, LenderFactory
from tests.mcp_helpers import McpCaller, value_schema

__all__ = ["eager_jobs"]

pytestmark = pytest.mark.django_db


class Caller:
    """Calls tools the way /mcp does, as the user of `api_key`; (isError, payload)."""

    def __init__(self, api_key: str):
        self.request = RequestFactory().post("/mcp", HTTP_AUTHORIZATION=f"Bearer {api_key}")

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        result = get_server().call_tool_sync(name, arguments, self.request)
        payload = json.loads(result.content[0].text)
        assert result.structuredContent == payload
        return bool(result.isError), payload

    def ok(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        is_error, payload = self.call(name, arguments)
        assert not is_error, payload
        return payload

    def invalid(self, name: str, arguments: dict[str, Any], argument: str, message: str = "") -> dict[str, Any]:
        """A VALIDATION_ERROR naming `argument`, whose message starts with `Validation failed:
        <argument> <message>`."""
        is_error, payload = self.call(name, arguments)
        assert is_error and payload["code"] == "VALIDATION_ERROR", payload
        assert payload["errorCategory"] == "validation" and payload["isRetryable"] is False
        assert argument in payload["details"]["fields"], payload
        assert payload["message"].startswith(f"Validation failed: {argument} {message}"), payload["message"]
        return payload


@pytest.fixture
def tools(api_key) -> Caller:
    return Caller(api_key)


def schemas() -> dict[str, dict[str, Any]]:
    return {t["name"]: t["inputSchema"] for t in get_server().tools_list_result["tools"]}


def branch(prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """The non-null branch of an optional property, with `$ref`s resolved."""
    return value_schema(prop, defs)


def required(schema: dict[str, Any]) -> dict[str, Any]:
    """Valid values for a tool's required arguments (ids, amounts, enums and names)."""
    def valid(prop: dict[str, Any]) -> Any:
        prop = branch(prop, schema.get("$defs", {}))
        if "enum" in prop:
            return prop["enum"][0]
        if prop.get("type") == "array":  # a list of choices (a program's loan and asset types)
            return [valid(prop["items"])]
        return 1 if prop.get("type") in ("integer", "number") else "T"

    return {name: valid(schema["properties"][name]) for name in schema.get("required", [])}


# --- 1. strict types ------------------------------------------------------------------------------
def test_true_is_not_deal_1(tools, account):
    deal = DealFactory(account=account, id=1)
    tools.invalid("archive_deal", {"deal_id": True}, "deal_id", "must be a whole number, not true or false")
    tools.invalid("get_deal", {"deal_id": 1.5}, "deal_id", "must be a whole number")
    tools.invalid("get_deal", {"deal_id": "1"}, "deal_id", "must be a whole number, not a string")
    deal.refresh_from_db()
    assert deal.archived is False


@pytest.mark.django_db(transaction=True)
def test_over_the_real_endpoint_both_paths_are_strict(live_server, api_key, account, monkeypatch):
    """The official client over /mcp: the fast path and the SDK's path end in the same checks."""
    from mcp_tools.server import LevMCP

    deal = DealFactory(account=account, id=1)
    mcp = McpCaller(live_server.url, api_key)
    for fast in (True, False):
        with monkeypatch.context() as patch:
            if not fast:
                patch.setattr(LevMCP, "handle_fast", lambda self, request: None)
            payload = mcp.error("archive_deal", {"deal_id": True})
            assert payload["details"]["fields"] == {"deal_id": ["must be a whole number, not true or false"]}
            assert mcp.ok("list_deals", {"search": "[1]"})["deals"] == []
            assert mcp.error("create_deal", {"title": "T", "loan_amount": "18500000"})["code"] == "VALIDATION_ERROR"
    deal.refresh_from_db()
    assert deal.archived is False and Deal.objects.count() == 1


def test_an_integral_json_number_is_an_integer_as_json_schema_says(tools, account):
    deal = DealFactory(account=account)
    assert tools.ok("get_deal", {"deal_id": float(deal.id)})["deal"]["id"] == deal.id
    assert tools.ok("list_deals", {"limit": 5.0})["total"] == 1
    tools.invalid("list_deals", {"limit": 5.5}, "limit", "must be a whole number")


@pytest.mark.parametrize("value", [0, 1_700_000_000, "0", "1700000000", "2025-02-30", "2025-6-1", "2025-06-01T00:00"])
def test_a_date_is_a_yyyy_mm_dd_string_only(tools, value):
    tools.invalid("create_deal", {"title": "T", "estimated_close_date": value}, "estimated_close_date",
                  "must be a")
    assert not Deal.objects.exists()


def test_a_date_string_is_stored_as_that_date(tools):
    deal = tools.ok("create_deal", {"title": "T", "estimated_close_date": "2026-06-30"})["deal"]
    assert Deal.objects.get(id=deal["id"]).estimated_close_date == dt.date(2026, 6, 30)


def test_json_looking_strings_stay_strings(tools, account):
    DealFactory(account=account, title="Deal [1] of two")
    assert [d["title"] for d in tools.ok("list_deals", {"search": "[1]"})["deals"]] == ["Deal [1] of two"]
    assert tools.ok("list_deals", {"search": '{"a": 1}'})["deals"] == []
    tools.invalid("create_deal", {"title": "T", "properties": '[{"name": "P"}]'}, "properties",
                  "must be a list, not a string")
    tools.invalid("get_deal", {"deal_id": 1, "include": '["properties"]'}, "include", "must be a list")
    # Once parsed as JSON (and a RecursionError); now just text.
    deal = tools.ok("create_deal", {"title": "T", "description": "[" * 3000})["deal"]
    assert Deal.objects.get(id=deal["id"]).description == "[" * 3000


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize(("name", "argument"), [
    ("create_deal", "loan_amount"), ("list_deals", "min_loan_amount"), ("list_deals", "max_loan_amount"),
    ("search_lender_directory", "loan_amount"),
])
def test_numbers_are_finite(tools, name, argument, value):
    arguments = {"title": "T"} if name == "create_deal" else {}
    tools.invalid(name, {**arguments, argument: value}, argument, "must be a finite number")


def test_every_number_argument_refuses_non_finite_values(tools):
    """Every `number` in every schema (none may take NaN or Infinity): found by walking the schemas,
    so a new float argument is covered too."""
    seen = 0
    for name, schema in schemas().items():
        for argument, prop in schema["properties"].items():
            if branch(prop, schema.get("$defs", {})).get("type") == "number":
                seen += 1
                # What the tool does to extra decimals: money to the cent, a rate to 3 decimals.
                assert re.search(r"rounded to the cent|kept to \d decimals", prop["description"]), (name, argument)
                tools.invalid(name, {**required(schema), argument: float("nan")}, argument, "must be a finite number")
    assert seen >= 5


@pytest.mark.parametrize("value", ["18500000", "18,500,000", "$18.5M", "18.5 million", "USD 18.5mm"])
def test_money_as_a_string_is_refused_saying_to_send_a_number_of_dollars(tools, value):
    payload = tools.invalid("create_deal", {"title": "T", "loan_amount": value}, "loan_amount",
                            "must be a number of US dollars, e.g. 18500000, not a string")
    # The number the text stands for, so the agent can send it at once.
    assert payload["message"].endswith(f'; send 18500000 for "{value}"'), payload["message"]
    assert not Deal.objects.exists()


def test_money_text_that_is_no_amount_gets_the_plain_guidance(tools):
    payload = tools.invalid("update_deal_financials", {"deal_id": 1, "purchase_price": "a lot"}, "purchase_price")
    assert payload["message"] == ("Validation failed: purchase_price must be a number of US dollars, e.g. "
                                  "18500000, not a string")


def test_other_numbers_and_flags_keep_their_json_types(tools):
    tools.invalid("list_deals", {"limit": "5"}, "limit", "must be a whole number, not a string")
    tools.invalid("list_deals", {"archived": "true"}, "archived", "must be true or false, not a string")
    tools.invalid("list_deals", {"archived": 1}, "archived", "must be true or false")
    tools.invalid("create_deal", {"title": 5}, "title", "must be a string, not a number")
    tools.invalid("create_deal", {"title": "T", "properties": [{"name": "P", "units": True}]},
                  "properties.0.units", "must be a whole number, not true or false")
    tools.invalid("create_deal", {"title": "T", "loan_amount": True}, "loan_amount", "must be a number of US dollars")


def test_enums_stay_case_insensitive(tools):
    deal = tools.ok("create_deal", {"title": "T", "loan_type": " Light_Bridge ", "transaction_type": "REFINANCE",
                                    "properties": [{"name": "P", "state": "tx", "asset_type": "Office"}]})["deal"]
    assert (deal["loan_type"], deal["transaction_type"]) == ("light_bridge", "refinance")
    assert DealProperty.objects.get(deal_id=deal["id"]).state == "TX"


def test_money_is_rounded_to_the_cent_and_positive(tools):
    deal = tools.ok("create_deal", {"title": "T", "loan_amount": 1_000_000.125})["deal"]
    assert Deal.objects.get(id=deal["id"]).loan_amount == Decimal("1000000.13")
    # What a generator computes as 3 * 0.01 is three cents.
    deal = tools.ok("create_deal", {"title": "T", "loan_amount": 1_000_000 + 3 * 0.01})["deal"]
    assert Deal.objects.get(id=deal["id"]).loan_amount == Decimal("1000000.03")
    tools.invalid("create_deal", {"title": "T", "loan_amount": -1}, "loan_amount", "must be greater than 0")
    financials = tools.ok("update_deal_financials", {"deal_id": deal["id"], "purchase_price": 3 * 0.01})
    assert financials["financials"]["purchase_price"] == 0.03
    tools.invalid("update_deal_financials", {"deal_id": deal["id"], "purchase_price": 0.004}, "purchase_price",
                  "must be at least 0.01")


# --- 2. every API bound is in the schema ----------------------------------------------------------
# Tool argument -> the API serializer (and its field name) that checks it behind the tool.
API_INPUTS = {
    "create_deal": (DealInputSerializer, {}),
    "update_deal": (DealInputSerializer, {}),
    "add_deal_property": (PropertyInputSerializer, {}),
    "list_deals": (DealListQuerySerializer, {"limit": "page_size"}),
    "search_lender_directory": (DirectoryQuerySerializer, {"limit": "page_size", "query": "query"}),
    "get_lender_search_results": (SearchResultsQuerySerializer, {"limit": "page_size"}),
    "get_market_rates": (MarketRatesQuerySerializer, {}),
    "list_deal_properties": (PageQuerySerializer, {"limit": "page_size"}),
    "list_lender_programs": (PageQuerySerializer, {"limit": "page_size"}),
    "list_lender_searches": (PageQuerySerializer, {"limit": "page_size"}),
    "update_deal_property": (PropertyInputSerializer, {}),
    "update_deal_financials": (FinancialsInputSerializer, {}),
    "create_placements": (PlacementCreateInputSerializer, {}),
    "send_placements_email": (OutreachSendInputSerializer, {}),
    "list_placements": (PlacementListQuerySerializer, {"limit": "page_size"}),
    "update_placement": (PlacementUpdateInputSerializer, {}),
    "add_term_sheet": (TermSheetInputSerializer, {}),
    "list_term_sheets": (TermSheetListQuerySerializer, {"limit": "page_size"}),
    "compare_term_sheets": (ComparisonQuerySerializer, {}),
    "list_companies": (CompanyListQuerySerializer, {"limit": "page_size"}),
    "create_company": (CompanyInputSerializer, {}),
    "create_lender": (LenderInputSerializer, {}),
    "add_lender_program": (LenderProgramInputSerializer, {}),
    "update_company": (CompanyInputSerializer, {}),
    "list_contacts": (ContactListQuerySerializer, {"limit": "page_size"}),
    "add_contact": (ContactInputSerializer, {}),
    "update_contact": (ContactInputSerializer, {}),
    "move_deal_stage": (DealMoveSerializer, {}),
    "get_deal_stage_history": (PageQuerySerializer, {"limit": "page_size"}),
    "summarize_deal": (SummaryQuerySerializer, {}),
    "add_note": (NoteInputSerializer, {}),
    "list_notes": (NoteListQuerySerializer, {"limit": "page_size"}),
    "get_deal_timeline": (PageQuerySerializer, {"limit": "page_size"}),
    "list_imports": (PageQuerySerializer, {"limit": "page_size"}),
    "list_deal_documents": (DocumentListQuerySerializer, {"limit": "page_size"}),
}
IDS = {"deal_id", "lender_id", "search_id", "property_id", "placement_id", "term_sheet_id", "program_id", "import_id",
       "company_id", "contact_id", "sponsor_id", "borrower_id", "send_id", "document_id"}
TOOL_ONLY = {"cursor", "idempotency_key", "include"}  # checked by the tool itself (or tested below)


def check_against_field(where: str, prop: dict[str, Any], field: serializers.Field, defs: dict[str, Any]) -> None:
    schema = branch(prop, defs)
    if isinstance(field, serializers.ListSerializer):
        assert schema["type"] == "array" and schema["maxItems"] == limits.PROPERTIES_PER_CREATE_MAX, where
        item = branch(schema["items"], defs)
        for name, item_prop in item["properties"].items():
            check_against_field(f"{where}.{name}", item_prop, field.child.fields[name], defs)
        assert set(item["properties"]) == set(field.child.fields), where
    elif isinstance(field, serializers.ListField):
        assert schema["type"] == "array", where
        assert (schema.get("minItems"), schema.get("maxItems")) == (field.min_length, field.max_length), where
        check_against_field(f"{where}.items", schema["items"], field.child, defs)
    elif isinstance(field, serializers.DecimalField):
        assert schema["type"] == "number", where
        assert Decimal(str(schema["maximum"])) == field.max_value, where
        assert Decimal(str(schema["minimum"])) == field.min_value, where
    elif isinstance(field, serializers.IntegerField):
        assert schema["type"] == "integer", where
        assert (schema.get("minimum"), schema.get("maximum")) == (field.min_value, field.max_value), where
    elif isinstance(field, serializers.ChoiceField):
        assert schema["enum"] == list(field.choices), where
    elif isinstance(field, serializers.RegexField):
        assert [v.regex.pattern for v in field.validators if hasattr(v, "regex")] == [schema["pattern"]], where
    elif isinstance(field, serializers.CharField):
        assert schema["type"] == "string" and schema["maxLength"] == field.max_length, where
        expected = limits.TEXT_PATTERN if field.allow_blank else limits.NON_BLANK_TEXT_PATTERN
        assert schema["pattern"] == expected, where
    elif isinstance(field, serializers.DateField):
        assert (schema["type"], schema["format"]) == ("string", "date"), where
    elif isinstance(field, serializers.BooleanField):
        assert schema["type"] == "boolean", where
    else:
        raise AssertionError(f"{where}: no check for {type(field).__name__}")


# Arguments no API field takes as such: the tool turns them into what the API takes.
TOOL_ONLY = {
    "get_market_rates.history_days": "becomes the history's since and until dates",
}


def test_every_schema_bound_is_the_apis_bound():
    for name, schema in schemas().items():
        defs = schema.get("$defs", {})
        serializer, renamed = API_INPUTS.get(name, (None, {}))
        for argument, prop in schema["properties"].items():
            where = f"{name}.{argument}"
            if argument in IDS:
                schema_of_id = branch(prop, defs)
                assert (schema_of_id["type"], schema_of_id["minimum"], schema_of_id["maximum"]) == (
                    "integer", 1, limits.MAX_ID), where
            elif argument == "idempotency_key":
                assert branch(prop, defs)["pattern"] == limits.IDEMPOTENCY_KEY_PATTERN, where
            elif argument == "cursor":
                assert branch(prop, defs)["type"] == "string", where
            elif where in TOOL_ONLY:
                assert "maximum" in branch(prop, defs), where
            elif argument == "clear":  # names API fields, each one the API lets be emptied
                for field in branch(branch(prop, defs)["items"], defs)["enum"]:
                    api_field = serializer().fields[field]
                    assert api_field.allow_null or getattr(api_field, "allow_blank", False), f"{where}: {field}"
            elif argument != "include":
                assert serializer is not None, f"{where}: which API field checks it?"
                check_against_field(where, prop, serializer().fields[renamed.get(argument, argument)], defs)


def bounded_cases() -> list[tuple[str, str, Any, Any]]:
    """(tool, argument path, the schema's extreme value, one step past it) for every bound of every
    tool, read from the schemas."""
    cases = []

    def walk(name: str, path: str, prop: dict[str, Any], defs: dict[str, Any]) -> None:
        schema = branch(prop, defs)
        if schema.get("type") == "array" and "properties" in branch(schema["items"], defs):
            for child, child_prop in branch(schema["items"], defs)["properties"].items():
                walk(name, f"{path}.0.{child}", child_prop, defs)
            cases.append((name, path, [{"name": "P"}] * schema["maxItems"], [{"name": "P"}] * (schema["maxItems"] + 1)))
        if "maxLength" in schema:
            # A patterned text at its longest must still match: an email address is padded before the @.
            # A website starts with its scheme and host; a phone number is digits and an extension.
            head, tail, fill = {
                limits.EMAIL_PATTERN: ("", "@ab.co", "x"), limits.WEBSITE_PATTERN: ("https://ab.co/", "", "x"),
                limits.PHONE_PATTERN: ("", " x123456", "1"),
            }.get(schema.get("pattern"), ("", "", "x"))
            size = schema["maxLength"] - len(head) - len(tail)
            cases.append((name, path, head + fill * size + tail, head + fill * (size + 1) + tail))
        step = 1 if schema.get("type") == "integer" else Decimal("0.01")
        if "maximum" in schema:
            top = schema["maximum"]
            cases.append((name, path, top, top + 1 if step == 1 else float(Decimal(str(top)) + step)))
        if "minimum" in schema:
            low = schema["minimum"]
            cases.append((name, path, low, low - 1 if step == 1 else float(Decimal(str(low)) - step)))

    for name, schema in schemas().items():
        for argument, prop in schema["properties"].items():
            walk(name, argument, prop, schema.get("$defs", {}))
    return cases


def with_value(arguments: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    head, *rest = path.split(".")
    if not rest:
        return {**arguments, head: value}
    return {**arguments, head: [{"name": "P", rest[1]: value}]}


def test_schema_extremes_succeed_end_to_end_and_one_past_fails_naming_the_argument(tools, account, eager_jobs):
    deal, archived_target = DealFactory(account=account), DealFactory(account=account)
    prop = DealPropertyFactory(deal=deal)
    search = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version, status="completed")
    placement = place(deal, LenderFactory())
    term_sheets = [quote(placement), quote(placement)]
    fixed = {"placement_id": placement.id, "loan_amount": 1, "rate_type": "fixed", "fixed_rate": 6}
    floating = {"placement_id": placement.id, "loan_amount": 1, "rate_type": "floating", "rate_index": "sofr",
                "spread_bps": 100}
    company = Company.objects.create(account=account, kind="sponsor", name="C")
    person = Contact.objects.create(account=account, company=company, name="P")
    base = {
        "list_deals": {}, "create_deal": {"title": "T"}, "get_deal": {"deal_id": deal.id},
        "update_deal": {"deal_id": deal.id, "title": "T"}, "archive_deal": {"deal_id": archived_target.id},
        "add_deal_property": {"deal_id": deal.id, "name": "P"}, "search_lender_directory": {},
        "get_lender": {"lender_id": LenderFactory().id}, "search_lenders_for_deal": {"deal_id": deal.id},
        "list_deal_properties": {"deal_id": deal.id}, "list_lender_programs": {"lender_id": LenderFactory().id},
        "list_lender_searches": {"deal_id": deal.id},
        "get_lender_search_results": {"search_id": search.id},
        "update_deal_property": {"deal_id": deal.id, "property_id": prop.id, "name": "P"},
        "remove_deal_property": {"deal_id": deal.id, "property_id": DealPropertyFactory(deal=deal).id},
        "get_deal_financials": {"deal_id": deal.id},
        "update_deal_financials": {"deal_id": deal.id, "cash_out": 1},
        # A search of the deal rather than lender ids: top_n goes with a search only.
        "create_placements": {"deal_id": deal.id, "search_id": search.id},
        "list_placements": {"deal_id": deal.id}, "get_placement": {"placement_id": placement.id},
        "update_placement": {"placement_id": placement.id, "notes": "n"},
        "list_term_sheets": {"deal_id": deal.id}, "compare_term_sheets": {"deal_id": deal.id},
        "select_winning_term_sheet": {"term_sheet_id": term_sheets[0].id},
        "remove_term_sheet": {"term_sheet_id": term_sheets[1].id},
        "list_companies": {}, "get_company": {"company_id": company.id},
        "create_company": {"kind": "sponsor", "name": "C"}, "update_company": {"company_id": company.id, "name": "C"},
        "list_contacts": {"company_id": company.id}, "add_contact": {"company_id": company.id, "name": "P"},
        "update_contact": {"contact_id": person.id, "name": "P"},
        "get_pipeline": {}, "move_deal_stage": {"deal_id": deal.id, "stage": "underwriting"},
        "get_deal_stage_history": {"deal_id": deal.id}, "summarize_deal": {"deal_id": deal.id},
        "add_note": {"deal_id": deal.id, "body": "B"}, "list_notes": {}, "get_deal_timeline": {"deal_id": deal.id},
        "get_import": {"import_id": HistoryImport.objects.create(account=account, file_name="h.csv").id},
        "list_imports": {},
        "send_placements_email": {"deal_id": deal.id, "kind": "follow_up"},
        "get_outreach_progress": {"send_id": OutreachSend.objects.create(account=account, deal=deal, kind="teaser").id},
        "list_deal_documents": {"deal_id": deal.id},
        "get_deal_document": {"document_id": Document.objects.create(account=account, deal=deal, name="OM").id},
        "get_market_rates": {"index": "sofr"},
        "create_lender": {"name": "N"},
        "add_lender_program": {"lender_id": LenderFactory().id, "title": "P", "loan_types": ["permanent"],
                               "asset_types": ["multifamily"]},
    }
    # A contact is at a company or at a lender: the lender's id is tried alone; so is each target of a note.
    alone = {("list_contacts", "lender_id"): {}, ("add_contact", "lender_id"): {"name": "P"},
             **{("add_note", target): {"body": "B"} for target in ("placement_id", "company_id", "contact_id")}}

    # The rate terms go with their rate type (a rule over two arguments): each bound is tried on its type.
    rate_base = {"fixed_rate": fixed, "spread_bps": floating, "rate_index": floating}
    cases = bounded_cases()
    assert {(n, p) for n, p, *_ in cases} >= {
        ("create_deal", "loan_amount"), ("create_deal", "properties.0.units"),
        ("create_deal", "properties.0.square_footage"), ("add_deal_property", "year_built"),
        ("update_deal", "description"), ("list_deals", "limit"), ("get_deal", "deal_id"),
    }
    for name, path, extreme, past in cases:
        arguments = rate_base.get(path, fixed) if name == "add_term_sheet" else base[name]
        if name == "add_lender_program" and path.startswith("spread"):
            arguments = {**arguments, "rate_index": "sofr"}  # a spread is over an index
        if name == "create_lender":
            arguments = {**arguments, "name": f"N {path}"}  # an account's own lenders have distinct names
        arguments = alone.get((name, path), arguments)
        tools.invalid(name, with_value(arguments, path, past), path)
        if path == "cursor":
            continue  # opaque: its longest allowed value is no cursor this server issued
        is_error, payload = tools.call(name, with_value(arguments, path, extreme))
        # An id at the schema's maximum names no row: NOT_FOUND, never a validation error.
        assert not (is_error and payload["code"] in ("VALIDATION_ERROR", "INTERNAL_ERROR")), (name, path, payload)


def test_money_at_the_schema_maximum_is_stored(tools):
    deal = tools.ok("create_deal", {"title": "T", "loan_amount": float(limits.MONEY_MAX)})["deal"]
    assert Deal.objects.get(id=deal["id"]).loan_amount == limits.MONEY_MAX


# --- 3. the idempotency key -----------------------------------------------------------------------
@pytest.mark.parametrize("key", [" ", "  key-1 ", "key 1", "key\x00", "ключ", "", "k" * 256])
def test_a_bad_idempotency_key_is_named_as_the_agent_sent_it(tools, key):
    payload = tools.invalid("create_deal", {"title": "T", "idempotency_key": key}, "idempotency_key",
                            "must be 1 to 255 visible ASCII characters")
    assert "Idempotency-Key" not in json.dumps(payload)
    assert not Deal.objects.exists()


def test_the_longest_idempotency_key_replays(tools):
    key = "~" * limits.IDEMPOTENCY_KEY_MAX
    first = tools.ok("create_deal", {"title": "T", "idempotency_key": key})
    assert tools.ok("create_deal", {"title": "T", "idempotency_key": key}) == first
    assert Deal.objects.count() == 1


# --- 4. tampered cursors --------------------------------------------------------------------------
def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


TAMPERED = [
    b64(b'{"p":1e999,"l":20}'), b64(b'{"p":-1,"l":20}'), b64(b'{"p":0,"l":20}'), b64(b'{"p":1,"l":101}'),
    b64(b'{"p":1.5,"l":20}'), b64(b'{"p":true,"l":20}'), b64(b'{"p":"2","l":20}'), b64(b'{"p":1,"l":20,"x":1}'),
    b64(b'{"p":' + b"9" * 30 + b',"l":20}'), b64(b'{"p":' + b"9" * 5000 + b',"l":20}')[:100],
    b64(b'{"p":10000001,"l":20}'), b64(b'{"p":{"p":1},"l":20}'), b64(b"[" * 60 + b"]" * 60), b64(b"[1,20]"),
    b64(b"null"), b64(b"\xff\xfe{\x00}\x00"), b64('{"p":1,"l":20}'.encode("utf-16")), "!!!not base64!!!",
    "é", "\x00", "=" * 5, "x" * 101,
]


@pytest.mark.parametrize("cursor", TAMPERED)
@pytest.mark.parametrize("name", ["list_deals", "search_lender_directory", "get_lender_search_results"])
def test_a_tampered_cursor_is_a_validation_error_naming_cursor(tools, name, cursor):
    arguments = {"search_id": 1} if name == "get_lender_search_results" else {}
    payload = tools.invalid(name, {**arguments, "cursor": cursor}, "cursor")
    assert payload["hint"]


def test_a_cursor_past_the_last_page_says_to_start_again(tools, account):
    DealFactory(account=account)
    tools.invalid("list_deals", {"cursor": b64(b'{"p":5,"l":20}')}, "cursor", "points past the last page")
    tools.invalid("search_lender_directory", {"cursor": b64(b'{"p":5,"l":20}')}, "cursor", "points past")


def test_the_api_refuses_a_page_number_past_its_bound(api):
    response = api.get("/api/v1/deals/", {"page": limits.PAGE_NUMBER_MAX + 1})
    assert response.status_code == 400
    assert response.json()["message"].startswith("Validation failed: page must be at most")


# --- 5. text --------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["a\x00b", "\x00", "bell\x07", "esc\x1b[0m", "vt\x0bff\x0c"])
def test_control_characters_are_refused_by_the_tool(tools, text):
    tools.invalid("create_deal", {"title": text}, "title", "may not")
    tools.invalid("create_deal", {"title": "T", "description": text}, "description",
                  "may not contain control characters")
    tools.invalid("list_deals", {"search": text}, "search", "may not contain control characters")
    tools.invalid("search_lender_directory", {"query": text}, "query", "may not contain control characters")
    assert not Deal.objects.exists()


def test_lone_surrogates_and_deep_nesting_are_named(tools):
    tools.invalid("create_deal", {"title": "a\ud800b"}, "title", "must be valid Unicode text")
    tools.invalid("create_deal", {"title": "T", "properties": [{"name": "\udfff"}]}, "properties.0.name",
                  "must be valid Unicode text")
    deep: Any = []
    for _ in range(3000):
        deep = [deep]
    tools.invalid("list_deals", {"search": deep}, "search", "is nested too deeply")
    payload = tools.invalid("create_deal", {"title": "T", "bad\x00name\ud800": 1}, "bad\\x00name\\ud800")
    json.dumps(payload).encode("utf-8")  # an answer that can be sent


def test_blank_required_text_is_refused_by_the_schema(tools):
    for blank in (" ", "\t\n", "\u3000", "\xa0"):
        tools.invalid("create_deal", {"title": blank}, "title", "may not be blank")
    deal = tools.ok("create_deal", {"title": " T ", "description": "line one\n\tline two\r\n"})["deal"]
    assert deal["description"] == "line one\n\tline two"


@pytest.mark.parametrize(("field", "value"), [
    ("title", "a\x00b"), ("description", "x\x1fy"), ("title", "a\ud800b"),
])
def test_the_api_refuses_control_characters_and_surrogates_without_a_500(api, field, value):
    body = {"title": "T", field: value}
    response = api.post("/api/v1/deals/", json.dumps(body, ensure_ascii=True), content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["message"] in (f"Validation failed: {field} may not contain control characters",
                                          f"Validation failed: {field} must be valid Unicode text "
                                          "(it holds a lone surrogate)")
    assert not Deal.objects.exists()


def test_the_api_refuses_nul_in_a_search_and_in_a_property(api, account):
    deal = DealFactory(account=account)
    response = api.get("/api/v1/deals/", {"search": "a\x00b"})
    assert response.status_code == 400
    assert response.json()["message"] == "Validation failed: search may not contain control characters"
    response = api.get("/api/v1/lenders/", {"query": "\x00"})
    assert response.status_code == 400
    response = api.post(f"/api/v1/deals/{deal.id}/properties/", {"name": "P\x00", "zip": "١٢٣٤٥"}, format="json")
    assert response.status_code == 400
    assert response.json()["details"]["fields"] == {
        "name": ["may not contain control characters"], "zip": ["must be a 5-digit ZIP code (or ZIP+4)"]}
