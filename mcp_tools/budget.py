"""The byte budget of a tool result (`LEV_MCP_MAX_RESPONSE_BYTES`), counted as the client receives it.

What is counted: the `result` member of the JSON-RPC response to `tools/call`, in UTF-8 bytes, exactly
as the server writes it (`mcp_tools.protocol_2025_11_25.answer`):

    {"content":[{"type":"text","text":<the payload as a JSON string>}],"structuredContent":<the payload>,
     "isError":<true|false>}

The payload travels twice (the protocol asks for a text block beside structured content, and clients
read one or the other), and its text copy is escaped once more inside the response, so a payload of
N bytes costs a little over 2N. Not counted: the JSON-RPC envelope around `result`
(`{"jsonrpc":"2.0","id":…,"result":…}`: 30 bytes plus the id the client chose) and the HTTP headers.

Responses are written as UTF-8 rather than with `\\uXXXX` escapes: a non-ASCII character costs 2-4
bytes instead of 6 (7 inside the text copy). A payload holding a string that is not valid Unicode (a
lone surrogate, which no tool returns) falls back to escapes, so writing a response never fails; the
JSON-RPC id, which the client chose, is always written escaped.

Tools fit their own answers under the budget (`mcp_tools.tools.common.fit_budget`: trim detail, then
shorten the page with a cursor to the rest, and say so); `mcp_tools.results` checks every result
against it once more before it is sent.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings

_PREFIX = len('{"content":[{"type":"text","text":')
_MIDDLE = len('}],"structuredContent":')
_SUFFIX = {False: len(',"isError":false}'), True: len(',"isError":true}')}


def limit() -> int:
    """The budget in bytes (read when used: tests and operators change it)."""
    return settings.LEV_MCP_MAX_RESPONSE_BYTES


# The encoders json.dumps would build on every call for these arguments, built once (they hold no state
# between calls).
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str)
_COMPACT_ESCAPED = json.JSONEncoder(separators=(",", ":"), default=str)
_TEXT = json.JSONEncoder(ensure_ascii=False)


def dumps(value: Any) -> str:
    """Compact JSON as the server writes it: UTF-8 text, escapes only for what UTF-8 cannot carry."""
    text = _COMPACT.encode(value)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: \\ud800 is valid JSON, raw it is not valid UTF-8
        return _COMPACT_ESCAPED.encode(value)
    return text


def result_size(text: str, *, is_error: bool = False) -> int:
    """Bytes of the `result` of a tools/call response whose payload is `text` (from `dumps`)."""
    payload_bytes = len(text) if text.isascii() else len(text.encode("utf-8"))
    # The text copy is `text` as a JSON string: quoted, with " and \ escaped. Nothing else needs an
    # escape: JSON text holds no raw control characters (json.dumps wrote them as \n, \u0000, ...).
    quoted_bytes = payload_bytes + 2 + text.count('"') + text.count("\\")
    return _PREFIX + quoted_bytes + _MIDDLE + payload_bytes + _SUFFIX[is_error]


def result_json(text: str, *, is_error: bool = False) -> str:
    """The `result` of a tools/call response whose payload is `text` (from `dumps`), written from that
    text: the payload is not serialized again (`result_size` counts exactly these bytes)."""
    quoted = _TEXT.encode(text)
    return (f'{{"content":[{{"type":"text","text":{quoted}}}],"structuredContent":{text},'
            f'"isError":{"true" if is_error else "false"}}}')


def payload_size(payload: dict[str, Any], *, is_error: bool = False) -> int:
    """Bytes a tool's payload costs on the wire (text content and structuredContent together)."""
    return result_size(dumps(payload), is_error=is_error)


def fits(payload: dict[str, Any], *, is_error: bool = False) -> bool:
    return payload_size(payload, is_error=is_error) <= limit()
