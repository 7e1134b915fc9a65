"""A recorded corpus of what the product says on the wire: `tools/list` (both MCP revisions, the whole
server and the read-only address), the OpenAPI schema, every tool called with good arguments over the
demo book (reads, then writes that build on each other: a deal, its property, financials, a lender, a
program, placements, quotes, a winner), every tool called with no arguments and with a wrong type, and
the REST reads behind them.

`replay()` runs the scenario against a freshly seeded demo at one fixed moment (time-machine: the demo's
dates, relative to today, and every timestamp are the same bytes on every run) and returns one entry per
call: what was sent and the answer's status, content type and body, byte for byte. test_wire_corpus.py
compares it with the corpus recorded in corpus.json (`LEV_WIRE_RECORD=1` writes it again: only when a
change of the wire is intended, and said in the commit).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from io import StringIO
from typing import Any

from django.core.management import call_command
from django.test import Client

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
# One moment for the whole replay (a Monday morning in the product's time zone).
MOMENT = "2026-06-15 14:30:00+00:00"

State = dict[str, Any]
Arguments = dict[str, Any] | Callable[[State], dict[str, Any]]


class Wire:
    """The calls, each answer recorded as sent and received."""

    def __init__(self, key: str):
        self.key, self.entries, self.state, self._id = key, [], {}, 0

    def _record(self, label: str, request: dict, response) -> Any:
        # The demo's API key is random: its shown prefix reads as one placeholder.
        body = response.content.decode("utf-8").replace(self.key[:12], "lev_sk_KEY__")
        self.entries.append({"label": label, "request": request, "status": response.status_code,
                             "content_type": response.get("Content-Type", ""), "body": body})
        try:
            return json.loads(body)
        except ValueError:
            return None

    def rpc(self, label: str, method: str, params: dict | None = None, *, path: str = "/mcp",
            modern: bool = False) -> Any:
        self._id += 1
        params = dict(params or {})
        headers = {"Accept": ACCEPT, "Authorization": f"Bearer {self.key}"}
        if modern:
            params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                               "io.modelcontextprotocol/clientCapabilities": {}}
            headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": method})
            if method == "tools/call":
                headers["Mcp-Name"] = params["name"]
        else:
            headers["MCP-Protocol-Version"] = LEGACY
        message = {"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}
        response = Client().generic("POST", path, json.dumps(message), content_type="application/json",
                                    headers=headers)
        return self._record(label, {"path": path, "message": message, "modern": modern}, response)

    def call(self, name: str, arguments: Arguments, label: str = "", *, modern: bool = False) -> dict:
        """tools/call; the tool's JSON answer (its text content) parsed."""
        if callable(arguments):
            arguments = arguments(self.state)
        answer = self.rpc(label or name, "tools/call", {"name": name, "arguments": arguments}, modern=modern)
        result = (answer or {}).get("result") or {}
        content = result.get("content") or [{}]
        try:
            return json.loads(content[0].get("text", "null")) or {}
        except ValueError:
            return {}

    def get(self, label: str, path: str) -> Any:
        response = Client().get(path, headers={"Authorization": f"Bearer {self.key}", "Accept": "application/json"})
        return self._record(label, {"GET": path}, response)


def first_id(answer: Any, key: str = "id") -> Any:
    """The id of what an answer is about: its own, its one record's ({"deal": {...}}) or its list's first."""
    if not isinstance(answer, dict):
        return None
    if key in answer:
        return answer[key]
    for value in answer.values():
        if isinstance(value, dict) and key in value:
            return value[key]
        if isinstance(value, list) and value and isinstance(value[0], dict) and key in value[0]:
            return value[0][key]
    return None


def _key() -> str:
    out = StringIO()
    call_command("seed_demo", "--lenders", "60", "--print-credentials", stdout=out)
    text = out.getvalue()
    return next(word.strip("'\",.") for word in text.split() if word.strip("'\",.").startswith("lev_sk_"))


