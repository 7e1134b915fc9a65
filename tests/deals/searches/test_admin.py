"""The lender search admin through the Django test client on the real database: a search's page shows
its ranked lenders a page at a time (never loading a large result)."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from deals.models import Deal
from deals.searches import services
from deals.searches.models import LenderMatch, LenderSearch
from lenders.models import Lender
from lev import limits
from tests.admin_helpers import admin_client, superuser
from tests.deals.searches.factories import LenderFactory, make_deal

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
    return reverse("admin:deals_lendersearch_change", args=[search.pk]) + query


def ranks_on(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<td class="lev-num lev-rank">(\d+)</td>', html)]


# --- a search's page --------------------------------------------------------------------------------------
def test_a_search_page_shows_one_page_of_ranked_lenders_at_a_time(client, deal):
    search = completed_search(deal, 3000)
    first = client.get(search_url(search)).content.decode()
    assert ranks_on(first) == list(range(1, PER_PAGE + 1))
    assert f"Ranks 1\u2013{PER_PAGE} of 3000 · page 1 of 60" in first
    assert "Insight of rank 1</li>" in first and 'title="Program of rank 1">Program of rank 1</span>' in first
    assert "Permanent · $1M-$50M · LTV ≤ 75% · DSCR ≥ 1.25x" in first
    assert "+1 more program" in first
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
