"""LEV_NEGOTIATION_CACHE (lev.parsers.JsonFirstContentNegotiation): the renderer and media type DRF's
negotiation chooses are kept per kind of request, and are the long way's choice for every Accept header,
format asked for and set of renderers; an answer's bytes are the same with the switch on and off."""

from __future__ import annotations

import pytest
from django.test import RequestFactory, override_settings
from drf_spectacular.views import SpectacularAPIView
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request

from lev.parsers import JsonFirstContentNegotiation

ACCEPTS = [None, "", "application/json", "application/json, text/event-stream", "text/event-stream", "*/*",
           "text/html", "application/vnd.oai.openapi", "application/yaml;q=0.5, application/json;q=0.9",
           "application/vnd.oai.openapi+json", "application/*", "application/json; indent=4", "garbage/;;;",
           ",,,", "application/json;q=0"]
QUERIES = ["", "format=json", "format=openapi", "format=api", "format=yaml", "%66ormat=json", "a=1&format=openapi-json",
           "x=1"]
RENDERER_SETS = {
    "json": [JSONRenderer],
    "json and browsable": [JSONRenderer, BrowsableAPIRenderer],
    "schema": SpectacularAPIView.renderer_classes,
}


def _choose(settings, on: bool, accept, query, renderer_classes, suffix=None):
    extra = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(RequestFactory().get("/api/v1/deals/", QUERY_STRING=query, **extra))
    renderers = [cls() for cls in renderer_classes]
    with override_settings(LEV_NEGOTIATION_CACHE=on):
        renderer, media_type = JsonFirstContentNegotiation().select_renderer(request, renderers, suffix)
    return renderers.index(renderer), type(renderer), media_type


@pytest.mark.parametrize("renderers", list(RENDERER_SETS))
def test_every_choice_is_the_long_ways(settings, renderers):
    JsonFirstContentNegotiation._chosen.clear()
    classes = RENDERER_SETS[renderers]
    for accept in ACCEPTS:
        for query in QUERIES:
            for suffix in (None, "json", "openapi"):
                long_way = _choose(settings, False, accept, query, classes, suffix)
                assert _choose(settings, True, accept, query, classes, suffix) == long_way  # negotiated, kept
                assert _choose(settings, True, accept, query, classes, suffix) == long_way  # read back
    assert JsonFirstContentNegotiation._chosen


def test_the_table_is_bounded(settings, monkeypatch):
    monkeypatch.setattr(JsonFirstContentNegotiation, "_chosen", {})
    for n in range(JsonFirstContentNegotiation.CHOSEN_MAX + 50):
        assert _choose(settings, True, f"application/x-{n}, application/json", "", [JSONRenderer])[1] is JSONRenderer
    assert len(JsonFirstContentNegotiation._chosen) == JsonFirstContentNegotiation.CHOSEN_MAX


def test_an_unreadable_query_string_still_answers_json(settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 2
    query = "a=1&b=2&c=3&format=api"
    assert _choose(settings, True, "text/html", query, [JSONRenderer, BrowsableAPIRenderer]) == \
        _choose(settings, False, "text/html", query, [JSONRenderer, BrowsableAPIRenderer])


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "accept"), [
    ("/api/v1/schema/", "application/json"), ("/api/v1/schema/?format=yaml", "*/*"),
    ("/api/v1/schema/", "application/vnd.oai.openapi"), ("/api/v1/deals/", "application/json"),
    ("/api/v1/deals/?format=api", "text/html"), ("/api/v1/deals/", "*/*"), ("/health", "text/html")])
def test_answers_are_the_same_bytes_on_and_off(client, settings, path, accept):
    answers = []
    for on in (True, False, True):
        settings.LEV_NEGOTIATION_CACHE = on
        response = client.get(path, HTTP_ACCEPT=accept)
        answers.append((response.status_code, response["Content-Type"], response.content))
    assert answers[0] == answers[1] == answers[2]
