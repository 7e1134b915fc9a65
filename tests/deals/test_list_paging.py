"""The deal list pages by key (issue #12): every ordering pages through every deal exactly once,
also while deals are added, changed or archived between pages; a page costs the same number of
queries in a small and a large account (no OFFSET, a bounded count); a cursor is bound to its
account, filters and ordering, and any other cursor is a VALIDATION_ERROR, never a 500."""

from __future__ import annotations

import base64
import datetime as dt
import json
import random
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core import signing
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from deals.models import Deal
from deals.selectors import DEAL_ORDERINGS
from lev import limits, pagination
from lev.limits import LIST_COUNT_MAX
from tests.factories import AccountFactory, DealFactory, DealPropertyFactory
from tests.mcp_helpers import value_schema
from tests.mcp_tools.test_tool_arguments import Caller

pytestmark = pytest.mark.django_db

BASE = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


def cursor_of(link: str | None) -> str | None:
    return parse_qs(urlsplit(link).query)["cursor"][0] if link else None


def walk(api, query: dict, *, direction: str = "next", start: str | None = None) -> tuple[list[int], list[dict]]:
    """Follow `direction` links from the first page (or `start`) to the end: (ids, bodies)."""
    ids, bodies, url = [], [], start
    while True:
        response = api.get(url) if url else api.get("/api/v1/deals/", query)
        assert response.status_code == 200, response.content
        body = response.json()
        bodies.append(body)
        page = [d["id"] for d in body["results"]]
        ids = ids + page if direction == "next" else page + ids
        url = body[direction]
        if url is None:
            return ids, bodies
        assert len(bodies) < 100


