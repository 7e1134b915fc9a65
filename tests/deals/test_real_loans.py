"""Finance that holds for real loans (issue 22), through REST, MCP and the admin alike: interest-only
months on the requested loan, with the DSCR lenders underwrite beside both figures; debt yield next
to LTV and DSCR; and percents sent as fractions refused with the value probably meant."""

from __future__ import annotations

from decimal import Decimal

import pytest

from deals.models import DealFinancials
from lev import limits
from tests.factories import DealFactory, DealFinancialsFactory
from tests.mcp_tools.test_tool_arguments import Caller

pytestmark = pytest.mark.django_db

# $10M at 7.25 % over 25 years, $900,000 of NOI, valued at $16M: $867,368.24 a year amortizing
# (DSCR 1.04), $725,000 interest only (DSCR 1.24), debt yield 9 %, LTV 62.5 %.
FIGURES = {"estimated_value": 16_000_000, "in_place_noi": 900_000, "interest_rate": 7.25, "amortization_years": 25}


@pytest.fixture
def tools(api_key) -> Caller:
    return Caller(api_key)


def financials_path(deal) -> str:
    return f"/api/v1/deals/{deal.pk}/financials/"


# --- interest-only months and the DSCR lenders underwrite --------------------------------------------
@pytest.mark.parametrize(("loan_type", "basis", "dscr"), [
    ("light_bridge", "interest_only", 1.24), ("heavy_bridge", "interest_only", 1.24),
    ("construction", "interest_only", 1.24), ("permanent", "amortizing", 1.04), ("tbd", "amortizing", 1.04),
])
def test_rest_shows_both_coverage_figures_and_underwrites_by_loan_type(api, account, loan_type, basis, dscr):
    deal = DealFactory(account=account, loan_type=loan_type)
    body = api.patch(financials_path(deal), {**FIGURES, "interest_only_months": 24}, format="json")
    assert body.status_code == 200, body.content
    got = body.json()
    assert got["interest_only_months"] == 24
    assert (got["dscr"], got["dscr_basis"], got["dscr_interest_only"], got["dscr_amortizing"]) == (
        dscr, basis, 1.24, 1.04)
    assert (got["ltv"], got["debt_yield"]) == (62.5, 9.0)
    # The deal reads the same figures.
    detail = api.get(f"/api/v1/deals/{deal.pk}/", {"include": "financials"}).json()["financials"]
    assert {k: detail[k] for k in got if k != "updated_at"} == {k: got[k] for k in got if k != "updated_at"}


def test_without_an_interest_only_period_the_dscr_is_the_amortizing_one(api, account):
    deal = DealFactory(account=account, loan_type="light_bridge")
    got = api.patch(financials_path(deal), FIGURES, format="json").json()
    assert got["interest_only_months"] == 0
    assert (got["dscr"], got["dscr_basis"], got["dscr_interest_only"], got["dscr_amortizing"]) == (
        1.04, "amortizing", None, 1.04)
    # Null puts back "no interest-only period"; the bound is the term's.
    assert api.patch(financials_path(deal), {"interest_only_months": 12}, format="json").json()["dscr"] == 1.24
    assert api.patch(financials_path(deal), {"interest_only_months": None}, format="json").json()[
        "interest_only_months"] == 0
    refused = api.patch(financials_path(deal), {"interest_only_months": limits.INTEREST_ONLY_MONTHS_MAX + 1},
                        format="json")
    assert refused.status_code == 400 and refused.json()["message"] == (
        f"Validation failed: interest_only_months must be at most {limits.INTEREST_ONLY_MONTHS_MAX}")


def test_a_deal_without_financials_reads_every_new_figure_as_null(api, account):
    deal = DealFactory(account=account)
    got = api.get(financials_path(deal)).json()
    names = ("debt_yield", "dscr", "dscr_basis", "dscr_interest_only", "dscr_amortizing")
    assert {k: got[k] for k in names} == dict.fromkeys(names)
    assert got["interest_only_months"] == 0


def test_the_openapi_schema_documents_the_new_fields(api):
    schema = api.get("/api/v1/schema/", {"format": "json"}).json()["components"]["schemas"]
    out, into = schema["DealFinancials"]["properties"], schema["PatchedFinancialsInput"]["properties"]
    assert {"interest_only_months", "debt_yield", "dscr", "dscr_basis", "dscr_interest_only",
            "dscr_amortizing"} <= set(out)
    assert into["interest_only_months"]["maximum"] == limits.INTEREST_ONLY_MONTHS_MAX
    # The fraction rule is in the schema, so a schema-valid rate is never refused.
    assert into["interest_rate"]["not"] == {"type": "number", "minimum": 0, "exclusiveMinimum": True,
                                            "maximum": 1.0, "exclusiveMaximum": True}
    comparison = schema["QuoteComparison"]["properties"]
    assert {"debt_yield", "dscr_basis", "dscr_interest_only", "dscr_amortizing"} <= set(comparison)


