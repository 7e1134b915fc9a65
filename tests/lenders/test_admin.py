"""The lender admin through the Django test client on the real database: a search's page shows its
ranked lenders a page at a time (never loading a large result), and lender programs' enum lists are
checkboxes whose saved values keep the ranking's bit masks in step — a program edited in the admin
is then matched, or not, by the next search."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from deals.models import Deal
from lenders import services
from lenders.models import Lender, LenderMatch, LenderProgram, LenderSearch
from lev import limits
from lev.enums import ASSET_TYPES, LENDER_TYPES, LOAN_TYPES, POSITIONS, US_STATES, mask_of
from tests.admin_helpers import admin_client, change_form_data, superuser
from tests.lenders.factories import LenderFactory, lender_with, make_deal, refresh

pytestmark = pytest.mark.django_db

PER_PAGE = limits.ADMIN_MATCHES_PER_PAGE


@pytest.fixture
def client():
    return admin_client(superuser())


def completed_search(deal: Deal, matches: int) -> LenderSearch:
    """A finished search with `matches` ranked lenders, written as the ranking writes them."""
    lenders = Lender.objects.bulk_create(LenderFactory.build(name=f"Ranked {n:05d}") for n in range(matches))
    search = LenderSearch.objects.create(account_id=deal.account_id, deal=deal, deal_version=deal.version,
                                         status="completed", progress=100, total_matches=matches,
                                         ranked_matches=matches)
    LenderMatch.objects.bulk_create(
        LenderMatch(search=search, rank=n + 1, lender=lender, score=max(1, 99 - n // 40),
                    match_insights=[f"Insight of rank {n + 1}"],
                    programs=[{"id": n, "title": f"Program of rank {n + 1}", "loan_types": ["permanent"],
                               "min_loan_amount": 1_000_000, "max_loan_amount": 50_000_000, "max_ltv": 75.0,
                               "min_dscr": 1.25}],
                    program_count=2)
        for n, lender in enumerate(lenders)
    )
    return search


def search_url(search: LenderSearch, query: str = "") -> str:
    return reverse("admin:lenders_lendersearch_change", args=[search.pk]) + query


def ranks_on(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<td class="lev-num lev-rank">(\d+)</td>', html)]


# --- a search's page --------------------------------------------------------------------------------------
def test_a_search_page_shows_one_page_of_ranked_lenders_at_a_time(client, deal):
    search = completed_search(deal, 3000)
    first = client.get(search_url(search)).content.decode()
    assert ranks_on(first) == list(range(1, PER_PAGE + 1))
    assert f"Ranks 1\u2013{PER_PAGE} of 3000 · page 1 of 60" in first
    assert "Insight of rank 1</li>" in first and "Program of rank 1</strong>" in first
    assert "Permanent · $1M-$50M · LTV ≤ 75% · DSCR ≥ 1.25x" in first
    assert "+1 more matching program" in first
    assert first.count('class="lev-chart-bar"') == limits.ADMIN_TOP_MATCHES  # the chart of the top matches, page 1 only
    assert first.count('<svg class="lev-score"') == PER_PAGE  # a score bar per row (an SVG, no inline style)

    second = client.get(search_url(search, "?page=2")).content.decode()
    assert ranks_on(second) == list(range(PER_PAGE + 1, 2 * PER_PAGE + 1)) and "lev-chart-bar" not in second
    last = client.get(search_url(search, "?page=60")).content.decode()
    assert ranks_on(last) == list(range(2951, 3001))
    # A page number that is not one reads as the first page; past the end, as the last.
    for query, expected in (("?page=abc", 1), ("?page=0", 1), ("?page=-3", 1), ("?page=%EF%BC%92", 1),
                            ("?page=99999999999999999999", 60), ("?page=61", 60)):
        response = client.get(search_url(search, query))
        assert response.status_code == 200, query
        assert ranks_on(response.content.decode())[0] == (expected - 1) * PER_PAGE + 1, query


def test_a_search_page_costs_the_same_queries_for_sixty_matches_or_three_thousand(client, account):
    def queries(search: LenderSearch) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(search_url(search, "?page=2")).status_code == 200
        matches_read = [q["sql"] for q in captured if "lenders_lendermatch" in q["sql"]]
        # One read of the page's ranks only (51-100), not of the search's matches.
        assert len(matches_read) == 1
        assert f'"rank" > {PER_PAGE}' in matches_read[0] and f'"rank" <= {2 * PER_PAGE}' in matches_read[0]
        return len(captured)

    small = completed_search(make_deal(account), 60)
    large = completed_search(make_deal(account), 3000)
    client.get(search_url(small))  # process-wide caches (content types) filled before counting
    assert queries(small) == queries(large)


def test_a_search_page_says_what_a_search_without_results_is_doing(client, deal):
    pending = LenderSearch.objects.create(account_id=deal.account_id, deal=deal, deal_version=1)
    assert "This search is pending" in client.get(search_url(pending)).content.decode()
    failed = LenderSearch.objects.create(account_id=deal.account_id, deal=deal, deal_version=1, status="failed",
                                        error_code="UPSTREAM_UNAVAILABLE", error_message="Ranking worker lost.")
    html = client.get(search_url(failed)).content.decode()
    assert "This search failed: Ranking worker lost." in html
    assert "UPSTREAM_UNAVAILABLE: Ranking worker lost." in html
    empty = completed_search(deal, 0)
    assert "No lender in the directory matched this deal." in client.get(search_url(empty)).content.decode()


def test_a_search_page_shows_what_was_ranked_in_words(client, deal):
    deal.refresh_from_db()
    search, _ = services.lender_search_start(deal=deal)
    html = client.get(search_url(search)).content.decode()
    assert "<th>Loan amount</th><td>$10,000,000</td>" in html
    assert "<th>States</th><td>TX</td>" in html and "<th>Asset types</th><td>Multifamily</td>" in html
    assert '"loan_amount"' not in html  # not the JSON blob


# --- lender programs: enum lists as checkboxes, masks in step -----------------------------------------
def program_url(program: LenderProgram) -> str:
    return reverse("admin:lenders_lenderprogram_change", args=[program.pk])


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
    assert errors["max_ltv"] == ["Ensure this value is less than or equal to 100."]
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
    assert "$1,000,000 to $50,000,000" in html and "<td class=\"field-ltv\">75%</td>" in html
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
