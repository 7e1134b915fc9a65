"""Numbers no float holds, in every numeric field of the REST API (issue #19, item 1).

The MCP tools once crashed on a 400-digit loan amount while the API refused it with a 400; this keeps
the API that way for every numeric field it documents, walking its own OpenAPI description: every
integer and number property of every request body (nested ones too), every numeric query parameter
and every id in a path. Bodies are raw JSON text, so 400-digit integers and 1e400 literals reach the
parser exactly as a client writes them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from tests.deals.fixtures import eager_jobs
from tests.fuzz.conftest import World, make_world
from tests.fuzz.strategies import dotted, numeric_paths, put

__all__ = ["eager_jobs"]
pytestmark = pytest.mark.django_db

PLACEHOLDER = "\u2063NUMBER\u2063"
HUGE = {"10**400": str(10**400), "-10**400": str(-(10**400)), "10**309": str(10**309), "1e400": "1e400",
        "-1e400": "-1e400"}
# Path parameters -> the World's ids of rows the key's account owns, so a body reaches validation.
KNOWN_IDS = {"deal_id": "deal_ids", "property_id": "property_ids", "lender_id": "lender_ids",
             "search_id": "search_ids", "placement_id": "placement_ids", "term_sheet_id": "term_sheet_ids",
             "stage_id": "stage_ids", "company_id": "company_ids", "contact_id": "contact_ids",
             "note_id": "note_ids", "program_id": "program_ids", "import_id": "import_ids",
             "document_id": "document_ids", "send_id": "send_ids", "package_id": "package_ids"}


def path_value(parameter: dict[str, Any], world: World) -> Any:
    """A real value of a path parameter: an id the World owns, or the first of an enum (a rate index)."""
    if "enum" in parameter.get("schema", {}):
        return parameter["schema"]["enum"][0]
    return getattr(world, KNOWN_IDS[parameter["name"]])[1 if parameter["name"] == "deal_id" else 0]


@pytest.fixture
def world(eager_jobs) -> World:
    return make_world()


@pytest.fixture
def openapi() -> dict[str, Any]:
    return json.loads(Client().get("/api/v1/schema/?format=json").content)


def operations(openapi: dict[str, Any], world: World):
    """(method, url with real ids, operation) of every documented operation."""
    for route, item in openapi["paths"].items():
        for method, operation in item.items():
            ids = {p["name"]: path_value(p, world) for p in operation.get("parameters", []) if p["in"] == "path"}
            yield method, route, route.format(**ids), operation


def judge(response, field: str, where: str, failures: list[str], *,
          expected: dict[int, str] | None = None) -> None:
    """The one JSON error body with an expected status and code (400 VALIDATION_ERROR naming
    `field` unless told otherwise)."""
    expected = expected or {400: "VALIDATION_ERROR"}
    if response.status_code not in expected or response["Content-Type"] != "application/json":
        failures.append(f"{where}: HTTP {response.status_code} {response.content[:200]!r}")
        return
    body = json.loads(response.content)
    fields = (body.get("details") or {}).get("fields", {})
    if body.get("code") != expected[response.status_code] or (field and field not in fields):
        failures.append(f"{where}: {body}")


def test_every_numeric_body_field_and_query_parameter_refuses_numbers_no_float_holds(world, openapi):
    web = Client(HTTP_AUTHORIZATION=f"Bearer {world.api_key}")
    components = openapi["components"]["schemas"]
    failures: list[str] = []
    sent = {"body": 0, "query": 0}
    for method, _route, url, operation in operations(openapi, world):
        for parameter in operation.get("parameters", []):
            if parameter["in"] != "query" or parameter.get("schema", {}).get("type") not in ("integer", "number"):
                continue
            for label, literal in HUGE.items():
                sent["query"] += 1
                response = getattr(web, method)(f"{url}?{parameter['name']}={literal}")
                judge(response, parameter["name"], f"{method} {url}?{parameter['name']}={label}", failures)
        body = (operation.get("requestBody") or {}).get("content", {}).get("application/json", {}).get("schema")
        for path in numeric_paths(body or {}, components):
            value: dict[str, Any] = {}
            put(value, path, PLACEHOLDER)
            field = dotted(path)
            for label, literal in HUGE.items():
                sent["body"] += 1
                text = json.dumps(value).replace(json.dumps(PLACEHOLDER), literal)
                response = getattr(web, method)(url, text, content_type="application/json")
                judge(response, field, f"{method} {url} {field}={label}", failures)
    # The walk found the numbers (money, rates, ids, counts, pages): a schema that hid them would shrink it.
    assert sent["body"] >= 40 * len(HUGE) and sent["query"] >= 20 * len(HUGE), sent
    assert not failures, f"{len(failures)} of {sum(sent.values())} requests:\n" + "\n".join(failures)


def test_an_id_no_row_can_have_in_any_path_is_not_found(world, openapi):
    """An id past PostgreSQL's bigint (2**63, and 400 digits) in a path is a row that does not exist:
    404 (a write whose empty body is checked first may answer 400), never a database error."""
    web = Client(HTTP_AUTHORIZATION=f"Bearer {world.api_key}")
    failures: list[str] = []
    sent = 0
    for method, route, _url, operation in operations(openapi, world):
        path = {p["name"]: p for p in operation.get("parameters", []) if p["in"] == "path"}
        for name in [n for n, p in path.items() if p.get("schema", {}).get("type") == "integer"]:
            for literal in (str(10**400), str(2**63)):
                ids = {other: path_value(p, world) for other, p in path.items()}
                url = route.format(**{**ids, name: literal})
                sent += 1
                data = "{}" if method in ("post", "put", "patch") else None
                response = getattr(web, method)(url, data, content_type="application/json") if data else \
                    getattr(web, method)(url)
                # A write may check its (empty) body first: then a 400 for the body, never a 5xx.
                expected = {404: "NOT_FOUND", 400: "VALIDATION_ERROR"} if data else {404: "NOT_FOUND"}
                judge(response, "", f"{method} {route} {name}={literal[:8]}…", failures, expected=expected)
    assert sent >= 30, sent
    assert not failures, f"{len(failures)} of {sent} requests:\n" + "\n".join(failures)
