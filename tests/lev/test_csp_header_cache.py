"""LEV_CSP_HEADER_CACHE (lev.middleware.CSPMiddleware): a response without a nonce or a csp decorator's
change gets the policy headers built once per process, byte for byte django-csp's; everything else is
django-csp's own way. Each case runs the same request and response through django-csp's middleware and
through ours, and compares every header and what `request.csp_nonce` does afterwards."""

from __future__ import annotations

import pytest
from csp.constants import NONCE, SELF
from csp.exceptions import CSPNonceError
from csp.middleware import CSPMiddleware as DjangoCSPMiddleware
from django.http import HttpResponse, JsonResponse
from django.test import RequestFactory

import lev.middleware
from lev.middleware import CSPMiddleware

REPORT_ONLY = {"DIRECTIVES": {"default-src": [SELF], "script-src": [SELF, NONCE], "report-uri": "/csp-report/"}}


def _answer(request):
    return JsonResponse({"ok": True})


def _through(middleware_class, path="/mcp", *, nonce=False, status=200, attrs=None, header=None):
    request = RequestFactory().post(path)
    middleware = middleware_class(_answer)
    middleware.process_request(request)
    if nonce:
        str(request.csp_nonce)  # what a template's {{ request.csp_nonce }} does
    response = HttpResponse("x", status=status) if status != 200 else JsonResponse({"ok": True})
    for name, value in (attrs or {}).items():
        setattr(response, name, value)
    if header:
        response["Content-Security-Policy"] = header
    response = middleware.process_response(request, response)
    try:
        str(request.csp_nonce)
        after = "nonce"
    except CSPNonceError:
        after = "CSPNonceError"
    headers = dict(response.headers)
    if getattr(request, "_csp_nonce", None):  # each request has its own nonce: compared as a placeholder
        headers = {name: value.replace(request._csp_nonce, "NONCE") for name, value in headers.items()}
    return request, headers, after


def _directives(through) -> set[str]:
    # django-csp writes the directives in a set's order, which varies from process to process.
    return set(through[1]["Content-Security-Policy"].split("; "))


CASES = {
    "json answer": {},
    "page with a nonce": {"nonce": True},
    "csp_update": {"attrs": {"_csp_update": {"img-src": ["https://img.example"]}}},
    "csp_replace": {"attrs": {"_csp_replace": {"script-src": ["https://cdn.example"]}}},
    "csp_exempt": {"attrs": {"_csp_exempt": True}},
    "csp_exempt report-only": {"attrs": {"_csp_exempt_ro": True}},
    "header already set": {"header": "default-src 'none'"},
    "404": {"status": 404},
    "500": {"status": 500},
    "page path": {"path": "/admin/"},
}


@pytest.mark.parametrize("report_only", [False, True], ids=["policy", "policy and report-only"])
@pytest.mark.parametrize("debug", [False, True], ids=["", "DEBUG"])
@pytest.mark.parametrize("case", list(CASES))
def test_headers_are_django_csps_byte_for_byte(settings, case, debug, report_only):
    settings.LEV_CSP_HEADER_CACHE = True
    settings.DEBUG = debug
    if report_only:
        settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = REPORT_ONLY
    kwargs = CASES[case]
    _, long_headers, long_after = _through(DjangoCSPMiddleware, **kwargs)
    for _ in range(2):  # the first builds and keeps the headers, the second reads them
        request, headers, after = _through(CSPMiddleware, **kwargs)
        assert headers == long_headers
        assert after == long_after
    if kwargs.get("nonce"):
        assert "'nonce-NONCE'" in headers["Content-Security-Policy"] and request._csp_nonce


def test_no_policy_at_all_sets_no_header(settings):
    settings.CONTENT_SECURITY_POLICY = None
    _, long_headers, _ = _through(DjangoCSPMiddleware)
    _, headers, _ = _through(CSPMiddleware)
    assert headers == long_headers and "Content-Security-Policy" not in headers


def test_excluded_prefixes_are_honoured(settings):
    settings.CONTENT_SECURITY_POLICY = {**settings.CONTENT_SECURITY_POLICY, "EXCLUDE_URL_PREFIXES": ["/mcp"]}
    assert "Content-Security-Policy" not in _through(CSPMiddleware)[1]
    assert _through(CSPMiddleware, "/api/v1/deals/")[1] == _through(DjangoCSPMiddleware, "/api/v1/deals/")[1]


def test_built_once_per_policy_and_again_when_the_policy_changes(settings, monkeypatch):
    built = []

    def counting(*args, **kwargs):
        built.append(kwargs.get("report_only", False))
        return lev.middleware.build_policy.__wrapped__(*args, **kwargs)

    counting.__wrapped__ = lev.middleware.build_policy
    monkeypatch.setattr(lev.middleware, "build_policy", counting)
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": [SELF], "img-src": ["data:"]}}
    for _ in range(5):
        assert _directives(_through(CSPMiddleware)) == {"default-src 'self'", "img-src data:"}
    assert built == [False, True]  # the policy and the (empty) report-only one, once
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": [SELF], "img-src": [SELF]}}
    assert _directives(_through(CSPMiddleware)) == {"default-src 'self'", "img-src 'self'"}
    assert len(built) == 4


def test_off_is_django_csps_way(settings, monkeypatch):
    settings.LEV_CSP_HEADER_CACHE = False
    calls = []
    monkeypatch.setattr(lev.middleware, "build_policy", lambda *a, **k: calls.append(1) or "unused")
    assert _through(CSPMiddleware)[1] == _through(DjangoCSPMiddleware)[1]
    assert calls == []


def test_the_site_runs_ours_on_every_chain(settings):
    from lev.handlers import MCP_MIDDLEWARE

    assert "lev.middleware.CSPMiddleware" in settings.MIDDLEWARE
    assert "lev.middleware.CSPMiddleware" in MCP_MIDDLEWARE
    assert not any(name.startswith("csp.") for name in settings.MIDDLEWARE)
