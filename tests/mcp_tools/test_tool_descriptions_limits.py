"""The numbers a tool's description tells the agent are the bounds the code uses (lev.limits and the
tools' own constants): a docstring cannot read a constant, so this test does, and a changed limit
fails here until the words follow."""

from __future__ import annotations

import pytest

from lev.limits import LIST_COUNT_MAX, LOAN_AMOUNT_MIN
from mcp_tools.server import get_server
from mcp_tools.tools.deals import PROPERTIES_SHOWN
from mcp_tools.tools.lenders import ABOUT_MAX, PROGRAMS_SHOWN
from mcp_tools.tools.placements import TERM_SHEETS_SHOWN


@pytest.mark.parametrize(("tool", "words"), [
    ("list_deals", f"total counts up to {LIST_COUNT_MAX:,}, then"),
    ("search_lender_directory", f"up to {LIST_COUNT_MAX:,}; past that it is {LIST_COUNT_MAX:,}"),
    ("get_deal", f"its first properties (up to {PROPERTIES_SHOWN},"),
    ("create_deal", f"at least {LOAN_AMOUNT_MIN}:"),
    ("update_deal", f"loan_amount: at least {LOAN_AMOUNT_MIN}."),
    ("get_lender", f"at most the first {PROGRAMS_SHOWN} programs"),
    ("get_lender", f"longer than {ABOUT_MAX} characters is cut"),
    ("get_placement", f"At most the first {TERM_SHEETS_SHOWN} term sheets are shown"),
])
def test_a_description_names_the_bound_the_code_uses(tool, words):
    tools = {t["name"]: t for t in get_server().tools_list_result["tools"]}
    assert words in " ".join(tools[tool]["description"].split())
