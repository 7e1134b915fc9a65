"""Fuzz the REST API from its own OpenAPI description (/api/v1/schema/) with schemathesis.

Every operation gets schema-valid and schema-invalid requests, with an API key, half of them aimed
at rows that exist. Asserted by schemathesis's checks: no 5xx, status codes, content types, headers
and bodies as the schema documents them, invalid input refused. The requests go to the Django app
in-process (WSGI), the fastest way to reach every view; /mcp has its own fuzzer over real HTTP.

Like the MCP fuzzer: derandomized, bounded, collects every distinct failure and fails at the end.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.core.failures import FailureGroup  # a BaseExceptionGroup: `except Exception` misses it
from schemathesis.core.parameters import ParameterLocation

from deals.documents.figures.services import NOT_GIVEN as FIGURE_NOT_GIVEN
from deals.notes.services import ONE_TARGET
from deals.outreach.serializers import TARGET_RULES as OUTREACH_TARGET_RULES
from deals.outreach.templates import UNKNOWN_PLACEHOLDERS
from deals.pipeline.services import STAGE_ORDER_MESSAGE
from deals.placements.serializers import CREATE_TARGET_MESSAGE
from deals.placements.services import QUOTED_AFTER_TODAY, QUOTED_BEFORE_SENT, RATE_TERMS_MESSAGE
from lenders.rates.serializers import SINCE_AFTER_UNTIL
from lev.pagination import BAD_CURSOR, CURSOR_WITH_PAGE, OTHER_LIST
from lev.wsgi import application
from tests.fuzz.conftest import PROGRAM_PAIR_RULES, World, budget
from tests.fuzz.stats import STATS
from tests.fuzz.strategies import dotted, numeric_paths, put

pytestmark = [pytest.mark.fuzz, pytest.mark.django_db(transaction=True)]

SCHEMA = schemathesis.openapi.from_wsgi("/api/v1/schema/", application)
OPERATIONS = {result.ok().label: result.ok() for result in SCHEMA.get_all_operations()}
EXAMPLES = 60
KNOWN_IDS = {"deal_id": "deal_ids", "property_id": "property_ids", "lender_id": "lender_ids",
             "search_id": "search_ids", "placement_id": "placement_ids", "term_sheet_id": "term_sheet_ids",
             "stage_id": "stage_ids", "company_id": "company_ids", "contact_id": "contact_ids",
             "note_id": "note_ids", "program_id": "program_ids",
             "document_id": "document_ids", "send_id": "send_ids", "package_id": "package_ids"}


def first_line(exc: BaseException) -> str:
    failures = getattr(exc, "exceptions", None) or [exc]
    return "; ".join(sorted({(getattr(f, "title", None) or str(f)).strip().splitlines()[0][:160] for f in failures}))


def record(failures: dict[str, tuple[str, str]], key: str, case, response) -> None:
    """A failure of one kind (`key`), kept once with what was sent and what came back."""
    sent = f"{case.method} {case.formatted_path} query={case.query} body={case.body!r}"[:300]
    got = f"{response.status_code} {response.text[:300]}"
    STATS.record_failure(key, sent, got)
    failures.setdefault(key, (sent, got))


def assert_none(failures: dict[str, tuple[str, str]]) -> None:
    report = [f"{key}\n    sent: {sent}\n    got:  {got}" for key, (sent, got) in sorted(failures.items())]
    assert not failures, f"{len(failures)} distinct failures:\n" + "\n".join(report)


# Rules over two fields, which OpenAPI cannot state (the parameters' descriptions say them): a
# request that breaks one is schema-valid and rightly refused. So is a list cursor the server did not
# sign for that list (its signature is no pattern a schema can state).
CROSS_FIELD_RULES = {"Validation failed: min_loan_amount must not exceed max_loan_amount", STAGE_ORDER_MESSAGE,
                     f"Validation failed: {CREATE_TARGET_MESSAGE}", RATE_TERMS_MESSAGE,
                     f"Validation failed: since {SINCE_AFTER_UNTIL}",
                     f"Validation failed: {ONE_TARGET}",  # a note's one target of four
                     *OUTREACH_TARGET_RULES,  # a send's placements: the ids or all drafts
                     *(f"Validation failed: cursor {reason}" for reason in (BAD_CURSOR, OTHER_LIST, CURSOR_WITH_PAGE))}
# Rules over a field and today or the records (a quote's day: not after today, not before its
# placement was sent); their messages end with the date that bounds them. And a figures apply naming a
# figure its document does not give (the body against the document read).
DATED_RULES = tuple(f"Validation failed: {rule} (" for rule in (QUOTED_AFTER_TODAY, QUOTED_BEFORE_SENT))
# And a rule over a text's words no pattern states readably: an outreach template's placeholders are the
# listed ones (its description lists them).
TEXT_RULES = tuple(f"Validation failed: {field} {UNKNOWN_PLACEHOLDERS}: " for field in ("subject", "body"))


def cross_field_rule(response: Any) -> bool:
    if response.status_code != 400:
        return False
    try:
        message = response.json().get("message") or ""
        return (message in CROSS_FIELD_RULES or message.startswith(DATED_RULES + PROGRAM_PAIR_RULES + TEXT_RULES)
                or (message.startswith("Validation failed: fields ") and f": {FIGURE_NOT_GIVEN} " in message))
    except ValueError:
        return False


@pytest.mark.parametrize("label", sorted(OPERATIONS))
def test_operation_answers_as_documented(world: World, label: str):
    operation = OPERATIONS[label]
    failures: dict[str, tuple[str, str]] = {}
    cases = st.one_of(operation.as_strategy(GenerationMode.POSITIVE), operation.as_strategy(GenerationMode.NEGATIVE))

    @settings(max_examples=budget(EXAMPLES), deadline=None, derandomize=True, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(case=cases, aim=st.booleans())
    def call(case: Any, aim: bool) -> None:
        # Aim only a path schemathesis left valid: replacing a path parameter it broke on purpose
        # (deal_id "abc") with a real id makes the request valid, which it then reports as
        # "Schema-violating request accepted" (seen once in a full `make test` run).
        if aim and case.path_parameters and not (case.meta and case.meta.is_negative_at(ParameterLocation.PATH)):
            for name, attr in KNOWN_IDS.items():
                if name in case.path_parameters:
                    case.path_parameters[name] = getattr(world, attr)[0]
        # Passed explicitly (also to the checks), so schemathesis's auth checks know it is the valid key
        # and probe with none and a wrong one, expecting 401.
        auth = {"Authorization": f"Bearer {world.api_key}"}
        # Also written into the case: a case generated negative only through a malformed Authorization
        # header (which the valid key replaces) and an id it was aimed at a real row with is then judged
        # valid, as it is; otherwise schemathesis still expects it refused and reports the 200 as
        # "schema-violating request accepted" (seen once the schema grew and the draws shifted).
        case.headers = {**(case.headers or {}), **auth}
        # buffered: the WSGI answer read whole and closed, as a server does, so Django's closers run (an
        # upload's temporary file is closed with the request, not left to the garbage collector).
        response = case.call(headers=auth, buffered=True)
        STATS.api_calls += 1
        if response.status_code >= 500:
            STATS.api_5xx += 1
        if cross_field_rule(response):
            return
        try:
            case.validate_response(response, headers=auth)
        except (FailureGroup, AssertionError) as exc:
            STATS.api_violations += 1
            key = f"{label}: {first_line(exc)}"
            record(failures, key, case, response)

    call()
    assert_none(failures)


# --- numbers no float holds (issue #19) -------------------------------------------------------------------
def numeric_inputs(label: str) -> list[tuple[str, tuple[str | int, ...]]]:
    """("body", path) of every numeric body field and ("query", (name,)) of every numeric query
    parameter of an operation, from the OpenAPI description."""
    operation = OPERATIONS[label]
    raw = SCHEMA.raw_schema["paths"][operation.path][operation.method.lower()]
    components = SCHEMA.raw_schema["components"]["schemas"]
    body = (raw.get("requestBody") or {}).get("content", {}).get("application/json", {}).get("schema") or {}
    return [("body", path) for path in numeric_paths(body, components)] + [
        ("query", (p["name"],)) for p in raw.get("parameters", [])
        if p["in"] == "query" and p.get("schema", {}).get("type") in ("integer", "number")]


NUMERIC = {label: inputs for label in sorted(OPERATIONS) if (inputs := numeric_inputs(label))}
HUGE_EXAMPLES = 10
# JSON bodies are written by json.dumps, which writes any integer in full but no 1e400 literal (the
# tests in tests/lev/test_huge_numbers.py send those as raw text); a query string takes both.
huge_integers = st.one_of(st.integers(min_value=10**309, max_value=10**4000),
                          st.integers(min_value=-(10**4000), max_value=-(10**309)))
huge_query_values = st.one_of(huge_integers.map(str), st.sampled_from(["1e400", "-1e400", "1E+999", "-2.5e308"]))


@pytest.mark.parametrize("label", sorted(NUMERIC))
def test_numbers_no_float_holds_are_refused_naming_the_field(world: World, label: str):
    """A schema-valid request with one numeric body field or query parameter replaced by a number no
    float holds: 400 VALIDATION_ERROR naming it, never a 5xx."""
    operation = OPERATIONS[label]
    failures: dict[str, tuple[str, str]] = {}

    @settings(max_examples=budget(HUGE_EXAMPLES), deadline=None, derandomize=True, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(GenerationMode.POSITIVE), target=st.sampled_from(NUMERIC[label]),
           body_value=huge_integers, query_value=huge_query_values)
    def call(case: Any, target: tuple[str, tuple[str | int, ...]], body_value: int, query_value: str) -> None:
        # Rows that exist (deal_ids[1] is the deal with a property), so the request reaches validation.
        for name, attr in KNOWN_IDS.items():
            if case.path_parameters and name in case.path_parameters:
                case.path_parameters[name] = getattr(world, attr)[1 if name == "deal_id" else 0]
        where, path = target
        if where == "body":
            if not isinstance(case.body, dict):
                case.body = {}
            put(case.body, path, body_value)
        else:
            case.query = {**(case.query or {}), path[0]: query_value}
        response = case.call(headers={"Authorization": f"Bearer {world.api_key}"}, buffered=True)
        STATS.api_calls += 1
        if response.status_code >= 500:
            STATS.api_5xx += 1
        try:
            body = response.json()
        except ValueError:
            body = {}
        fields = (body.get("details") or {}).get("fields") or {}
        if response.status_code != 400 or body.get("code") != "VALIDATION_ERROR" or dotted(path) not in fields:
            STATS.api_violations += 1
            key = f"{label}: {where} {dotted(path)} not refused by name: HTTP {response.status_code}"
            record(failures, key, case, response)

    call()
    assert_none(failures)
