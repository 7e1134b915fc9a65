"""lev.handlers.EnvironHeaders (a /mcp request's `headers`, issue 24) answers as Django's HttpHeaders of the
same environ: every lookup by name (present, absent, any case, `_` for `-`, not ASCII, Content-Type and
Content-Length in either spelling or both), and the mapping as a whole."""

from __future__ import annotations

import io

import pytest
from django.http.request import HttpHeaders

from lev.handlers import EnvironHeaders, McpRequest

ENVIRONS = [
    {"HTTP_HOST": "localhost", "HTTP_X_REQUEST_ID": "abc", "HTTP_ACCEPT": "application/json, text/event-stream",
     "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": "12", "HTTP_AUTHORIZATION": "Bearer x",
     "HTTP_MCP_PROTOCOL_VERSION": "2025-11-25", "REQUEST_METHOD": "POST", "wsgi.input": None},
    {"HTTP_ORIGIN": "https://a.example", "CONTENT_TYPE": "text/plain", "HTTP_CONTENT_TYPE": "application/json",
     "CONTENT_LENGTH": "", "HTTP_CONTENT_LENGTH": "5", "PATH_INFO": "/mcp"},
    {"HTTP_CONTENT_TYPE": "application/json", "HTTP_": "nameless", "HTTP_X_1": "one", "SERVER_NAME": "srv"},
    {},
]
NAMES = ["Host", "host", "HOST", "X-Request-Id", "x_request_id", "X_Request-ID", "Accept", "Content-Type",
         "content_type", "CONTENT-LENGTH", "Content-Length", "Authorization", "MCP-Protocol-Version", "Origin",
         "origin", "X-1", "x_1", "", "-", "_", "Http-", "HTTP", "Request-Method", "Path-Info", "Wsgi.Input",
         "Server-Name", "Hóst", "X-Request-Íd", "Missing-Header"]


def answer(headers, name):
    try:
        return ("value", headers[name])
    except KeyError:
        return ("KeyError",)


@pytest.mark.parametrize("environ", ENVIRONS, ids=range(len(ENVIRONS)))
def test_every_lookup_is_djangos(environ):
    for name in NAMES:
        django, ours = HttpHeaders(environ), EnvironHeaders(environ)
        assert answer(ours, name) == answer(django, name), name
        assert ours.get(name, "default") == django.get(name, "default"), name
        assert (name in ours) == (name in django), name


@pytest.mark.parametrize("environ", ENVIRONS, ids=range(len(ENVIRONS)))
def test_the_whole_mapping_is_djangos(environ):
    django, ours = HttpHeaders(environ), EnvironHeaders(environ)
    assert list(ours) == list(django)
    assert len(ours) == len(django)
    assert dict(ours.items()) == dict(django.items())
    assert ours == django and ours == dict(django)
    assert ours.copy() == django.copy()
    assert repr(ours) == repr(django)


def test_an_mcp_requests_headers_are_environ_headers():
    environ = {**ENVIRONS[0], "wsgi.input": io.BytesIO(b""), "PATH_INFO": "/mcp", "SERVER_NAME": "srv",
               "SERVER_PORT": "80", "wsgi.url_scheme": "http"}
    request = McpRequest(environ)
    assert isinstance(request.headers, EnvironHeaders)
    assert request.headers is request.headers  # once per request, as Django's
    assert request.headers["X-Request-Id"] == "abc" and request.headers.get("Origin") is None
