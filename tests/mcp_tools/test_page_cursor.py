"""The tools' page cursor has one codec (mcp_tools.tools.common). Cursors handed out before it was
one still decode as they did: the plain page cursor every list issued, and the one with a skip that
lists cut to the byte budget issue; a list that never cuts a page still refuses a skip."""

from __future__ import annotations

import pytest

from mcp_tools.errors import ToolFailure
from mcp_tools.tools.common import decode_cursor, decode_page_cursor, encode_page_cursor

# Written out: the text agents hold, as the tools wrote it before (base64url of compact JSON, unpadded).
PLAIN = "eyJwIjoyLCJsIjoyMH0"  # {"p":2,"l":20}
WITH_SKIP = "eyJwIjozLCJsIjoxMCwicyI6NH0"  # {"p":3,"l":10,"s":4}
EXPLICIT_ZERO_SKIP = "eyJwIjoyLCJsIjoyMCwicyI6MH0"  # {"p":2,"l":20,"s":0}, never issued


def test_the_codec_writes_the_text_it_always_wrote():
    assert encode_page_cursor(2, 20) == PLAIN
    assert encode_page_cursor(2, 20, 0) == PLAIN  # no "s" for skip 0
    assert encode_page_cursor(3, 10, 4) == WITH_SKIP


def test_old_cursors_decode_as_before():
    assert decode_page_cursor(PLAIN, 50) == (2, 20, 0)
    assert decode_page_cursor(WITH_SKIP, 50) == (3, 10, 4)
    assert decode_cursor(PLAIN, 50) == (2, 20)
    assert decode_cursor(None, 50) == (1, 50) and decode_page_cursor(None, 50) == (1, 50, 0)


@pytest.mark.parametrize("cursor", [WITH_SKIP, EXPLICIT_ZERO_SKIP])
def test_a_list_that_never_cuts_a_page_refuses_a_skip(cursor):
    with pytest.raises(ToolFailure) as refused:
        decode_cursor(cursor, 50)
    assert refused.value.code == "VALIDATION_ERROR"
    assert refused.value.details["fields"] == {
        "cursor": ["is not a cursor this server issued; pass next_cursor back unchanged"]}


@pytest.mark.parametrize("decode", [decode_cursor, decode_page_cursor])
@pytest.mark.parametrize("cursor", ["", "!!", "eyJwIjoxZTk5OSwibCI6MjB9", "eyJwIjowLCJsIjoyMH0",
                                    "eyJwIjozLCJsIjoxMCwicyI6MTB9"])
def test_what_no_server_issued_is_refused(decode, cursor):
    # empty, bad base64, p=1e999, p=0, skip not below the page size
    with pytest.raises(ToolFailure) as refused:
        decode(cursor, 50)
    assert refused.value.code == "VALIDATION_ERROR" and "cursor" in refused.value.details["fields"]