def _reads(wire: Wire) -> None:
    s = wire.state
    wire.call("get_account", {})
    wire.call("get_pipeline", {})
    deals = wire.call("list_deals", {})
    wire.call("list_deals", {"status": "all", "limit": 3}, "list_deals, all, a page of 3")
    wire.call("list_deals", {"search": "riverside"}, "list_deals, a search")
    riverside = next(d for d in deals["deals"] if "Riverside" in d["title"])
    s["deal"] = riverside["id"]
    wire.call("get_deal", lambda s: {"deal_id": s["deal"]})
    wire.call("get_deal", lambda s: {"deal_id": s["deal"], "include": ["properties", "financials"]},
              "get_deal, with properties and financials")
    wire.call("get_deal", {"deal_id": 10**9}, "get_deal, not found")
    wire.call("get_deal", lambda s: {"deal_id": s["deal"]}, "get_deal, 2026-07-28", modern=True)
    wire.call("list_deal_properties", lambda s: {"deal_id": s["deal"]})
    wire.call("get_deal_financials", lambda s: {"deal_id": s["deal"]})
    for detail in ("brief", "standard", "memo"):
        wire.call("summarize_deal", lambda s, d=detail: {"deal_id": s["deal"], "detail": d}, f"summarize_deal {detail}")
    wire.call("list_imports", {})
    placements = wire.call("list_placements", lambda s: {"deal_id": s["deal"]})
    s["placement"] = first_id(placements)
    wire.call("get_placement", lambda s: {"placement_id": s["placement"]})
    wire.call("list_term_sheets", lambda s: {"deal_id": s["deal"]})
    wire.call("compare_term_sheets", lambda s: {"deal_id": s["deal"]})
    wire.call("list_notes", lambda s: {"deal_id": s["deal"]})
    wire.call("get_deal_timeline", lambda s: {"deal_id": s["deal"], "limit": 10})
    wire.call("get_deal_stage_history", lambda s: {"deal_id": s["deal"]})
    searches = wire.call("list_lender_searches", lambda s: {"deal_id": s["deal"]})
    s["search"] = first_id(searches, "search_id")
    wire.call("get_lender_search_results", lambda s: {"search_id": s["search"], "limit": 5})
    lenders = wire.call("search_lender_directory", {"state": "TX", "limit": 5})
    s["lender"] = first_id(lenders)
    wire.call("search_lender_directory", {"query": "bank", "loan_type": "light_bridge", "limit": 3},
              "search_lender_directory, words")
    wire.call("get_lender", lambda s: {"lender_id": s["lender"]})
    wire.call("list_lender_programs", lambda s: {"lender_id": s["lender"]})
    wire.call("get_market_rates", {"index": "SOFR", "history_days": 5})
    companies = wire.call("list_companies", {"limit": 5})
    s["company"] = first_id(companies)
    wire.call("get_company", lambda s: {"company_id": s["company"]})
    wire.call("list_contacts", lambda s: {"company_id": s["company"]})


