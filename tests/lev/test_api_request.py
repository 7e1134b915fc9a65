"""lev.api_request: the views on the MCP hot path get a LevRequest, whose outright attributes answer what DRF's
Request finds through __getattr__ (the Django request's own, read when asked); and the authentication
classes read `Authorization` from the environ as DRF's get_authorization_header reads it from the headers."""

from __future__ import annotations

import pytest
from django.test import RequestFactory
from rest_framework.authentication import get_authorization_header
from rest_framework.request import Request

from lev.accounts.auth import authorization_header
from lev.api_request import LevRequest


def _both(**extra):
    django_request = RequestFactory().post("/api/v1/deals/?x=1", data=b"{}", content_type="application/json",
                                           HTTP_HOST="testserver", HTTP_X_REQUEST_ID="abc", **extra)
    drf = Request(django_request)
    lev = Request(django_request)
    lev.__class__ = LevRequest
    return django_request, drf, lev


def test_lev_request_answers_what_drf_finds_on_the_django_request():
    django_request, drf, lev = _both(HTTP_AUTHORIZATION="Bearer lev_sk_x")
    assert type(lev).__dict__.keys() >= {"method", "META", "headers", "scheme", "get_host"}
    for name in ("method", "META", "headers", "scheme"):
        assert getattr(lev, name) == getattr(drf, name) == getattr(django_request, name)
    assert lev.META is django_request.META and lev.headers is django_request.headers
    assert lev.get_host() == drf.get_host() == "testserver"
    # Read when asked: a change to the Django request shows at once, as through DRF's __getattr__.
    django_request.method = "PATCH"
    django_request.META["HTTP_X_EXTRA"] = "1"
    assert lev.method == drf.method == "PATCH" and lev.META["HTTP_X_EXTRA"] == "1"
    # DRF's own attributes are DRF's, and the rest still goes through __getattr__.
    assert lev.query_params == drf.query_params and lev.path == drf.path == "/api/v1/deals/"


@pytest.mark.parametrize("header", [None, "Bearer lev_sk_abc", "Bearer  two  parts", "Basic Zm9vOmJhcg==",
                                    "Bearer caf\u00e9"])
def test_the_authorization_header_is_read_as_drf_reads_it(header):
    extra = {} if header is None else {"HTTP_AUTHORIZATION": header}
    _django_request, drf, lev = _both(**extra)
    try:
        expected = get_authorization_header(drf)
    except UnicodeEncodeError:  # DRF's own encoding (iso-8859-1) fails the same way
        with pytest.raises(UnicodeEncodeError):
            authorization_header(lev)
        return
    assert authorization_header(lev) == authorization_header(drf) == expected


@pytest.mark.django_db
def test_the_hot_path_views_get_a_lev_request(api, monkeypatch):
    from deals.api import DealDetailApi
    from mcp_tools.views import McpView

    seen = []
    for view in (DealDetailApi, McpView):
        def spy(self, request, *args, _original=view.initial, **kwargs):
            seen.append((type(self).__name__, type(request)))
            return _original(self, request, *args, **kwargs)

        monkeypatch.setattr(view, "initial", spy)
    api.get("/api/v1/deals/1/")
    api.post("/mcp", data={"jsonrpc": "2.0", "id": 1, "method": "ping"}, format="json",
             HTTP_ACCEPT="application/json, text/event-stream")
    assert ("DealDetailApi", LevRequest) in seen and ("McpView", LevRequest) in seen
