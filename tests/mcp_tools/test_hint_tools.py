"""Every hint names a tool that exists and does what it says (issue 39): an unknown search id's hint
named list_deals and search_lender_directory, neither of which lists a deal's searches. A deal's
searches are listable now (REST GET /deals/{id}/lender-searches/, MCP list_lender_searches), each
NOT_FOUND hint names the tool that lists that kind of id, and a guard walks every string of the
product's code that an agent may read for words shaped like a tool's name and checks each is one."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from deals.searches.models import LenderSearch
from mcp_tools.errors import HINTS, NOT_FOUND_HINTS
from mcp_tools.registry import TOOLS
from mcp_tools.server import get_server
from tests.deals.placements.helpers import deal_with_financials
from tests.factories import DealFactory
from tests.mcp_tools.test_tool_arguments import Caller

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("mcp_tools", "deals", "lenders", "lev")
# (Not after a dot: "deals.add_deal" is a permission, not a tool.)
WORD = re.compile(r"(?<![.\w])[a-z]+(?:_[a-z]+)+\b")


def _catalogue() -> set[str]:
    get_server()  # registers every tool
    return set(TOOLS)


def tool_shaped(text: str, tools: set[str]) -> set[str]:
    """Words of `text` shaped like a tool's name: a verb the tools start with ("list", "get", …) followed
    by nouns the tools use ("deal", "search", "sheets", …). "get_host" or "search_id" are not."""
    verbs = {name.split("_")[0] for name in tools}
    nouns = {word for name in tools for word in name.split("_")[1:]}
    return {w for w in WORD.findall(text)
            if w.split("_")[0] in verbs and all(part in nouns for part in w.split("_")[1:])}


def _strings(path: Path) -> list[tuple[int, str]]:
    """Every string literal of the file (f-strings' literal parts too), but a next step's rule key (the
    first argument of `.add("add_financials", …)`: an identifier the summary returns beside the text)."""
    tree = ast.parse(path.read_text(), str(path))
    keys = {id(node.args[0]) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add"
            and node.args and isinstance(node.args[0], ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in keys]


def _named_tools() -> dict[str, list[str]]:
    tools = _catalogue()
    named: dict[str, list[str]] = {}
    for source in SOURCES:
        for path in sorted((ROOT / source).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for line, text in _strings(path):
                for word in tool_shaped(text, tools):
                    named.setdefault(word, []).append(f"{path.relative_to(ROOT)}:{line}")
    return named


def test_every_tool_a_string_names_is_in_the_catalogue():
    tools = _catalogue()
    named = _named_tools()
    missing = {word: places for word, places in named.items() if word not in tools}
    assert missing == {}
    # The walk finds what it is for: the hints that name tools, the new one included.
    assert {"list_lender_searches", "get_lender_search_results", "search_lenders_for_deal",
            "list_deals"} <= set(named)


def _error(tools: Caller, name: str, arguments: dict) -> dict:
    is_error, payload = tools.call(name, arguments)
    assert is_error, payload
    return payload


def test_the_guard_flags_a_tool_that_does_not_exist():
    tools = _catalogue()
    assert tool_shaped("Check the id (list_deal_searches(deal_id) lists them)", tools) == {"list_deal_searches"}
    assert tool_shaped("the request's get_host and search_id", tools) == set()


def test_every_not_found_hint_names_tools_that_exist_and_list_that_kind_of_id():
    tools = _catalogue()
    for resource, hint in {**NOT_FOUND_HINTS, "generic": HINTS["NOT_FOUND"]}.items():
        named = tool_shaped(hint, tools)
        assert named and named <= tools, (resource, hint)
    assert "list_lender_searches" in NOT_FOUND_HINTS["lender_search"]


@pytest.mark.django_db
def test_an_unknown_search_ids_hint_names_the_tool_that_lists_a_deals_searches(api_key, account, other_account):
    tools = Caller(api_key)
    deal = deal_with_financials(account)
    older = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version, status="completed",
                                        total_matches=12)
    deal.version += 1
    deal.save(update_fields=["version"])
    newer = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version, status="running")
    LenderSearch.objects.create(account=account, deal=deal_with_financials(account), deal_version=1)
    rival = LenderSearch.objects.create(account=other_account, deal=DealFactory(account=other_account),
                                        deal_version=1)

    failure = _error(tools, "get_lender_search_results", {"search_id": rival.pk})
    assert failure["code"] == "NOT_FOUND" and "list_lender_searches(deal_id)" in failure["hint"]
    # The tool the hint names does what it says: the deal's searches, newest first, and only its own.
    listed = tools.ok("list_lender_searches", {"deal_id": deal.pk})
    assert [s["search_id"] for s in listed["searches"]] == [newer.pk, older.pk]
    assert listed["total"] == 2 and listed["has_more"] is False
    assert [(s["status"], s["total_matches"], s["deal_changed"]) for s in listed["searches"]] == [
        ("running", 0, False), ("completed", 12, True)]
    # Paged with a cursor like every list.
    first = tools.ok("list_lender_searches", {"deal_id": deal.pk, "limit": 1})
    assert [s["search_id"] for s in first["searches"]] == [newer.pk] and first["has_more"] is True
    rest = tools.ok("list_lender_searches", {"deal_id": deal.pk, "limit": 1, "cursor": first["next_cursor"]})
    assert [s["search_id"] for s in rest["searches"]] == [older.pk] and rest["has_more"] is False
    # Another account's deal is not found, with the deal's hint.
    other = _error(tools, "list_lender_searches", {"deal_id": rival.deal_id})
    assert other["code"] == "NOT_FOUND" and "list_deals" in other["hint"]


@pytest.mark.django_db
def test_rest_lists_a_deals_searches_newest_first(api, other_api, account):
    deal = deal_with_financials(account)
    searches = [LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version) for _ in range(3)]
    response = api.get(f"/api/v1/deals/{deal.pk}/lender-searches/", {"page_size": 2})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["count"] == 3 and body["next"] and body["previous"] is None
    assert [s["search_id"] for s in body["results"]] == [searches[2].pk, searches[1].pk]
    assert set(body["results"][0]) == {"search_id", "deal_id", "deal_version", "deal_changed", "status", "progress",
                                       "total_matches", "results_removed", "created_at", "finished_at"}
    assert other_api.get(f"/api/v1/deals/{deal.pk}/lender-searches/").status_code == 404
    empty = api.get(f"/api/v1/deals/{deal_with_financials(account).pk}/lender-searches/")
    assert empty.status_code == 200 and empty.json()["results"] == []
    bad = api.get(f"/api/v1/deals/{deal.pk}/lender-searches/", {"page_size": 0})
    assert bad.status_code == 400 and bad.json()["code"] == "VALIDATION_ERROR"