def _writes(wire: Wire) -> None:
    s = wire.state
    deal = wire.call("create_deal", {"title": "Wire Corpus Flats", "loan_amount": 12500000,
                                     "loan_type": "light_bridge", "transaction_type": "acquisition",
                                     "business_plan": "value_add", "idempotency_key": "wire-corpus-1"})
    s["new_deal"] = first_id(deal)
    wire.call("update_deal", lambda s: {"deal_id": s["new_deal"], "loan_amount": 13000000,
                                        "description": "Garden walk-ups, 1980s vintage"})
    prop = wire.call("add_deal_property", lambda s: {"deal_id": s["new_deal"], "name": "Corpus Flats",
                                                     "city": "Austin", "state": "TX", "asset_type": "multifamily",
                                                     "units": 120, "year_built": 1984})
    s["property"] = first_id(prop)
    wire.call("update_deal_property", lambda s: {"deal_id": s["new_deal"], "property_id": s["property"],
                                                 "units": 124})
    wire.call("update_deal_financials", lambda s: {"deal_id": s["new_deal"], "purchase_price": 18000000,
                                                   "in_place_noi": 1050000, "interest_rate": 6.5,
                                                   "amortization_years": 30})
    company = wire.call("create_company", {"kind": "sponsor", "name": "Corpus Capital Partners",
                                           "idempotency_key": "wire-corpus-2"})
    s["new_company"] = first_id(company)
    wire.call("add_contact", lambda s: {"name": "Avery Corpus", "company_id": s["new_company"],
                                        "email": "avery@corpus.example", "idempotency_key": "wire-corpus-3"})
    lender = wire.call("create_lender", {"name": "Corpus Bridge Lending", "state": "TX",
                                         "lender_types": ["debt_fund"], "idempotency_key": "wire-corpus-4"})
    s["new_lender"] = first_id(lender)
    wire.call("add_lender_program", lambda s: {"lender_id": s["new_lender"], "title": "Bridge to stabilization",
                                               "loan_types": ["light_bridge"], "asset_types": ["multifamily"],
                                               "min_loan_amount": 5000000, "max_loan_amount": 40000000,
                                               "max_ltv": 75, "idempotency_key": "wire-corpus-5"})
    placed = wire.call("create_placements", lambda s: {"deal_id": s["new_deal"], "lender_ids": [s["new_lender"]]})
    s["new_placement"] = first_id(placed)
    wire.call("update_placement", lambda s: {"placement_id": s["new_placement"], "status": "sent"})
    quote = wire.call("add_term_sheet", lambda s: {"placement_id": s["new_placement"], "loan_amount": 12000000,
                                                   "rate_type": "floating", "rate_index": "SOFR", "spread_bps": 375,
                                                   "term_months": 36, "max_ltv": 70, "recourse": "non_recourse"})
    s["quote"] = first_id(quote)
    wire.call("compare_term_sheets", lambda s: {"deal_id": s["new_deal"]}, "compare_term_sheets, one quote")
    wire.call("select_winning_term_sheet", lambda s: {"term_sheet_id": s["quote"]})
    wire.call("add_note", lambda s: {"body": "Sponsor wants to close before Q3.", "deal_id": s["new_deal"],
                                     "idempotency_key": "wire-corpus-6"})
    wire.call("move_deal_stage", lambda s: {"deal_id": s["new_deal"], "stage": "closed", "reason": "funded"})
    wire.call("get_deal", lambda s: {"deal_id": s["new_deal"], "include": ["properties", "financials"]},
              "get_deal, the new deal")
    wire.call("summarize_deal", lambda s: {"deal_id": s["new_deal"], "detail": "memo"}, "summarize_deal, the new deal")
    wire.call("remove_deal_property", lambda s: {"deal_id": s["new_deal"], "property_id": s["property"]})
    wire.call("archive_deal", lambda s: {"deal_id": s["new_deal"]})
    wire.call("search_lenders_for_deal", lambda s: {"deal_id": s["deal"]})


def _refusals(wire: Wire, names: list[str]) -> None:
    for name in names:
        wire.call(name, {}, f"{name}, no arguments")
        wire.call(name, {"deal_id": "seven", "limit": -1, "placement_id": [], "lender_id": {}},
                  f"{name}, wrong types")


def _rest(wire: Wire) -> None:
    s = wire.state
    for path in ("/api/v1/deals/", f"/api/v1/deals/{s['deal']}/", "/api/v1/pipeline/stages/",
                 f"/api/v1/deals/{s['deal']}/placements/", f"/api/v1/lenders/{s['lender']}/",
                 "/api/v1/deals/999999999/", "/api/v1/deals/?loan_type=nonsense"):
        wire.get(f"GET {path}", path)
    wire.get("OpenAPI schema", "/api/v1/schema/?format=json")


def replay() -> list[dict]:
    import time_machine

    with time_machine.travel(MOMENT, tick=False):
        wire = Wire(_key())
        listed = wire.rpc("tools/list", "tools/list")
        wire.rpc("tools/list, 2026-07-28", "tools/list", modern=True)
        wire.rpc("tools/list, read-only", "tools/list", path="/mcp/readonly")
        names = sorted(tool["name"] for tool in listed["result"]["tools"])
        _reads(wire)
        _rest(wire)
        _refusals(wire, names)
        _writes(wire)
    return wire.entries
