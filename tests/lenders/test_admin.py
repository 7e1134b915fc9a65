"""The lender admin through the Django test client on the real database: lender programs' enum lists
are checkboxes whose saved values keep the ranking's bit masks in step — a program edited in the admin
is then matched, or not, by the next search."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from deals.searches import services
from deals.searches.models import LenderMatch
from lenders.models import LenderProgram
from lev.enums import ASSET_TYPES, LENDER_TYPES, LOAN_TYPES, POSITIONS, US_STATES, mask_of
from tests.admin_helpers import admin_client, change_form_data, superuser
from tests.deals.searches.factories import LenderFactory, lender_with, make_deal, refresh

pytestmark = pytest.mark.django_db


@pytest.fixture
def client():
    return admin_client(superuser())



def test_program_enum_lists_are_checkboxes_not_json(client):
    program = lender_with(sponsor_states=["TX", "OK"])
    html = client.get(program_url(program)).content.decode()
    for name, universe in (("loan_types", LOAN_TYPES[:-1]), ("positions", POSITIONS), ("asset_types", ASSET_TYPES),
                           ("sponsor_states", US_STATES)):
        assert html.count(f'type="checkbox" name="{name}"') == len(universe), name
        assert f'<textarea name="{name}"' not in html
    assert re.search(r'value="TX"[^>]*checked', html) and not re.search(r'value="CA"[^>]*checked', html)
    assert '<div class="readonly">OK, TX</div>' in html


def test_a_program_edited_in_the_admin_is_matched_or_not_by_the_ranking(client, account, settings,
                                                                        django_capture_on_commit_callbacks):
    settings.LEV_SEARCH_REUSE_SECONDS = 0  # every search ranks afresh (the deal does not change)
    deal = make_deal(account)  # $10M permanent, one Texas multifamily property
    program = lender_with("Edited Lender")
    url = program_url(program)

    def edit(**fields) -> None:
        data = change_form_data(client.get(url))
        data.update(fields)
        response = client.post(url, data)
        assert response.status_code == 302, response.context["adminform"].form.errors

    def matched() -> bool:
        with django_capture_on_commit_callbacks(execute=True):  # the ranking job, run in-process
            search, _ = services.lender_search_start(deal=deal)
        assert refresh(search).status == "completed"
        return LenderMatch.objects.filter(search=refresh(search), lender=program.lender).exists()

    assert matched()  # nationwide, multifamily, permanent
    edit(sponsor_states=["OK", "LA"])
    program.refresh_from_db()
    assert program.sponsor_states == ["LA", "OK"]  # kept in the enums' order
    assert program.state_mask == mask_of(["LA", "OK"], US_STATES)
    assert not matched()
    edit(sponsor_states=["TX", "OK", "LA"])
    assert matched()
    edit(asset_types=["office", "retail"])
    assert refresh(program).asset_type_mask == mask_of(["office", "retail"], ASSET_TYPES)
    assert not matched()
    edit(asset_types=["multifamily"], loan_types=["heavy_bridge"])
    assert not matched()
    edit(loan_types=["heavy_bridge", "permanent"], sponsor_states=[])
    program.refresh_from_db()
    assert program.loan_type_mask == mask_of(["heavy_bridge", "permanent"], LOAN_TYPES) and program.state_mask == 0
    assert matched()


def test_a_program_form_refuses_what_the_enums_or_the_numbers_do_not_allow(client):
    program = lender_with()
    data = change_form_data(client.get(program_url(program)))
    data.update(loan_types=["bridge"], sponsor_states=["Texas"], min_loan_amount="60,000,000",
                max_loan_amount="50,000,000", max_ltv="120", min_dscr="abc")
    response = client.post(program_url(program), data)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert errors["loan_types"] == ["Select a valid choice. bridge is not one of the available choices."]
    assert errors["sponsor_states"] == ["Select a valid choice. Texas is not one of the available choices."]
    assert errors["max_ltv"] == ["Must be at most 100."]  # the model rule's words (lenders.program_terms)
    assert errors["min_dscr"] == ["Enter a number, e.g. 1.25."]
    data.update(loan_types=["permanent"], sponsor_states=[], max_ltv="75", min_dscr="1.25")
    errors = client.post(program_url(program), data).context["adminform"].form.errors
    assert errors == {"max_loan_amount": ["Must be at least the min loan."]}
    data.update(loan_types=[], max_loan_amount="70,000,000")
    errors = client.post(program_url(program), data).context["adminform"].form.errors
    assert errors == {"loan_types": ["An active program offers at least one loan type."]}
    assert refresh(program).min_loan_amount == Decimal("1000000")


def test_the_program_list_shows_coverage_money_and_ratios(client):
    lender_with("Regional", sponsor_states=["TX", "OK", "LA"])
    lender_with("Everywhere")
    html = client.get(reverse("admin:lenders_lenderprogram_changelist")).content.decode()
    assert '<td class="field-coverage">LA, OK, TX</td>' in html
    assert '<td class="field-coverage">Nationwide</td>' in html
    assert "$1M\N{EN DASH}$50M" in html and "<td class=\"field-ltv\">75%</td>" in html
    assert '<td class="field-dscr">1.20x</td>' in html


# --- lenders ------------------------------------------------------------------------------------------------
def test_lender_types_are_checkboxes_and_the_filter_finds_an_edited_lender(client):
    lender = LenderFactory(name="Switching Lender", lender_types=["bank"])
    url = reverse("admin:lenders_lender_change", args=[lender.pk])
    page = client.get(url)
    assert page.content.decode().count('type="checkbox" name="lender_types"') == len(LENDER_TYPES)
    data = change_form_data(page)
    data["lender_types"] = ["cmbs", "bank"]
    assert client.post(url, data).status_code == 302
    lender.refresh_from_db()
    assert lender.lender_types == ["bank", "cmbs"]
    assert lender.lender_type_mask == mask_of(["bank", "cmbs"], LENDER_TYPES)
    listed = client.get(reverse("admin:lenders_lender_changelist") + "?lender_type=cmbs").context["cl"].result_list
    assert [item.name for item in listed] == ["Switching Lender"]
    html = client.get(reverse("admin:lenders_lender_changelist")).content.decode()
    assert '<td class="field-types">Bank, CMBS</td>' in html


# --- lender programs: enum lists as checkboxes, masks in step -----------------------------------------
def program_url(program: LenderProgram) -> str:
    return reverse("admin:lenders_lenderprogram_change", args=[program.pk])