def test_mcp_sets_interest_only_months_and_get_deal_shows_the_figures(tools, account):
    deal = DealFactory(account=account, loan_type="light_bridge")
    got = tools.ok("update_deal_financials", {"deal_id": deal.pk, **FIGURES, "interest_only_months": 24})["financials"]
    assert (got["interest_only_months"], got["dscr"], got["dscr_basis"], got["dscr_amortizing"],
            got["debt_yield"]) == (24, 1.24, "interest_only", 1.04, 9.0)
    shown = tools.ok("get_deal", {"deal_id": deal.pk, "include": ["financials"]})["deal"]["financials"]
    assert (shown["dscr"], shown["dscr_interest_only"], shown["debt_yield"]) == (1.24, 1.24, 9.0)
    assert tools.ok("get_deal_financials", {"deal_id": deal.pk})["financials"]["dscr_basis"] == "interest_only"
    tools.invalid("update_deal_financials", {"deal_id": deal.pk, "interest_only_months": -1}, "interest_only_months")
    assert DealFinancials.objects.get(deal=deal).interest_only_months == 24


# --- percents sent as fractions ------------------------------------------------------------------------
RATE_SLIP = "must be a percent, not a fraction: 0, or 1 to 30; did you mean 7.25?"


def rest_message(response) -> str:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "VALIDATION_ERROR"
    return body["message"]


def test_a_fractional_interest_rate_is_refused_with_the_percent_meant_on_both_doors(api, tools, account):
    deal = DealFactory(account=account)
    DealFinancialsFactory(deal=deal, interest_rate=Decimal("6.5"))
    expected = f"Validation failed: interest_rate {RATE_SLIP}"
    assert rest_message(api.patch(financials_path(deal), {"interest_rate": 0.0725}, format="json")) == expected
    payload = tools.invalid("update_deal_financials", {"deal_id": deal.pk, "interest_rate": 0.0725}, "interest_rate")
    assert payload["message"] == expected
    assert DealFinancials.objects.get(deal=deal).interest_rate == Decimal("6.5")  # nothing stored
    # The floor and 0 are taken; a value whose percent is no rate either gets no guess.
    assert api.patch(financials_path(deal), {"interest_rate": 1}, format="json").json()["interest_rate"] == 1.0
    assert tools.ok("update_deal_financials", {"deal_id": deal.pk, "interest_rate": 0})["financials"][
        "interest_rate"] == 0.0
    assert tools.ok("update_deal_financials", {"deal_id": deal.pk, "interest_rate": 7.25})["financials"][
        "interest_rate"] == 7.25
    for sent in (0.005, 1e-249):
        message = "Validation failed: interest_rate must be a percent, not a fraction: 0, or 1 to 30"
        assert rest_message(api.patch(financials_path(deal), {"interest_rate": sent}, format="json")) == message
        assert tools.invalid("update_deal_financials", {"deal_id": deal.pk, "interest_rate": sent},
                             "interest_rate")["message"] == message


@pytest.mark.parametrize(("field", "sent", "meant"), [
    ("fixed_rate", 0.06125, "6.125"), ("max_ltv", 0.75, "75"), ("origination_fee_percent", 0.01, "1"),
    ("exit_fee_percent", 0.005, "0.5"),
])
def test_term_sheet_percents_sent_as_fractions_are_refused_on_both_doors(api, tools, account, field, sent, meant):
    from tests.deals.placements.helpers import deal_with_financials, lenders, place

    placement = place(deal_with_financials(account), lenders(1)[0])
    body = {"loan_amount": 10_000_000, "rate_type": "fixed", "fixed_rate": 6.25, field: sent}
    rest = rest_message(api.post(f"/api/v1/placements/{placement.pk}/term-sheets/", body, format="json"))
    assert rest.startswith(f"Validation failed: {field} must be a percent, not a fraction")
    assert rest.endswith(f"; did you mean {meant}?")
    payload = tools.invalid("add_term_sheet", {"placement_id": placement.pk, **body}, field)
    assert payload["message"] == rest
    assert not placement.term_sheets.exists()
    # A real fee of a quarter point is not a fraction.
    if field.endswith("fee_percent"):
        made = tools.ok("add_term_sheet", {"placement_id": placement.pk, **body, field: 0.25})["term_sheet"]
        assert made[field] == 0.25


def test_the_admin_refuses_a_fractional_interest_rate_with_the_same_words(account):
    from deals.admin.forms import DealFinancialsForm

    form = DealFinancialsForm(data={"interest_rate": "0.0725", "amortization_years": "30"})
    assert not form.is_valid()
    assert form.errors["interest_rate"] == ["Must be a percent, not a fraction: 0, or 1 to 30; did you mean 7.25?"]
    form = DealFinancialsForm(data={"interest_rate": "7.25 %", "amortization_years": "30", "interest_only_months": ""})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["interest_only_months"] == 0


# --- the quote comparison -------------------------------------------------------------------------------
def test_the_comparison_shows_debt_yield_and_both_coverages_on_rest_and_mcp(api, tools, account):
    from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote

    deal = deal_with_financials(account, loan_type="light_bridge")  # $1M NOI
    quote(place(deal, lenders(1)[0]), fixed_rate=Decimal("7.25"), amortization_months=300, interest_only_months=24,
          term_months=36, min_dscr=Decimal("1.20"))
    rest = api.get(f"/api/v1/deals/{deal.pk}/term-sheets/comparison/").json()["quotes"][0]
    mcp = tools.ok("compare_term_sheets", {"deal_id": deal.pk})["quotes"][0]
    for shown in (rest, mcp):
        assert (shown["dscr"], shown["dscr_basis"], shown["dscr_interest_only"], shown["dscr_amortizing"],
                shown["debt_yield"], shown["ltv"]) == (1.38, "interest_only", 1.38, 1.15, 10.0, 62.5)
        assert not any(note.startswith("DSCR") for note in shown["notes"])
