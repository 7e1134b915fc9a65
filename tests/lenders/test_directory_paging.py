"""The lender directory pages by key (issue #12): alphabetical, every lender exactly once while lenders
are added or renamed between pages, the same queries per page at any directory size, and a cursor
only for the filters it came with."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lenders.models import Lender
from lev import pagination
from lev.limits import LIST_COUNT_MAX
from tests.factories import LenderFactory, LenderProgramFactory
from tests.mcp_tools.test_tool_arguments import Caller

pytestmark = pytest.mark.django_db


def cursor_of(link: str | None) -> str | None:
    return parse_qs(urlsplit(link).query)["cursor"][0] if link else None


def test_the_directory_pages_alphabetically_through_every_lender_once_while_it_changes(api):
    names = ["Cedar", "Alder", "Birch", "Alder", "Elm", "Dogwood", "Birch", "Fir", "Alder"]  # ties by id
    lenders = [LenderProgramFactory(lender=LenderFactory(name=name)).lender for name in names]
    expected = [x.pk for x in sorted(lenders, key=lambda x: (x.name, x.pk))]
    seen, url, pages = [], None, 0
    while True:
        body = (api.get(url) if url else api.get("/api/v1/lenders/", {"page_size": 2})).json()
        seen += [x["id"] for x in body["results"]]
        assert body["count"] == len(names) + pages  # one lender added per page so far
        pages += 1
        LenderFactory(name=f"Aaa {pages}")  # sorts before every cursor: never on a later page
        url = body["next"]
        if url is None:
            break
    assert seen == expected and pages == 5


def test_a_directory_page_costs_the_same_queries_at_any_size(api):
    def page_queries() -> tuple[int, int]:
        first = api.get("/api/v1/lenders/", {"page_size": 5})
        with CaptureQueriesContext(connection) as on_first:
            assert api.get("/api/v1/lenders/", {"page_size": 5}).status_code == 200
        with CaptureQueriesContext(connection) as on_next:
            assert api.get(first.json()["next"]).status_code == 200
        assert not any("OFFSET" in q["sql"].upper() for q in on_first.captured_queries + on_next.captured_queries)
        return len(on_first), len(on_next)

    for n in range(12):
        LenderProgramFactory(lender=LenderFactory(name=f"Small {n:02d}"))
    small = page_queries()
    Lender.objects.bulk_create([Lender(name=f"Bulk {n:05d}") for n in range(LIST_COUNT_MAX + 20)])
    large = page_queries()
    assert small == large
    body = api.get("/api/v1/lenders/").json()
    assert body["count"] == LIST_COUNT_MAX and body["count_capped"] is True


def test_a_directory_cursor_only_pages_the_filters_it_came_with(api):
    for n in range(3):
        LenderFactory(name=f"Texan {n}", state="TX")
    cursor = cursor_of(api.get("/api/v1/lenders/", {"state": "TX", "page_size": 1}).json()["next"])
    assert api.get("/api/v1/lenders/", {"state": "texas", "cursor": cursor}).status_code == 200  # same filter
    response = api.get("/api/v1/lenders/", {"state": "NY", "cursor": cursor})
    assert response.status_code == 400 and response.json()["details"]["fields"] == {"cursor": [pagination.OTHER_LIST]}
    response = api.get("/api/v1/lenders/", {"cursor": cursor + "x"})
    assert response.status_code == 400 and response.json()["details"]["fields"] == {"cursor": [pagination.BAD_CURSOR]}


def test_search_lender_directory_follows_cursors_and_refuses_another_lists(api_key):
    tools = Caller(api_key)
    for n in range(7):
        LenderFactory(name=f"Bank {n}", lender_types=["bank"] if n % 2 else ["debt_fund"])
    seen, cursor = [], None
    while True:
        page = tools.ok("search_lender_directory", {"limit": 2, **({"cursor": cursor} if cursor else {})})
        seen += [x["name"] for x in page["lenders"]]
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert seen == [f"Bank {n}" for n in range(7)]
    cursor = tools.ok("search_lender_directory", {"limit": 1, "lender_type": "bank"})["next_cursor"]
    payload = tools.invalid("search_lender_directory", {"cursor": cursor}, "cursor", "was issued for another list")
    assert payload["hint"]
    page = tools.ok("search_lender_directory", {"limit": 5, "lender_type": "bank", "cursor": cursor})
    assert [x["name"] for x in page["lenders"]] == ["Bank 3", "Bank 5"] and page["next_cursor"] is None
