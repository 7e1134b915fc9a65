"""/mcp without the pages' middleware (mcp_tools.urls.ENDPOINT_MIDDLEWARE, issue 24) answers every request
exactly as the full stack (settings.MIDDLEWARE) does: status, every header, body. In process, on
SQLite and PostgreSQL; tests/deploy/test_mcp_lean_middleware.py compares the production servers."""

from __future__ import annotations

import logging

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.test.client import ClientHandler

import lev.wsgi
from bench._django import mcp_environ, wsgi_call
from deals.models import Placement
from lev import endpoints
from lev.handlers import ChosenMiddleware, EndpointHandler, EndpointRequest
from mcp_tools.urls import ENDPOINT_MIDDLEWARE
from tests.deals.placements.helpers import deal_with_financials, lenders
from tests.factories import DealFactory
from tests.mcp_tools.mcp_requests import ACCEPT, cases, message

pytestmark = pytest.mark.django_db


class LeanClientHandler(ChosenMiddleware, ClientHandler):
    """The test client's handler with /mcp's middleware only (as lev.wsgi serves /mcp)."""

    middleware = ENDPOINT_MIDDLEWARE


def lean_client() -> Client:
    client = Client()
    client.handler = LeanClientHandler(enforce_csrf_checks=False)
    return client


def send(client: Client, method: str, path: str, headers: dict[str, str], body: bytes):
    content_type = headers.get("Content-Type", "")
    extra = {k: v for k, v in headers.items() if k != "Content-Type"}
    return client.generic(method, path, data=body, content_type=content_type, headers=extra)


def test_mcp_answers_without_page_middleware_are_the_full_stacks(api_key, account, settings, caplog):
    settings.LEV_RATE_LIMIT_READS = "100000/min"
    settings.LEV_MCP_MAX_BODY_BYTES = 5000
    deal = DealFactory(account=account)
    full, lean = Client(), lean_client()
    caplog.set_level(logging.INFO, logger="lev.access")
    for index, (name, method, path, headers, body) in enumerate(cases(api_key, deal.pk, max_body=5000)):
        headers = {**headers, "X-Request-Id": f"diff-{index}"}
        caplog.clear()
        want = send(full, method, path, headers, body)
        full_log = [r.getMessage() for r in caplog.records if r.name == "lev.access"]
        caplog.clear()
        got = send(lean, method, path, headers, body)
        lean_log = [r.getMessage() for r in caplog.records if r.name == "lev.access"]
        assert got.status_code == want.status_code, name
        assert dict(got.headers) == dict(want.headers), name
        assert got.content == want.content, name
        # The access line of the /mcp request, last (after the lines of a tool call's in-process hop).
        assert lean_log == full_log and full_log[-1] == f"{method} {path} {want.status_code}", name
        assert not got.cookies and not want.cookies, name
    # The answers above are the refusals they claim to be (a diff of two identical wrong answers passes).
    statuses = {name: send(lean, method, path, headers, body).status_code
                for name, method, path, headers, body in cases(api_key, deal.pk, max_body=5000)}
    assert statuses["tools/call ok"] == statuses["initialize"] == 200
    assert [statuses[n] for n in ("401 no credential", "405 GET", "406 Accept", "415 Content-Type",
                                  "413 too large", "403 another origin", "404 under /mcp/")] == [
        401, 405, 406, 415, 413, 403, 404]


def test_security_headers_stay_on_mcp_answers(api_key, account, settings):
    deal = DealFactory(account=account)
    _name, method, path, headers, body = cases(api_key, deal.pk, max_body=5000)[5]
    answer = send(lean_client(), method, path, headers, body)
    assert answer.status_code == 200
    assert answer["X-Content-Type-Options"] == "nosniff" and answer["X-Frame-Options"] == "DENY"
    assert answer["Referrer-Policy"] and answer["Cross-Origin-Opener-Policy"]
    assert "default-src" in answer["Content-Security-Policy"]


