"""The authentication classes read `Authorization` from the environ as DRF's get_authorization_header reads
it from the headers. (lev.api_request's LevRequest, tested here before, is retired: issue 40.)"""

from __future__ import annotations

import pytest
from django.test import RequestFactory
from rest_framework.authentication import get_authorization_header
from rest_framework.request import Request

from lev.accounts.auth import authorization_header


def _both(**extra):
    django_request = RequestFactory().post("/api/v1/deals/?x=1", data=b"{}", content_type="application/json",
                                           HTTP_HOST="testserver", HTTP_X_REQUEST_ID="abc", **extra)
    return django_request, Request(django_request)


@pytest.mark.parametrize("header", [None, "Bearer lev_sk_abc", "Bearer  two  parts", "Basic Zm9vOmJhcg==",
                                    "Bearer caf\u00e9"])
def test_the_authorization_header_is_read_as_drf_reads_it(header):
    extra = {} if header is None else {"HTTP_AUTHORIZATION": header}
    _django_request, drf = _both(**extra)
    try:
        expected = get_authorization_header(drf)
    except UnicodeEncodeError:  # DRF's own encoding (iso-8859-1) fails the same way
        with pytest.raises(UnicodeEncodeError):
            authorization_header(drf)
        return
    assert authorization_header(drf) == expected
