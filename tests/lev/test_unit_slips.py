"""Numbers off by a unit get a "did you mean" (issue 39): a spread in percent (2.85 for 285 bps) and a date
written another common way ("Feb 26, 2027", "2/26/2027", "26 Feb 2027": YYYY-MM-DD wanted), on the REST
API and the MCP tools alike, in the VALIDATION_ERROR shape."""

from __future__ import annotations

import datetime as dt

import pytest

from lev.limits import SPREAD_BPS_MAX
from lev.vocabulary import bps_from_percent, dates_from_text
from tests.deals.placements.helpers import deal_with_financials, lenders, place
from tests.lenders.test_own_lenders import PROGRAM, own_lender
from tests.mcp_tools.test_tool_arguments import Caller

SPREAD = ("must be a whole number of basis points (a percent times 100); did you mean 285 "
          "(2.85 % over the index)?")
DATE = "must be a date in YYYY-MM-DD format; did you mean 2027-02-26?"


@pytest.mark.parametrize(("sent", "meant"), [
    (2.85, 285), ("2.85", 285), (0.5, 50), (1.375, None), (285.5, None), (285, None), (2.0, None),
    (31.5, None), (True, None), ("x", None), (float("nan"), None),
])
def test_a_spread_reads_as_a_percent_only_when_times_100_is_whole_basis_points(sent, meant):
    assert bps_from_percent(sent, maximum=SPREAD_BPS_MAX) == meant


@pytest.mark.parametrize(("sent", "meant"), [
    ("Feb 26, 2027", ["2027-02-26"]), ("February 26th, 2027", ["2027-02-26"]), ("26 Feb 2027", ["2027-02-26"]),
    ("2/26/2027", ["2027-02-26"]), ("Fri, Feb. 26, 2027", ["2027-02-26"]), ("2027/02/26", ["2027-02-26"]),
    ("26.02.2027", ["2027-02-26"]), ("3/4/2027", ["2027-03-04", "2027-04-03"]),
    ("Feb 30, 2027", []), ("2027-02-26", []), ("soon", []), ("13/13/2027", []),
])
def test_dates_written_in_common_forms_are_read(sent, meant):
    assert [d.isoformat() for d in dates_from_text(sent)] == meant


def _refusal(response, field: str) -> list[str]:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "VALIDATION_ERROR"
    return body["details"]["fields"][field]


@pytest.mark.django_db
def test_rest_and_mcp_say_which_basis_points_a_percent_spread_meant(api, api_key, account):
    tools = Caller(api_key)
    placement = place(deal_with_financials(account), lenders(1)[0])
    sheet = {"loan_amount": 10_000_000, "rate_type": "floating", "rate_index": "sofr", "spread_bps": 2.85}
    rest = api.post(f"/api/v1/placements/{placement.pk}/term-sheets/", sheet, format="json")
    assert _refusal(rest, "spread_bps") == [SPREAD]
    assert rest.json()["message"] == f"Validation failed: spread_bps {SPREAD}"
    is_error, payload = tools.call("add_term_sheet", {"placement_id": placement.pk, **sheet})
    assert is_error and payload["code"] == "VALIDATION_ERROR", payload
    assert payload["details"]["fields"]["spread_bps"] == [SPREAD]
    # A decimal that is no percent anyone writes is only told to be whole; 285 is taken.
    odd = api.post(f"/api/v1/placements/{placement.pk}/term-sheets/", {**sheet, "spread_bps": 285.5}, format="json")
    assert _refusal(odd, "spread_bps") == ["must be a whole number"]
    taken = tools.ok("add_term_sheet", {"placement_id": placement.pk, **sheet, "spread_bps": 285})
    assert taken["term_sheet"]["spread_bps"] == 285
    # A program's spreads, on both doors (in the program fields' sentence case).
    lender = own_lender(api)
    program = api.post(f"/api/v1/lenders/{lender['id']}/programs/", {**PROGRAM, "spread_min_bps": 2.5},
                       format="json")
    assert _refusal(program, "spread_min_bps") == [
        "Must be a whole number of basis points (a percent times 100); did you mean 250 (2.5 % over the index)?"]
    is_error, payload = tools.call("add_lender_program", {"lender_id": lender["id"], **PROGRAM,
                                                          "spread_max_bps": 3.25})
    assert is_error and "did you mean 325 (3.25 % over the index)?" in payload["details"]["fields"]["spread_max_bps"][0]


@pytest.mark.django_db
@pytest.mark.parametrize("sent", ["Feb 26, 2027", "2/26/2027", "26 Feb 2027"])
def test_rest_and_mcp_name_the_iso_date_a_written_date_meant(api, api_key, account, sent):
    tools = Caller(api_key)
    deal = deal_with_financials(account)
    rest = api.patch(f"/api/v1/deals/{deal.pk}/", {"estimated_close_date": sent}, format="json")
    assert _refusal(rest, "estimated_close_date") == [DATE]
    is_error, payload = tools.call("update_deal", {"deal_id": deal.pk, "estimated_close_date": sent})
    assert is_error and payload["code"] == "VALIDATION_ERROR", payload
    assert payload["details"]["fields"]["estimated_close_date"] == [DATE]
    # The ISO date it names is taken.
    assert api.patch(f"/api/v1/deals/{deal.pk}/", {"estimated_close_date": "2027-02-26"},
                     format="json").json()["estimated_close_date"] == dt.date(2027, 2, 26).isoformat()
    # Text that is no date keeps the plain message on both doors.
    assert _refusal(api.patch(f"/api/v1/deals/{deal.pk}/", {"estimated_close_date": "soon"}, format="json"),
                    "estimated_close_date") == ["must be a date in YYYY-MM-DD format"]
    is_error, payload = tools.call("update_deal", {"deal_id": deal.pk, "estimated_close_date": "soon"})
    assert "did you mean" not in payload["details"]["fields"]["estimated_close_date"][0]
