"""A lender program's terms (issue 37): nonsense refused with the same words by the model and the admin's
program forms (lenders.program_terms), shown by REST and the MCP tools, and read in words on the
lender's page."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from lenders.models import LenderProgram
from lenders.program_terms import TERM_FIELDS
from tests.admin_helpers import admin_client, change_form_data, superuser
from tests.deals.searches.factories import lender_with

pytestmark = pytest.mark.django_db

FRACTION_LTV = "Must be a percent, not a fraction: 0, or 1 to 100; did you mean 75?"
FRACTION_RATE = "Must be a percent, not a fraction: 0, or 1 to 30; did you mean 6.1?"
FRACTION_DEBT_YIELD = "Must be a percent, not a fraction: 0, or 1 to 50; did you mean 8?"

# (what is sent, the field refused, the message): the same for the model and the admin's form.
REFUSALS = [
    ({"min_dscr": "0"}, "min_dscr", "Must be greater than 0."),
    ({"min_dscr": "-1.2"}, "min_dscr", "Must be greater than 0."),
    ({"max_ltv": "250"}, "max_ltv", "Must be at most 100."),
    ({"max_ltv": "0.75"}, "max_ltv", FRACTION_LTV),
    ({"fixed_rate_min": "0.061"}, "fixed_rate_min", FRACTION_RATE),
    ({"min_debt_yield": "0.08"}, "min_debt_yield", FRACTION_DEBT_YIELD),
    ({"rate_index": "sofr", "spread_min_bps": "2.85"}, "spread_min_bps",
     "Must be a whole number of basis points (a percent times 100); did you mean 285 (2.85 % over the index)?"),
    ({"rate_index": "sofr", "spread_min_bps": "325", "spread_max_bps": "250"}, "spread_max_bps",
     "Must be at least the min spread."),
    ({"fixed_rate_min": "6.6", "fixed_rate_max": "6.1"}, "fixed_rate_max", "Must be at least the min fixed rate."),
    ({"term_months_min": "120", "term_months_max": "60"}, "term_months_max", "Must be at least the min term."),
    ({"spread_min_bps": "250"}, "rate_index", "This is required with a spread: the index the spread is over."),
    ({"rate_type": "fixed", "rate_index": "sofr", "spread_min_bps": "250"}, "spread_min_bps",
     "Must be left out for a fixed rate."),
    ({"rate_type": "floating", "rate_index": "sofr", "fixed_rate_min": "6.1"}, "fixed_rate_min",
     "Must be left out for a floating rate."),
    ({"amortization_years": "60"}, "amortization_years", "Must be at most 50."),
]


def model_values(sent: dict[str, str]) -> dict:
    """What code writing a program directly would set: numbers, not text (a spread of 2.85 as a float)."""
    return {name: (value if name.startswith("rate_") else float(value) if name.endswith("_bps") and "." in value
                   else Decimal(value)) for name, value in sent.items()}


@pytest.mark.parametrize(("sent", "field", "message"), REFUSALS)
def test_the_model_refuses_nonsense_terms_with_the_rules_words(sent, field, message):
    program = lender_with()
    for name, value in model_values(sent).items():
        setattr(program, name, value)
    with pytest.raises(ValidationError) as refused:
        program.full_clean()
    assert refused.value.message_dict[field] == [message]


@pytest.mark.parametrize(("sent", "field", "message"), REFUSALS)
def test_the_admins_program_form_refuses_them_with_the_same_words(sent, field, message):
    client = admin_client(superuser())
    program = lender_with()
    url = reverse("admin:lenders_lenderprogram_change", args=[program.pk])
    data = {**change_form_data(client.get(url)), **sent}
    response = client.post(url, data)
    assert response.status_code == 200
    assert response.context["adminform"].form.errors[field] == [message]
    program.refresh_from_db()
    assert program.spread_min_bps is None and program.fixed_rate_min is None and program.max_ltv == Decimal("75")


def test_the_lender_pages_program_inline_refuses_them_too():
    client = admin_client(superuser())
    program = lender_with()
    url = reverse("admin:lenders_lender_change", args=[program.lender_id])
    data = change_form_data(client.get(url))
    data.update({"programs-0-rate_index": "sofr", "programs-0-spread_min_bps": "2.85",
                 "programs-0-min_debt_yield": "0.08"})
    response = client.post(url, data)
    assert response.status_code == 200
    errors = response.context["inline_admin_formsets"][0].formset.errors[0]
    assert errors == {"spread_min_bps": [
        "Must be a whole number of basis points (a percent times 100); did you mean 285 (2.85 % over the index)?"],
        "min_debt_yield": [FRACTION_DEBT_YIELD]}


def test_sensible_terms_are_saved_and_read_in_words_on_the_lenders_page():
    client = admin_client(superuser())
    program = lender_with(title="Bridge Loans")
    url = reverse("admin:lenders_lenderprogram_change", args=[program.pk])
    data = change_form_data(client.get(url))
    data.update(rate_type="floating", rate_index="sofr", spread_min_bps="250", spread_max_bps="325",
                term_months_max="120", amortization_years="30", interest_only_months="24", min_debt_yield="8")
    assert client.post(url, data).status_code == 302
    program.refresh_from_db()
    assert (program.spread_min_bps, program.spread_max_bps, program.min_debt_yield) == (250, 325, Decimal("8.00"))
    fixed = lender_with(title="Fixed Loans", rate_type="fixed", fixed_rate_min=Decimal("6.1"),
                        fixed_rate_max=Decimal("6.6"))
    fixed.lender = program.lender
    fixed.save()
    html = client.get(reverse("admin:lenders_lender_change", args=[program.lender_id])).content.decode()
    assert "SOFR + 2.50\N{EN DASH}3.25%" in html
    assert "10-yr term, 30-yr amortization, 24 mo IO, min DY 8%" in html
    assert "6.10\N{EN DASH}6.60% fixed" in html


# --- REST and MCP -------------------------------------------------------------------------------------
def priced_program() -> LenderProgram:
    return lender_with(rate_type="floating", rate_index="sofr", spread_min_bps=250, spread_max_bps=325,
                       term_months_min=36, term_months_max=60, interest_only_months=24, min_debt_yield=Decimal("8"))


def test_rest_shows_every_term_null_when_not_stated(api):
    program = priced_program()
    bare = lender_with()
    shown = api.get(f"/api/v1/lenders/{program.lender_id}/").json()["programs"][0]
    assert {k: shown[k] for k in TERM_FIELDS} == {
        "rate_type": "floating", "rate_index": "sofr", "spread_min_bps": 250, "spread_max_bps": 325,
        "fixed_rate_min": None, "fixed_rate_max": None, "term_months_min": 36, "term_months_max": 60,
        "amortization_years": None, "interest_only_months": 24, "min_debt_yield": 8.0}
    listed = api.get(f"/api/v1/lenders/{bare.lender_id}/programs/").json()["results"][0]
    assert list(listed) == ["id", "title", "status", "loan_types", "recourse_types", "min_loan_amount",
                            "max_loan_amount", "capital_source_type", "positions", "sponsor_states", "asset_types",
                            "max_ltv", "min_dscr", *TERM_FIELDS, "own"]
    assert all(listed[k] in (None, "") for k in TERM_FIELDS)


def mcp_call(api_key: str, name: str, arguments: dict) -> dict:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}})
    response = Client().post("/mcp", body, content_type="application/json", headers={
        "Accept": "application/json, text/event-stream", "Authorization": f"Bearer {api_key}"})
    result = response.json()["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]


def test_the_mcp_tools_show_the_stated_terms_and_leave_out_the_rest(api_key):
    program = priced_program()
    bare = LenderProgram.objects.create(lender=program.lender, title="Plain", loan_types=["permanent"])
    lender = mcp_call(api_key, "get_lender", {"lender_id": program.lender_id})["lender"]
    priced, plain = lender["programs"]
    assert {k: priced[k] for k in TERM_FIELDS if k in priced} == {
        "rate_type": "floating", "rate_index": "sofr", "spread_min_bps": 250, "spread_max_bps": 325,
        "term_months_min": 36, "term_months_max": 60, "interest_only_months": 24, "min_debt_yield": 8.0}
    assert plain["id"] == bare.id and not set(TERM_FIELDS) & set(plain)
    assert plain["max_ltv"] is None  # the program's other fields keep their shape
    listed = mcp_call(api_key, "list_lender_programs", {"lender_id": program.lender_id})["programs"]
    assert listed == [priced, plain]
