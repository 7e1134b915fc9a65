"""An error answer without the API's `code` is mapped by its HTTP status, for every status of the
contract table (ARCHITECTURE.md, "The error contract"): what a proxy, a load balancer or another
server in front of the API answers. A real HTTP backend (`LEV_API_BASE_URL`, the HTTP transport)
answers each status with a JSON body that has no `code`, with one whose `message` is not the API's,
and with an HTML page; the agent gets the contract's code, category, retryability and message, and
nothing of the body's text.
"""

from __future__ import annotations

import json
import re

import pytest
from django.test import RequestFactory

from lev.errors import UPSTREAM_MESSAGE
from mcp_tools import resilience
from mcp_tools.server import get_server
from tests.backend_stub import BackendStub, Reply
from tests.fuzz.contract import MESSAGE_PREFIX

pytestmark = pytest.mark.django_db

# status -> (code, errorCategory, isRetryable): the contract table's "from the API" column.
CONTRACT = {
    400: ("VALIDATION_ERROR", "validation", False),
    422: ("VALIDATION_ERROR", "validation", False),
    401: ("AUTH_ERROR", "permission", False),
    403: ("FORBIDDEN", "permission", False),
    404: ("NOT_FOUND", "validation", False),
    409: ("CONFLICT", "business", False),
    429: ("RATE_LIMITED", "transient", True),
    502: ("UPSTREAM_UNAVAILABLE", "transient", True),
    503: ("UPSTREAM_UNAVAILABLE", "transient", True),
    504: ("UPSTREAM_UNAVAILABLE", "transient", True),
    500: ("INTERNAL_ERROR", "internal", False),
}
SECRET = "SELECT secret FROM internals"
BODIES = {
    "json without code": (b'{"detail": "' + SECRET.encode() + b'"}', "application/json"),
    "json with a foreign message": (b'{"message": "' + SECRET.encode() + b'", "error": "x"}', "application/json"),
    "html page": (b"<html><body><h1>Error</h1><p>" + SECRET.encode() + b"</p></body></html>", "text/html"),
}


@pytest.mark.parametrize("body_kind", sorted(BODIES))
@pytest.mark.parametrize("status", sorted(CONTRACT))
def test_a_body_without_code_is_mapped_by_status(api_key, settings, status, body_kind):
    settings.LEV_RETRY_TOTAL = 0  # one backend request per call: the mapping is what is tested here
    resilience.reset_breaker()
    body, content_type = BODIES[body_kind]
    with BackendStub(Reply(status, body, {"Content-Type": content_type, "Retry-After": "3"})) as backend:
        settings.LEV_API_BASE_URL = backend.url
        # The tool call as /mcp makes it (both its paths end in call_tool_sync), with the caller's key.
        request = RequestFactory().post("/mcp", HTTP_AUTHORIZATION=f"Bearer {api_key}")
        result = get_server().call_tool_sync("get_deal", {"deal_id": 1}, request)
        assert backend.count() == 1
    payload = json.loads(result.content[0].text)
    assert result.isError and result.structuredContent == payload
    code, category, retryable = CONTRACT[status]
    assert (payload["code"], payload["errorCategory"], payload["isRetryable"]) == (code, category, retryable), payload
    assert re.match(MESSAGE_PREFIX[code], payload["message"]), payload["message"]
    if code == "UPSTREAM_UNAVAILABLE":
        assert payload["message"] == UPSTREAM_MESSAGE
    if retryable:
        assert payload["retryAfterMs"] == 3000  # the backend's Retry-After
    else:
        assert "retryAfterMs" not in payload
    assert SECRET not in str(payload) and "<html" not in str(payload)
