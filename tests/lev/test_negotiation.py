"""lev.parsers.JsonFirstContentNegotiation remembers DRF's choice per Accept header, format and renderer
classes: the choice it gives, the first time and every time after, is DRF's own (or the first renderer where
DRF would refuse), and a client varying its Accept header cannot grow what is remembered past its bound."""

from __future__ import annotations

import pytest
from django.core.exceptions import SuspiciousOperation
from django.http import Http404
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer, TemplateHTMLRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from lev import parsers

ACCEPTS = [None, "*/*", "application/json", "application/json, text/event-stream", "text/event-stream",
           "application/json; indent=4", "text/html", "text/html;q=0.9, application/json;q=0.8", "image/png",
           "application/*", "", "garbage;;;", "text/*, */*;q=0.1"]


def drf_choice(request, renderers):
    try:
        renderer, media_type = DefaultContentNegotiation().select_renderer(request, renderers)
    except (Http404, NotAcceptable, SuspiciousOperation):
        renderer, media_type = renderers[0], renderers[0].media_type
    return type(renderer), media_type


@pytest.mark.parametrize("classes", [(JSONRenderer,), (JSONRenderer, BrowsableAPIRenderer),
                                     (TemplateHTMLRenderer, JSONRenderer)])
@pytest.mark.parametrize("query", ["", "?format=json", "?format=api", "?format=xml"])
def test_the_remembered_choice_is_drfs_every_time(classes, query, monkeypatch):
    monkeypatch.setattr(parsers, "_CHOSEN", {})
    factory = APIRequestFactory()
    for _round in range(2):  # the first time works it out, the second reads it back
        for accept in ACCEPTS:
            extra = {} if accept is None else {"HTTP_ACCEPT": accept}
            request = Request(factory.get("/api/v1/deals/" + query, **extra))
            renderers = [cls() for cls in classes]
            renderer, media_type = parsers.JsonFirstContentNegotiation().select_renderer(request, renderers)
            assert renderer in renderers
            assert (type(renderer), media_type) == drf_choice(request, renderers), (accept, query, classes)


def test_what_is_remembered_is_bounded(monkeypatch):
    monkeypatch.setattr(parsers, "_CHOSEN", {})
    factory = APIRequestFactory()
    for n in range(parsers._CHOSEN_MAX + 50):
        request = Request(factory.get("/api/v1/deals/", HTTP_ACCEPT=f"application/json; v={n}"))
        _renderer, media_type = parsers.JsonFirstContentNegotiation().select_renderer(request, [JSONRenderer()])
        assert media_type == f"application/json; v={n}"
    assert len(parsers._CHOSEN) == parsers._CHOSEN_MAX
