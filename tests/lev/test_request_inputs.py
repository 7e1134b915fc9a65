"""Inputs Django or DRF refuse before any serializer runs: each is a 4xx in the one JSON error
body, never a 500 or an HTML page, with DEBUG on and off (DEBUG renders technical HTML pages)."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import SuspiciousOperation
from django.test import Client, RequestFactory

from lev import limits
from lev.middleware import RequestIdMiddleware

pytestmark = pytest.mark.django_db

MCP_ACCEPT = "application/json, text/event-stream"
TOO_MANY = limits.REQUEST_FIELDS_MAX + 100


@pytest.fixture(params=[False, True], ids=["debug-off", "debug-on"])
def debug(request, settings):
    settings.DEBUG = request.param
    return request.param


@pytest.fixture
def web(api_key) -> Client:
    """A plain Django client (the whole middleware stack) sending the API key."""
    return Client(HTTP_AUTHORIZATION=f"Bearer {api_key}")


def assert_json_error(response, status: int, message_prefix: str, code: str = "VALIDATION_ERROR") -> dict:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].split(";")[0] == "application/json", response["Content-Type"]
    body = json.loads(response.content)
    assert set(body) == {"code", "message", "details"}
    assert body["code"] == code
    assert body["message"].startswith(message_prefix), body["message"]
    text = response.content.decode()
    for internal in ("Traceback", "<html", "django.", "DATA_UPLOAD", ".py"):
        assert internal not in text
    return body


# --- parsing: deeply nested JSON --------------------------------------------------------------------
def test_deeply_nested_json_is_a_parse_error(web, debug):
    response = web.post("/api/v1/deals/", "[" * 3000, content_type="application/json", HTTP_ACCEPT=MCP_ACCEPT)
    body = assert_json_error(response, 400, "Validation failed: the request body is not valid JSON")
    assert "body" in body["details"]["fields"]
    # /mcp speaks JSON-RPC: the same body is a parse error (-32700) there.
    response = web.post("/mcp", "[" * 3000, content_type="application/json", HTTP_ACCEPT=MCP_ACCEPT)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700 and response.json()["id"] is None


def test_json_nested_within_the_recursion_limit_but_past_the_depth_bound_is_refused(web):
    # Parses without a RecursionError, but would hand a deep structure to the code after the parser.
    deep = "[" * (limits.JSON_MAX_DEPTH + 1) + "]" * (limits.JSON_MAX_DEPTH + 1)
    assert_json_error(web.post("/api/v1/deals/", deep, content_type="application/json"), 400,
                      "Validation failed: the request body is not valid JSON")
    fine = "[" * limits.JSON_MAX_DEPTH + "]" * limits.JSON_MAX_DEPTH  # at the bound: the serializer's turn
    assert_json_error(web.post("/api/v1/deals/", fine, content_type="application/json"), 400,
                      "Validation failed: expected a JSON object")


def test_invalid_utf8_body_is_a_parse_error(web):
    assert_json_error(web.post("/api/v1/deals/", b'{"title": "\xff"}', content_type="application/json"), 400,
                      "Validation failed: the request body is not valid JSON")


# --- Django's request bounds ------------------------------------------------------------------------
def test_too_many_query_parameters_without_a_key_is_a_400(debug):
    query = "&".join(f"p{i}=1" for i in range(TOO_MANY))
    body = assert_json_error(Client().get(f"/api/v1/schema/?{query}"), 400,
                             f"Validation failed: request may have at most {limits.REQUEST_FIELDS_MAX} ")
    assert "request" in body["details"]["fields"]


def test_too_many_query_parameters_on_an_api_view_is_a_400(web, debug):
    query = "&".join(f"p{i}=1" for i in range(TOO_MANY))
    assert_json_error(web.get(f"/api/v1/deals/?{query}"), 400, "Validation failed: request may have at most")


def test_a_form_body_with_too_many_fields_is_refused(web, debug):
    form = "&".join(f"f{i}=1" for i in range(TOO_MANY))
    response = web.post("/api/v1/deals/", form, content_type="application/x-www-form-urlencoded")
    # The API takes JSON only (a browser session's CSRF check reads the body through the same
    # parsers), so the form is refused before its fields are even counted.
    assert_json_error(response, 415, "Validation failed: Unsupported media type")


def test_a_body_over_the_upload_limit_is_a_413(web, debug):
    big = json.dumps({"title": "x", "description": "y" * (limits.REQUEST_BODY_MAX_BYTES + 1)})
    body = assert_json_error(web.post("/api/v1/deals/", big, content_type="application/json"), 413,
                             "Validation failed: body must be at most")
    assert body["details"]["fields"]["body"]


# --- JSON, never HTML ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("method", "path"), [("get", "/api/v1/deals/"), ("post", "/mcp"), ("get", "/api/v1/schema/")])
def test_a_host_not_in_allowed_hosts_gets_json(web, debug, method, path):
    response = getattr(web, method)(path, HTTP_HOST="evil.example", HTTP_ACCEPT=MCP_ACCEPT)
    body = assert_json_error(response, 400, "Validation failed: Host ")
    assert "evil.example" not in response.content.decode()
    assert body["details"]["fields"] == {"Host": ["is not a host name this server answers to"]}
    assert response["X-Request-Id"]


def test_a_host_not_in_allowed_hosts_still_gets_the_html_page_outside_the_api(debug):
    assert Client().get("/admin/login/", HTTP_HOST="evil.example").status_code == 400


@pytest.mark.parametrize(("query", "status", "prefix", "code"), [
    ("", 404, "Deal not found: 987654", "NOT_FOUND"),
    # The deal views know no `format` parameter (a typo never passes silently), and say so in JSON.
    ("?format=api", 400, "Validation failed: format is not a known field", "VALIDATION_ERROR"),
    ("?format=html", 400, "Validation failed: format is not a known field", "VALIDATION_ERROR"),
])
def test_errors_are_json_whatever_the_client_accepts(web, debug, query, status, prefix, code):
    response = web.get(f"/api/v1/deals/987654/{query}", HTTP_ACCEPT="text/html")
    assert_json_error(response, status, prefix, code=code)


def test_format_api_never_renders_the_browsable_api(web, debug):
    response = web.get("/api/v1/deals/?format=api", HTTP_ACCEPT="text/html")
    assert response.status_code != 404
    assert response["Content-Type"].split(";")[0] == "application/json"
    assert b"<html" not in response.content.lower()


def test_successes_are_json_for_a_browser_accept_header(web, debug):
    response = web.get("/api/v1/deals/", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"


def test_the_schema_still_comes_in_both_formats():
    assert Client().get("/api/v1/schema/?format=json")["Content-Type"].startswith("application/vnd.oai.openapi+json")
    assert Client().get("/api/v1/schema/")["Content-Type"].startswith("application/vnd.oai.openapi")


def test_a_schema_error_is_json_not_yaml(debug):
    response = Client().get("/api/v1/schema/?" + "&".join(f"p{i}=1" for i in range(TOO_MANY)))
    assert response["Content-Type"].split(";")[0] == "application/json"


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "multipart/form-data; boundary=b"])
def test_form_bodies_on_mcp_get_json(web, debug, content_type):
    multipart = '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--b--\r\n'
    body = "a=1" if "urlencoded" in content_type else multipart
    response = web.post("/mcp", body, content_type=content_type, HTTP_ACCEPT=MCP_ACCEPT)
    assert_json_error(response, 415, "Validation failed: the Content-Type of an MCP request must be application/json")


def test_an_unknown_api_route_is_json_with_debug_on(web, debug):
    assert_json_error(web.get("/api/v1/no-such-thing/", HTTP_ACCEPT="text/html"), 404, "Resource not found",
                      code="NOT_FOUND")


# --- the outermost middleware's net: pages Django made for failures outside any view --------------
def failing_middleware_stack(exc: Exception):
    """What RequestIdMiddleware wraps: Django's exception-to-response conversion around a
    middleware that raises (as CommonMiddleware does for a bad Host)."""
    from django.core.handlers.exception import convert_exception_to_response

    def inner(request):
        raise exc

    return convert_exception_to_response(inner)


@pytest.mark.parametrize(("exc", "status", "code", "prefix"), [
    (RuntimeError("secret detail /srv/app.py"), 500, "INTERNAL_ERROR", "Internal error: "),
    (SuspiciousOperation("secret"), 400, "VALIDATION_ERROR", "Validation failed: request is malformed"),
])
@pytest.mark.parametrize("path", ["/api/v1/deals/", "/mcp"])
def test_an_error_page_made_by_django_outside_a_view_becomes_the_json_body(settings, debug, exc, status, code,
                                                                            prefix, path):
    settings.DEBUG_PROPAGATE_EXCEPTIONS = False
    response = RequestIdMiddleware(failing_middleware_stack(exc))(RequestFactory().get(path))
    body = assert_json_error(response, status, prefix, code=code)
    assert "secret" not in json.dumps(body)
    assert response["X-Request-Id"]


def test_pages_outside_the_api_are_left_alone(settings, debug):
    response = RequestIdMiddleware(failing_middleware_stack(RuntimeError("x")))(RequestFactory().get("/admin/"))
    assert response.status_code == 500 and not response["Content-Type"].startswith("application/json")


# --- 404s under /mcp and /api/, as clients mistype them (issue #19, item 8) --------------------------------
MISTYPED_PATHS = [
    "/MCP", "/Mcp", "/mCp", "/MCP/", "//mcp", "///mcp", "//MCP/", "/mcp/", "/mcp//", "/mcp/x", "/mcpx", "//mcp/x",
    "/api", "/API", "/API/", "/Api/x", "/API/v1/deals/", "//api/v1/deals/", "/api//v1//deals/", "/api/v1/nope/",
    "/api/v2/", "/api/v1/deals/abc/", "/API/V1/LENDERS/",
]


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "DELETE"])
def test_every_404_under_mcp_and_api_is_the_json_error_body(method, debug):
    """The API's JSON NOT_FOUND body, never the site's HTML page. PATH_INFO is set as gunicorn sets it
    (the path exactly as sent): Django's test client would read `//mcp` as a host name, and the live
    test server (Python's http.server) folds leading slashes, which gunicorn does not."""
    failures = []
    for path in MISTYPED_PATHS:
        response = Client().generic(method, "/", b"{}" if method in ("POST", "PUT") else b"",
                                    content_type="application/json", HTTP_ACCEPT="text/html", PATH_INFO=path)
        content_type = response.get("Content-Type", "")
        if response.status_code != 404 or content_type.split(";")[0] != "application/json":
            failures.append(f"{method} {path}: {response.status_code} {content_type} {response.content[:80]!r}")
            continue
        body = json.loads(response.content)
        if body.get("code") != "NOT_FOUND" or set(body) != {"code", "message", "details"}:
            failures.append(f"{method} {path}: {body}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/api/v1/deals"),
    ("PATCH", "/api/v1/deals/1"),
    ("PUT", "/api/v1/deals/1/financials"),
    ("DELETE", "/api/v1/deals/1/properties/2"),
    ("GET", "/api/v1/deals"),
])
def test_a_missing_trailing_slash_under_the_api_is_a_308_keeping_method_and_body(web, debug, method, path):
    """Django answers a POST without the slash with RuntimeError when DEBUG is on (`make run`: a 500
    from a typo) and with a 301 otherwise, which clients follow as a GET, losing the write."""
    response = web.generic(method, f"{path}?x=1", data=json.dumps({"title": "Typo"}), content_type="application/json")
    assert response.status_code == 308, response.content[:300]
    assert response["Location"] == f"{path}/?x=1"


def test_a_post_without_the_slash_still_creates_the_deal_when_followed(web, debug):
    response = web.post("/api/v1/deals", data={"title": "Followed", "loan_amount": "1000000"},
                        content_type="application/json", follow=True)
    assert response.redirect_chain == [("/api/v1/deals/", 308)]
    assert response.status_code == 201, response.content[:300]
    assert json.loads(response.content)["title"] == "Followed"


def test_pages_outside_the_api_keep_djangos_slash_redirect(web, settings):
    settings.DEBUG = False
    response = web.get("/admin")
    assert response.status_code == 301
    assert response["Location"] == "/admin/"
