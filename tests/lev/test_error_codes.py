"""`ErrorCode` members are `str`s equal to their value: every serializer on the way out writes exactly
the bytes the plain strings did (JSON as the API renders it, the MCP result's text content and
structuredContent, the metrics label), so moving the codes into an enum changed nothing on the wire.
The error bodies themselves carry the plain string (`.value`): a body can also go through a renderer
that knows no enums (the schema view answers its errors in YAML)."""

from __future__ import annotations

import json
import logging

import pytest
from django.test import Client
from drf_spectacular.renderers import OpenApiYamlRenderer
from mcp.types import CallToolResult, TextContent
from rest_framework.renderers import JSONRenderer

from lev.errors import ErrorCode, NotFound
from mcp_tools import budget
from mcp_tools.errors import ToolFailure, from_application_error

CODES = list(ErrorCode)


@pytest.mark.parametrize("code", CODES, ids=[c.value for c in CODES])
def test_every_serializer_writes_the_plain_string(code):
    plain = str.__str__(code)  # the same characters as an exact `str`
    assert type(plain) is str and plain == code.value == code.name
    as_enum, as_str = {"code": code, "n": [code]}, {"code": plain, "n": [plain]}
    assert json.dumps(as_enum) == json.dumps(as_str) == f'{{"code": "{plain}", "n": ["{plain}"]}}'
    assert JSONRenderer().render(as_enum) == JSONRenderer().render(as_str)
    assert budget.dumps(as_enum) == budget.dumps(as_str)
    assert str(code) == f"{code}" == plain  # metrics labels, f-strings
    assert logging.LogRecord("x", logging.INFO, "", 0, "%s", (code,), None).getMessage() == plain  # log lines

    def result(payload):
        return CallToolResult(content=[TextContent(type="text", text=budget.dumps(payload))],
                              structuredContent=payload, isError=True)

    assert result(as_enum).model_dump_json(by_alias=True, exclude_none=True) == \
        result(as_str).model_dump_json(by_alias=True, exclude_none=True)
    dumped = result(as_enum).model_dump(by_alias=True, exclude_none=True, mode="json")
    assert type(dumped["structuredContent"]["code"]) is str


@pytest.mark.parametrize("code", CODES, ids=[c.value for c in CODES])
def test_error_bodies_carry_the_plain_string(code):
    error = NotFound("Deal", 5)
    error.code = code
    body = error.as_body()
    assert type(body["code"]) is str and body["code"] == code.value
    assert OpenApiYamlRenderer().render(body).startswith(f"code: {code.value}\n".encode())
    if code is not ErrorCode.METHOD_NOT_ALLOWED:  # the one API code the MCP contract maps by status
        payload = ToolFailure(code, "x").as_dict()
        assert type(payload["code"]) is str and payload["code"] == code.value


def test_a_code_from_the_api_body_becomes_the_member():
    """The MCP layer maps a body's plain `code` onto the enum (and an unknown one by status)."""
    failure = from_application_error(NotFound("Deal", 5))
    assert failure.code is ErrorCode.NOT_FOUND
    assert ToolFailure("RATE_LIMITED", "Rate limit exceeded: x").code is ErrorCode.RATE_LIMITED
    assert ToolFailure("NO_SUCH_CODE", "x").code is ErrorCode.INTERNAL_ERROR


@pytest.mark.django_db
def test_the_bytes_on_the_wire(api, api_key):
    """The REST error body and the /mcp response carry the code as the same plain JSON string."""
    response = api.get("/api/v1/deals/987654/")
    assert response.status_code == 404
    assert response.content == b'{"code":"NOT_FOUND","message":"Deal not found: 987654",' \
                               b'"details":{"resource":"deal","id":"987654"}}'

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "get_deal", "arguments": {"deal_id": 987654}}})
    sent = Client().post("/mcp", body, content_type="application/json",
                         headers={"Accept": "application/json, text/event-stream",
                                  "Authorization": f"Bearer {api_key}"})
    assert sent.status_code == 200
    result = json.loads(sent.content)["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["code"] == "NOT_FOUND"
    assert b'\\"code\\":\\"NOT_FOUND\\"' in sent.content  # in the text content (JSON in JSON)
    assert b'"code":"NOT_FOUND"' in sent.content  # in structuredContent
    assert b"ErrorCode" not in sent.content
