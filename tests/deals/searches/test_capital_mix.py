"""A process, not ten clones (issue 37, 6): a search's results say the kinds of capital among the ranked
lenders with the best of each (REST `by_capital_source`, the admin's search and deal pages), and a
`capital_source` filter pages one kind in rank order."""

from __future__ import annotations

import pytest
from django.urls import reverse

from deals.searches import services as lender_services
from tests.admin_helpers import admin_client, superuser
from tests.deals.searches.factories import lender_with, make_deal, refresh

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_jobs")]

KINDS = {"Agency One": "agency", "Agency Two": "agency", "Agency Three": "agency", "Bank One": "balance_sheet",
         "Bank Two": "balance_sheet", "Debt Fund": "fund"}


@pytest.fixture
def search(account, django_capture_on_commit_callbacks):
    for name, kind in KINDS.items():
        lender_with(name, capital_source_type=kind)
    deal = make_deal(account)
    with django_capture_on_commit_callbacks(execute=True):
        started, _ = lender_services.lender_search_start(deal=deal)
    return refresh(started)


def test_the_results_say_the_mix_with_the_best_of_each_kind_and_filter_by_one(api, search):
    body = api.get(f"/api/v1/lender-searches/{search.pk}/").json()
    ranks = {m["lender_name"]: m["rank"] for m in body["results"]}
    mix = body["by_capital_source"]
    # Most lenders first; each kind's best is its first rank, named.
    assert [(k["capital_source"], k["lenders"]) for k in mix] == [("agency", 3), ("balance_sheet", 2), ("fund", 1)]
    for kind in mix:
        names = [name for name, source in KINDS.items() if source == kind["capital_source"]]
        best = min(names, key=ranks.__getitem__)
        assert (kind["best_lender_name"], kind["best_rank"]) == (best, ranks[best])

    banks = api.get(f"/api/v1/lender-searches/{search.pk}/", {"capital_source": "balance_sheet"}).json()
    assert [m["lender_name"] for m in banks["results"]] == sorted(["Bank One", "Bank Two"], key=ranks.__getitem__)
    assert [m["rank"] for m in banks["results"]] == sorted(ranks[n] for n in ("Bank One", "Bank Two"))
    assert banks["ranked_count"] == 2 and {m["capital_source"] for m in banks["results"]} == {"balance_sheet"}

    nothing = api.get(f"/api/v1/lender-searches/{search.pk}/", {"capital_source": "private"}).json()
    assert nothing["results"] == [] and nothing["ranked_count"] == 0  # an empty kind is an empty page, not an error

    bad = api.get(f"/api/v1/lender-searches/{search.pk}/", {"capital_source": "hedge"})
    assert bad.status_code == 400 and bad.json()["message"].startswith("Validation failed: capital_source")


def test_the_admin_pages_say_the_mix_and_link_the_best_of_each_kind(search):
    client = admin_client(superuser())
    for url in (reverse("admin:deals_lendersearch_change", args=[search.pk]),
                reverse("admin:deals_deal_change", args=[search.deal_id])):
        html = client.get(url).content.decode()
        assert "Capital sources ranked:" in html, url
        assert "Agency 3 (best #" in html and "Balance sheet 2 (best #" in html and "Fund 1 (best #" in html
        fund = search.matches.get(lender__name="Debt Fund")
        assert (f'Fund 1 (best #{fund.rank} <a href="{reverse("admin:lenders_lender_change", args=[fund.lender_id])}">'
                "Debt Fund</a>)") in html
    second_page = client.get(reverse("admin:deals_lendersearch_change", args=[search.pk]), {"page": 2})
    assert second_page.status_code == 200