def mixed_deals(account) -> list[Deal]:
    """Deals with ties in every sort value and missing loan amounts and closing dates."""
    deals = []
    for n in range(14):
        deal = DealFactory(
            account=account, title=f"Deal {'AB'[n % 2]}{n % 4}",  # repeated titles
            loan_amount=None if n % 5 == 0 else Decimal(1_000_000 * (1 + n % 3)),
            estimated_close_date=None if n % 4 == 0 else dt.date(2027, 1, 1 + n % 3),
        )
        deals.append(deal)
    for n, deal in enumerate(deals):  # timestamps with ties too
        Deal.objects.filter(pk=deal.pk).update(created_at=BASE + dt.timedelta(minutes=n // 3),
                                               updated_at=BASE - dt.timedelta(minutes=n // 2))
    return list(Deal.objects.filter(pk__in=[d.pk for d in deals]))


def expected_order(deals: list[Deal], ordering: str) -> list[int]:
    """The documented order: by the value (a missing one as the largest), then by id, one direction."""
    name = ordering.removeprefix("-")
    largest = {"loan_amount": Decimal(10) ** 12, "estimated_close_date": dt.date.max}

    def key(deal: Deal):
        value = getattr(deal, name)
        return (largest[name] if value is None else value), deal.pk

    return [d.pk for d in sorted(deals, key=key, reverse=ordering.startswith("-"))]


@pytest.mark.parametrize("ordering", DEAL_ORDERINGS)
def test_every_ordering_pages_forward_and_back_through_every_deal_once(api, account, ordering):
    deals = mixed_deals(account)
    DealFactory(account=account, archived=True)  # another list
    ids, bodies = walk(api, {"ordering": ordering, "page_size": 4})
    assert ids == expected_order(deals, ordering)
    assert [len(b["results"]) for b in bodies] == [4, 4, 4, 2]
    assert all(b["count"] == 14 and "count_capped" not in b for b in bodies)
    assert bodies[0]["previous"] is None and bodies[-1]["next"] is None
    # Back from the last page by `previous` links: the same deals in the same order.
    back, back_bodies = walk(api, {}, direction="previous", start=bodies[-2]["next"])
    assert back == ids and [len(b["results"]) for b in back_bodies] == [2, 4, 4, 4]


def test_the_longest_title_fits_a_cursor(api, account):
    draw = random.Random(12)  # 4 bytes each in UTF-8, and varied, so compression does not shrink it much
    longest = "".join(chr(draw.randrange(0x20000, 0x2A6DF)) for _ in range(limits.DEAL_TITLE_MAX))
    for n in range(3):
        DealFactory(account=account, title=longest[:-1] + chr(0x4E00 + n))
    ids, bodies = walk(api, {"ordering": "-title", "page_size": 1})
    assert len(ids) == 3 and all(len(cursor_of(b["next"]) or "") <= limits.LIST_CURSOR_MAX for b in bodies)
    assert max(len(cursor_of(b["next"]) or "") for b in bodies) > 800  # near the worst case: room to spare


def test_a_page_number_still_answers_and_links_by_cursor(api, account):
    deals = [DealFactory(account=account) for _ in range(5)]
    body = api.get("/api/v1/deals/", {"page": 2, "page_size": 2}).json()
    newest_first = [d.pk for d in reversed(deals)]
    assert [d["id"] for d in body["results"]] == newest_first[2:4]
    assert "page=" not in body["next"] and cursor_of(body["next"])
    assert [d["id"] for d in api.get(body["next"]).json()["results"]] == newest_first[4:]
    assert [d["id"] for d in api.get(body["previous"]).json()["results"]] == newest_first[:2]


def test_paging_while_deals_are_added_changed_and_archived_misses_and_repeats_nothing(api, account):
    existing = [DealFactory(account=account, title=f"Deal {n:02d}") for n in range(12)]
    seen, added, url, pages = [], [], None, 0
    while True:
        body = (api.get(url) if url else api.get("/api/v1/deals/", {"ordering": "title", "page_size": 3})).json()
        seen += [d["id"] for d in body["results"]]
        pages += 1
        # Between pages: a deal that sorts first (already passed), one that sorts last (still to
        # come), a change of a deal not seen yet (not its title), and the last listed deal archived.
        added.append(DealFactory(account=account, title=f"A new {pages}").pk)
        added.append(DealFactory(account=account, title=f"Z new {pages}").pk)
        unseen = [d for d in existing if d.pk not in seen]
        if unseen:
            Deal.objects.filter(pk=unseen[-1].pk).update(loan_amount=Decimal(7_000_000), updated_at=timezone.now())
        if body["results"]:
            Deal.objects.filter(pk=body["results"][-1]["id"]).update(archived=True)
        url = body["next"]
        if url is None:
            break
    assert len(seen) == len(set(seen))  # no duplicates
    assert {d.pk for d in existing} <= set(seen)  # no gaps: every deal listed throughout came
    assert not set(seen) & set(added[0::2])  # "A new" deals sort before the cursor: never shown


def test_a_page_costs_the_same_queries_in_a_small_and_a_large_account(api, account, other_account):
    def queries(url: str, params: dict | None = None) -> list[str]:
        with CaptureQueriesContext(connection) as captured:
            response = api.get(url, params)
        assert response.status_code == 200
        return [q["sql"] for q in captured]

    def pages() -> tuple[list[str], list[str]]:
        first = api.get("/api/v1/deals/", {"page_size": 5, "ordering": "loan_amount"}).json()
        deep = first
        for _ in range(2):
            deep = api.get(deep["next"]).json()
        return (queries("/api/v1/deals/", {"page_size": 5, "ordering": "loan_amount"}),
                queries(deep["next"]))

    for n in range(20):
        DealPropertyFactory(deal=DealFactory(account=account, loan_amount=Decimal(1_000_000 + n)))
    small_first, small_deep = pages()
    Deal.objects.bulk_create([Deal(account=account, title=f"Bulk {n}", loan_amount=Decimal(2_000_000 + n))
                              for n in range(LIST_COUNT_MAX + 50)])
    large_first, large_deep = pages()
    assert len(small_first) == len(small_deep) == len(large_first) == len(large_deep)
    for sql in large_first + large_deep:
        assert "OFFSET" not in sql.upper()  # no page is found by reading the rows before it
    properties = [sql for sql in large_deep if "deals_dealproperty" in sql]
    assert len(properties) == 1 and '"deal_id" IN (' in properties[0]  # the page's deals' properties only
    counts = [sql for sql in large_deep if "COUNT(" in sql.upper()]
    assert len(counts) == 1 and f"LIMIT {LIST_COUNT_MAX + 1}" in counts[0]  # the count is bounded


def test_the_count_stops_at_its_bound_and_says_so(api, account):
    Deal.objects.bulk_create([Deal(account=account, title=f"Bulk {n}") for n in range(LIST_COUNT_MAX + 1)])
    body = api.get("/api/v1/deals/", {"page_size": 2}).json()
    assert body["count"] == LIST_COUNT_MAX and body["count_capped"] is True
    Deal.objects.filter(pk=Deal.objects.order_by("id").first().pk).delete()
    body = api.get("/api/v1/deals/", {"page_size": 2}).json()
    assert body["count"] == LIST_COUNT_MAX and "count_capped" not in body
    payload = caller_for(api).ok("list_deals", {"limit": 1})
    assert payload["total"] == LIST_COUNT_MAX and "total_capped" not in payload
    DealFactory(account=account)
    payload = caller_for(api).ok("list_deals", {"limit": 1})
    assert payload["total"] == LIST_COUNT_MAX and payload["total_capped"] is True


def caller_for(api) -> Caller:
    return Caller(api._credentials["HTTP_AUTHORIZATION"].removeprefix("Bearer "))


# --- cursors that are not this list's ----------------------------------------------------------------
def signed(payload) -> str:
    return signing.Signer(salt="lev.pagination.keyset").sign_object(payload, serializer=pagination._CompactJSON)


def first_cursor(api, **query) -> str:
    return cursor_of(api.get("/api/v1/deals/", {"page_size": 1, **query}).json()["next"])


def refused(api, cursor: str, reason: str = pagination.BAD_CURSOR, **query) -> None:
    response = api.get("/api/v1/deals/", {"cursor": cursor, **query})
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "VALIDATION_ERROR" and body["details"]["fields"] == {"cursor": [reason]}
    assert body["message"] == f"Validation failed: cursor {reason}"
    assert "results" not in body


def test_forged_and_edited_cursors_are_validation_errors(api, account):
    DealFactory(account=account)
    DealFactory(account=account)
    good = first_cursor(api)
    payload, signature = good.rsplit(":", 1)
    scope = signing.Signer(salt="lev.pagination.keyset").unsign_object(good, serializer=pagination._CompactJSON)["s"]
    for forged in [
        "not-a-cursor:abc", good[:-1] + ("A" if good[-1] != "A" else "B"), payload + ":", ":" + signature,
        signed({"s": scope, "b": 0, "k": "x", "i": 1})[:-2] + "xx",
        signing.Signer(key="another-secret-key-" * 3, salt="lev.pagination.keyset").sign_object(
            {"s": scope, "b": 0, "k": "2026-01-01T00:00:00+00:00", "i": 1}),
        "é:\x00", ":" * 50,
    ]:
        refused(api, forged)
    # Signed with this server's key but not a shape it issues (e.g. by an older version): still a 400.
    for shape in [[1], {"s": scope}, {"s": scope, "b": 0, "k": "not a time", "i": 1},
                  {"s": scope, "b": 2, "k": "2026-01-01T00:00:00+00:00", "i": 1},
                  {"s": scope, "b": 0, "k": "2026-01-01T00:00:00+00:00", "i": "1"},
                  {"s": scope, "b": 0, "k": 5, "i": 1},
                  {"s": scope, "b": True, "k": "2026-01-01T00:00:00+00:00", "i": 1},
                  {"s": scope, "b": 0, "k": "2026-01-01", "i": 1},
                  {"s": scope, "b": 0, "k": "2026-01-01T00:00:00+00:00", "i": 2**63}]:
        refused(api, signed(shape))
    # A loan amount no column holds, or an id past a bigint, would make the database fail: refused first.
    amount_scope = signing.Signer(salt="lev.pagination.keyset").unsign_object(
        first_cursor(api, ordering="loan_amount"), serializer=pagination._CompactJSON)["s"]
    refused(api, signed({"s": amount_scope, "b": 0, "k": "9" * 500, "i": 1}), ordering="loan_amount")
    refused(api, signed({"s": amount_scope, "b": 0, "k": "NaN", "i": 1}), ordering="loan_amount")
    refused(api, "", "may not be empty; omit cursor for the first page")
    refused(api, "x" * 2001, "must be at most 2000 characters")
    response = api.get("/api/v1/deals/", {"cursor": good, "page": 2})
    assert response.status_code == 400 and response.json()["details"]["fields"] == {
        "cursor": ["cannot be combined with page; pass one or the other"]}


def test_a_cursor_only_pages_the_list_it_came_from(api, account):
    DealFactory(account=account, loan_type="construction")
    DealFactory(account=account, loan_type="construction")
    cursor = first_cursor(api, loan_type="construction")
    assert api.get("/api/v1/deals/", {"cursor": cursor, "loan_type": "construction"}).status_code == 200
    # Filters spelled another way are the same list.
    amount = first_cursor(api, min_loan_amount="1000000")
    assert api.get("/api/v1/deals/", {"cursor": amount, "min_loan_amount": "1000000.00"}).status_code == 200
    refused(api, cursor, pagination.OTHER_LIST)  # without its filter
    refused(api, cursor, pagination.OTHER_LIST, loan_type="permanent")
    refused(api, cursor, pagination.OTHER_LIST, loan_type="construction", ordering="title")


def test_another_accounts_deals_and_cursors_never_cross(api, other_api, account, other_account):
    mine = {DealFactory(account=account, title=f"Mine {n}").pk for n in range(5)}
    theirs = {DealFactory(account=other_account, title=f"Theirs {n}").pk for n in range(5)}
    ids, bodies = walk(api, {"page_size": 2})
    assert set(ids) == mine and bodies[0]["count"] == 5
    their_cursor = cursor_of(other_api.get("/api/v1/deals/", {"page_size": 2}).json()["next"])
    refused(api, their_cursor, pagination.OTHER_LIST)  # says nothing of the other account's deals
    ids, _ = walk(other_api, {"page_size": 2})
    assert set(ids) == theirs


# --- the MCP tool ----------------------------------------------------------------------------------
def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_list_deals_pages_through_every_deal_once_while_deals_are_added(api_key, account):
    tools = Caller(api_key)
    existing = {DealFactory(account=account).pk for _ in range(9)}
    seen, cursor = [], None
    while True:
        page = tools.ok("list_deals", {"limit": 4, **({"cursor": cursor} if cursor else {})})
        seen += [d["id"] for d in page["deals"]]
        DealFactory(account=account)  # newest first: a new deal is before the cursor
        if not page["has_more"]:
            assert page["next_cursor"] is None
            break
        cursor = page["next_cursor"]
        assert ":" in cursor and len(cursor) <= 2000
    assert seen == sorted(existing, reverse=True)


def test_list_deals_refuses_a_cursor_of_another_list_or_account(api_key, account, other_api):
    tools = Caller(api_key)
    for _ in range(3):
        DealFactory(account=account, loan_type="land")
    cursor = tools.ok("list_deals", {"limit": 1, "loan_type": "land"})["next_cursor"]
    assert tools.ok("list_deals", {"limit": 1, "loan_type": "land", "cursor": cursor})["deals"]
    payload = tools.invalid("list_deals", {"cursor": cursor}, "cursor", "was issued for another list")
    assert payload["hint"]
    their_cursor = cursor_of(other_api.get("/api/v1/deals/", {"page_size": 1}).json()["next"] or "")
    DealFactory(account=AccountFactory())  # noise
    if their_cursor:
        tools.invalid("list_deals", {"cursor": their_cursor}, "cursor", "was issued for another list")
    tools.invalid("list_deals", {"cursor": cursor[:-3] + "abc"}, "cursor", "is not a cursor this server issued")


def test_a_page_number_cursor_from_before_keeps_paging(api_key, account):
    tools = Caller(api_key)
    ids = [DealFactory(account=account).pk for _ in range(5)]
    page = tools.ok("list_deals", {"cursor": b64(json.dumps({"p": 2, "l": 2}).encode())})
    assert [d["id"] for d in page["deals"]] == ids[::-1][2:4] and page["has_more"] is True
    rest = tools.ok("list_deals", {"cursor": page["next_cursor"], "limit": 2})
    assert [d["id"] for d in rest["deals"]] == ids[::-1][4:] and rest["next_cursor"] is None


def test_tool_descriptions_readme_and_openapi_state_the_count_bound_and_the_cursor(api):
    from pathlib import Path

    from mcp_tools.server import get_server

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert f"The count stops at {LIST_COUNT_MAX:,} (`LIST_COUNT_MAX`)" in readme
    schema = api.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    for path in ("/api/v1/deals/", "/api/v1/lenders/"):
        operation = schema["paths"][path]["get"]
        cursor = next(p for p in operation["parameters"] if p["name"] == "cursor")
        assert cursor["schema"]["maxLength"] == 2000
        page = next(p for p in operation["parameters"] if p["name"] == "page")
        assert "Deprecated" in page["description"]
        body = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
        fields = schema["components"]["schemas"][body]["properties"]
        assert f"{LIST_COUNT_MAX:,}" in fields["count"]["description"] and "count_capped" in fields

    tools = {t["name"]: t for t in get_server().tools_list_result["tools"]}
    for name in ("list_deals", "search_lender_directory"):
        description = tools[name]["description"]
        assert f"up to {LIST_COUNT_MAX:,}" in description and "total_capped" in description
        assert value_schema(tools[name]["inputSchema"]["properties"]["cursor"])["maxLength"] == 2000