def test_mcps_fixed_policy_is_django_csps_and_follows_the_settings(api_key, account, settings):
    """/mcp writes django-csp's policy built once (lev.middleware.FixedContentSecurityPolicy): the same header
    as the full stack's django-csp middleware, on a refusal too, and a changed policy (a report-only one
    added, a directive changed) is what the next answer carries."""
    deal = DealFactory(account=account)
    _name, method, path, headers, body = cases(api_key, deal.pk, max_body=5000)[5]
    full = Client()
    lean_answer, full_answer = (send(c, method, path, headers, body) for c in (lean_client(), full))
    assert lean_answer["Content-Security-Policy"] == full_answer["Content-Security-Policy"]
    refused = send(lean_client(), "POST", "/mcp", {"Content-Type": "application/json", "Accept": ACCEPT}, b"{}")
    assert refused.status_code == 401 and refused["Content-Security-Policy"] == full_answer["Content-Security-Policy"]
    assert "Content-Security-Policy-Report-Only" not in lean_answer

    policy = {"DIRECTIVES": {**settings.CONTENT_SECURITY_POLICY["DIRECTIVES"], "img-src": ["'self'", "data:"]}}
    settings.CONTENT_SECURITY_POLICY = {**settings.CONTENT_SECURITY_POLICY, **policy}
    settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {"DIRECTIVES": {"default-src": ["'none'"]}}
    changed, full_changed = (send(c, method, path, headers, body) for c in (lean_client(), full))
    assert "img-src 'self' data:" in changed["Content-Security-Policy"]
    assert changed["Content-Security-Policy"] == full_changed["Content-Security-Policy"]
    assert changed["Content-Security-Policy-Report-Only"] == full_changed["Content-Security-Policy-Report-Only"] \
        == "default-src 'none'"
    # A path django-csp is told to leave alone gets no header on either stack.
    settings.CONTENT_SECURITY_POLICY = {**settings.CONTENT_SECURITY_POLICY, "EXCLUDE_URL_PREFIXES": ["/mcp"]}
    left, full_left = (send(c, method, path, headers, body) for c in (lean_client(), full))
    assert "Content-Security-Policy" not in left and "Content-Security-Policy" not in full_left


def test_a_tool_changing_history_records_the_caller(api_key, account, user, settings):
    deal = deal_with_financials(account)
    bank = lenders(1)[0]
    auth = {"Authorization": f"Bearer {api_key}", "Accept": ACCEPT, "Content-Type": "application/json"}
    lean = lean_client()
    moved = send(lean, "POST", "/mcp", auth, message("tools/call", {"name": "move_deal_stage", "arguments": {
        "deal_id": deal.pk, "stage": "in_market"}}))
    assert moved.status_code == 200 and not moved.json()["result"].get("isError"), moved.content
    placed = send(lean, "POST", "/mcp", auth, message("tools/call", {"name": "create_placements", "arguments": {
        "deal_id": deal.pk, "lender_ids": [bank.pk], "send": True}}))
    assert placed.status_code == 200 and not placed.json()["result"].get("isError"), placed.content
    records = Placement.history.filter(deal_id=deal.pk)
    assert records.exists() and {r.history_user_id for r in records} == {user.pk}


def routed_handlers() -> dict:
    """The applications lev.wsgi routes between ("mcp": /mcp's handler, "site": everything else)."""
    routed = lev.wsgi.site_application
    cells = {name: cell.cell_contents for name, cell in zip(routed.__code__.co_freevars, routed.__closure__,
                                                             strict=True)}
    return {"mcp": cells["lean"]["/mcp"], "site": cells["site"], "lean": cells["lean"]}


def test_lev_wsgi_serves_mcp_and_only_mcp_with_the_lean_handler():
    assert django_settings.LEV_MCP_LEAN_MIDDLEWARE  # the default
    # What an EndpointHandler serves: the endpoint's addresses as its URLs spell them. Spellings the URLs
    # do not match (upper case, doubled slashes) take the full stack, which answers them the JSON 404.
    for path in ("/mcp", "/mcp/readonly", "/mcp/x/deals", "/mcp/x/deals/readonly", "/mcp/"):
        assert endpoints.served_by(path) is not None, path
    for path in ("/mcpx", "/MCP", "//mcp", "/api/v1/deals/", "/health", "/", "/admin/", "/oauth/token/"):
        assert endpoints.served_by(path) is None, path
    routed = routed_handlers()
    assert isinstance(routed["mcp"], EndpointHandler)
    assert routed["mcp"].middleware == ENDPOINT_MIDDLEWARE == endpoints.served_by("/mcp").middleware
    assert list(routed["lean"]) == ["/mcp"]  # the one endpoint registered (by mcp_tools)
    assert routed["site"] is lev.wsgi.django_application
    names = [name for name in django_settings.MIDDLEWARE if name in ENDPOINT_MIDDLEWARE]
    assert names == list(ENDPOINT_MIDDLEWARE)  # each one exists in the site's list, in its order


