"""get_market_rates through the real /mcp endpoint (official client, live server): each index's rate as
of a date, one index, an index's dated history, bad arguments in the error contract, its annotations."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from lenders.rates.services import market_rate_set
from lev import limits
from tests.mcp_helpers import value_schema

pytestmark = pytest.mark.django_db(transaction=True)

DAY = dt.date(2026, 10, 1)


@pytest.fixture
def rates():
    for n in range(0, 120, 1):
        market_rate_set(index="sofr", on=DAY + dt.timedelta(days=n), rate=Decimal("4.2") + Decimal(n % 10) / 100)
    market_rate_set(index="prime", on=DAY, rate=Decimal("7.5"))


def test_the_tool_is_a_read_only_lenders_read(mcp):
    tool = {t.name: t for t in mcp.list_tools()}["get_market_rates"]
    assert tool.annotations.readOnlyHint is True and tool.inputSchema["additionalProperties"] is False
    props = tool.inputSchema["properties"]
    assert value_schema(props["history_days"])["maximum"] == limits.MARKET_RATE_HISTORY_DAYS_MAX
    assert "term_sofr_3m" in str(props["index"])


def test_rates_as_of_a_date_and_one_index(mcp, rates):
    body = mcp.ok("get_market_rates", {"as_of": "2026-10-03"})
    assert body["as_of"] == "2026-10-03" and len(body["rates"]) == 7
    sofr = next(r for r in body["rates"] if r["index"] == "sofr")
    assert sofr == {"index": "sofr", "name": "SOFR", "rate": 4.22, "date": "2026-10-03", "days_old": 0}
    before = mcp.ok("get_market_rates", {"as_of": "2026-09-30", "index": "Prime"})
    assert before["rates"] == [{"index": "prime", "name": "Prime", "rate": None, "date": None, "days_old": None}]


def test_an_index_history(mcp, rates):
    body = mcp.ok("get_market_rates", {"index": "sofr", "as_of": "2026-10-10", "history_days": 5})
    assert (body["since"], body["until"], body["total"], body["has_more"]) == ("2026-10-06", "2026-10-10", 5, False)
    assert body["history"][0] == {"date": "2026-10-10", "rate": 4.29}
    longest = mcp.ok("get_market_rates", {"index": "sofr", "as_of": "2027-01-28",
                                          "history_days": limits.MARKET_RATE_HISTORY_DAYS_MAX})
    assert len(longest["history"]) == longest["total"] == limits.MARKET_RATE_HISTORY_DAYS_MAX
    assert longest["has_more"] is False
    edge = mcp.ok("get_market_rates", {"index": "sofr", "as_of": "0001-01-02", "history_days": 30})
    assert (edge["since"], edge["history"]) == ("0001-01-01", [])


@pytest.mark.parametrize(("arguments", "words"), [
    ({"history_days": 5}, "index is required with history_days"),
    ({"index": "libor"}, "index"),
    ({"as_of": "2026-13-01"}, "as_of"),
    ({"index": "sofr", "history_days": limits.MARKET_RATE_HISTORY_DAYS_MAX + 1}, "history_days"),
])
def test_bad_arguments_are_validation_errors(mcp, arguments, words):
    error = mcp.error("get_market_rates", arguments)
    assert error["code"] == "VALIDATION_ERROR" and words in error["message"], error