def test_mcp_is_exempt_from_csrf_checks_with_a_session_cookie(api_key, account, user, settings):
    """A client holding an admin session cookie (a browser-based one, through the full stack with its CSRF
    middleware enforcing) still has its bearer-authenticated /mcp calls answered: the view is CSRF-exempt
    by DRF's as_view(), whatever django-mcp-server's dispatch decorator did. A page under the same checks
    is refused, so the checks were on."""
    settings.LEV_RATE_LIMIT_READS = "100000/min"
    deal = DealFactory(account=account)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    body = message("tools/call", {"name": "get_deal", "arguments": {"deal_id": deal.pk}})
    answer = client.post("/mcp", data=body, content_type="application/json",
                         headers={"Accept": ACCEPT, "Authorization": f"Bearer {api_key}"})
    assert answer.status_code == 200, answer.content[:300]
    assert answer.json()["result"]["structuredContent"]["deal"]["id"] == deal.pk
    for handler in (Client(enforce_csrf_checks=True), lean_client()):
        handler.handler.enforce_csrf_checks = True
        handler.force_login(user)
        again = handler.post("/mcp", data=body, content_type="application/json",
                             headers={"Accept": ACCEPT, "Authorization": f"Bearer {api_key}"})
        assert again.status_code == 200, again.content[:300]
    refused = client.post("/admin/logout/")
    assert refused.status_code == 403


def test_an_mcp_requests_host_is_djangos_worked_out_once(settings):
    """EndpointRequest (lev.wsgi's /mcp requests) answers get_host() as Django's WSGIRequest does, for hosts
    allowed and refused; an allowed one is worked out once per request, a refused one is refused every
    time it is asked (never kept), and another request works its own out."""
    import io

    from django.core.exceptions import DisallowedHost
    from django.core.handlers.wsgi import WSGIRequest

    def environ(host: str) -> dict:
        return {"REQUEST_METHOD": "POST", "PATH_INFO": "/mcp", "SERVER_NAME": "srv", "SERVER_PORT": "80",
                "HTTP_HOST": host, "wsgi.input": io.BytesIO(b""), "wsgi.url_scheme": "http"}

    settings.ALLOWED_HOSTS = ["localhost", ".example.com", "[::1]"]
    for host in ("localhost", "localhost:8000", "api.example.com", "[::1]:9000", "evil.test", "localhost:bad",
                 "a b", ""):
        want = WSGIRequest(environ(host))
        got = EndpointRequest(environ(host))
        try:
            expected = want.get_host()
        except DisallowedHost:
            for _ in range(2):
                with pytest.raises(DisallowedHost):
                    got.get_host()
            assert "_lev_host" not in got.__dict__
            continue
        assert got.get_host() == got.get_host() == expected, host
        got.META["HTTP_HOST"] = "evil.test"  # (nothing does this; shows the answer is the one worked out)
        assert got.get_host() == expected
        assert EndpointRequest(environ("evil.test")).__dict__.get("_lev_host") is None


def test_lev_wsgi_hands_mcp_requests_as_mcp_requests_and_refuses_a_bad_host_in_json(api_key, settings):
    """Through lev.wsgi (the production application): /mcp's requests are EndpointRequest, and a Host not in
    ALLOWED_HOSTS is refused with the API's JSON 400, as before."""
    assert routed_handlers()["mcp"].request_class is EndpointRequest
    body = message("ping")
    for host, status in (("localhost", 200), ("evil.test", 400)):
        environ = {**mcp_environ(api_key, body), "HTTP_HOST": host}
        answer_status, _headers, out = wsgi_call(lev.wsgi.application, environ)
        assert answer_status.startswith(str(status)), (host, answer_status, out[:200])
        if status == 400:
            assert b'"code":"VALIDATION_ERROR"' in out.replace(b" ", b"")
