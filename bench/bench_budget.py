"""Benchmark: the byte budget of tool answers (LEV_MCP_MAX_RESPONSE_BYTES), tool by tool.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/lev .venv/bin/python bench/bench_budget.py

For each tool with a list or a large payload, on data at its largest (a deal with 201 properties and
the longest texts, 110 deals, a lender with 130 programs, 150 lenders, 100 placements with 2,000-character
notes, 100 quotes): bytes on the wire before and after, against the budget. "Bytes" are what the budget
counts, the `result` of the JSON-RPC response (text content and structuredContent together, see
mcp_tools/budget.py). "Before" is the untrimmed answer (the whole detail or page, as the tools built it
before the budget was enforced) written as the server wrote it then (`\\uXXXX` escapes); "after" is the
answer the tool gives now, written as the server writes it now (UTF-8). Runs in its own database on the
DATABASE_URL server (`<name>_budget_bench`, created and dropped here).
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `python bench/<this>.py`
from bench._django import setup

setup(unthrottled=True)

from django.contrib.auth import get_user_model  # noqa: E402

# Mostly ASCII with the accents of real names: the texts of a large, realistic directory at their longest.
TEXT = "Résidences du Parc Riverside Commons Phase II "


def text(length: int) -> str:
    return (TEXT * (length // len(TEXT) + 1))[:length]


def old_wire(payload: dict) -> int:
    """The `result` bytes of a payload as the server wrote it before: ASCII with escapes, both copies."""
    body = json.dumps(payload, separators=(",", ":"), default=str)
    result = {"content": [{"type": "text", "text": body}], "structuredContent": payload, "isError": False}
    return len(json.dumps(result, separators=(",", ":")))


def seed():
    from deals.models import Deal, DealFinancials, DealProperty
    from deals.placements import services as placement_services
    from lenders.models import Lender, LenderProgram
    from lev.accounts.services import account_create, api_key_create
    from lev.enums import US_STATES

    user = get_user_model().objects.create(username="bench-budget")
    account = account_create(name="Budget Benchmark", owner=user)
    _key, raw = api_key_create(user=user, account=account, name="bench")
    deal = Deal.objects.create(account=account, title=text(200), description=text(5000),
                               loan_amount=Decimal("25000000"), loan_type="permanent")
    DealFinancials.objects.create(deal=deal, estimated_value=Decimal("40000000"), in_place_noi=Decimal("2400000"))
    DealProperty.objects.bulk_create([
        DealProperty(deal=deal, name=f"{n:03d} " + text(196), address=text(255), city=text(100), state="TX",
                     zip="78701-1234", asset_type="multifamily", units=240, square_footage=250_000, year_built=1999)
        for n in range(201)])
    Deal.objects.bulk_create([Deal(account=account, title=f"{n:03d} " + text(196), loan_amount=Decimal(2_000_000 + n),
                                   loan_type="light_bridge") for n in range(110)])
    # One by one: save() derives the masks the ranking and the directory filter on.
    big = Lender.objects.create(name=text(200), city=text(100), state="TX", about=text(8000), lender_types=["bank"])
    program = {"loan_types": ["permanent", "light_bridge"], "recourse_types": ["non_recourse"],
               "min_loan_amount": Decimal("1000000"), "max_loan_amount": Decimal("50000000"),
               "positions": ["senior"], "asset_types": ["multifamily", "office"], "max_ltv": Decimal("75"),
               "min_dscr": Decimal("1.25")}
    for n in range(130):
        LenderProgram.objects.create(lender=big, title=f"{n:03d} " + text(196), sponsor_states=list(US_STATES),
                                     **program)
    lenders = [Lender.objects.create(name=f"{n:03d} " + text(196), city=text(100), state="TX", lender_types=["bank"])
               for n in range(150)]
    for lender in lenders:
        for _ in range(2):
            LenderProgram.objects.create(lender=lender, title=text(200), sponsor_states=[], **program)
    batch = placement_services.placements_create(deal=deal, lender_ids=[x.pk for x in lenders[:100]], send=True,
                                                 notes=text(2000))
    for placement in batch.created:
        placement_services.term_sheet_add(placement=placement, data={
            "loan_amount": Decimal("24000000"), "rate_type": "fixed", "fixed_rate": Decimal("6.125"),
            "term_months": 120, "amortization_months": 360, "prepayment": text(500), "notes": text(2000)})
    return raw, deal, big, batch.created[0]


def run() -> tuple[list[list], dict[str, dict]]:
    from django.conf import settings
    from django.test import RequestFactory
    from rest_framework.test import APIClient

    from lev.celery_app import app as celery_app
    from mcp_tools import budget
    from mcp_tools.server import get_server

    celery_app.conf.task_always_eager = True  # the lender search ranks in this process
    raw, deal, big, placement = seed()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    request = RequestFactory().post("/mcp", HTTP_AUTHORIZATION=f"Bearer {raw}")

    def call(name: str, arguments: dict) -> tuple[dict, int]:
        result = get_server().call_tool_sync(name, arguments, request)
        # What handle_fast sends as `result`.
        sent = budget.dumps(result.model_dump(by_alias=True, mode="json", exclude_none=True))
        assert not result.isError, result.structuredContent
        return result.structuredContent, len(sent.encode())

    def untrimmed(name: str, arguments: dict) -> dict:
        saved, settings.LEV_MCP_MAX_RESPONSE_BYTES = settings.LEV_MCP_MAX_RESPONSE_BYTES, 10**9
        try:
            return call(name, arguments)[0]
        finally:
            settings.LEV_MCP_MAX_RESPONSE_BYTES = saved

    search = call("search_lenders_for_deal", {"deal_id": deal.pk})[0]
    details = {  # before: the whole detail, as these tools returned the REST body
        "get_deal": ({"deal_id": deal.pk, "include": ["properties", "financials"]},
                     lambda: {"deal": api.get(f"/api/v1/deals/{deal.pk}/?include=properties,financials").json()},
                     ("deal", "properties", "property_count")),
        "get_lender": ({"lender_id": big.pk}, lambda: {"lender": api.get(f"/api/v1/lenders/{big.pk}/").json()},
                       ("lender", "programs", "programs_total")),
        "get_placement": ({"placement_id": placement.pk},
                          lambda: {"placement": api.get(f"/api/v1/placements/{placement.pk}/").json()},
                          ("placement", "term_sheets", "term_sheet_count")),
    }
    lists = {  # before: the same page with no budget
        "list_deals": ({"limit": 100}, "deals"),
        "list_deal_properties": ({"deal_id": deal.pk, "limit": 100}, "properties"),
        "search_lender_directory": ({"limit": 100}, "lenders"),
        "list_lender_programs": ({"lender_id": big.pk, "limit": 100}, "programs"),
        "get_lender_search_results": ({"search_id": search["search_id"], "limit": 100}, "results"),
        "list_placements": ({"deal_id": deal.pk, "limit": 100}, "placements"),
        "list_term_sheets": ({"deal_id": deal.pk, "limit": 100}, "term_sheets"),
        "compare_term_sheets": ({"deal_id": deal.pk, "limit": 100}, "quotes"),
    }
    limit = budget.limit()
    rows = []
    samples = {"get_deal, 5,000-character description": call("get_deal", {"deal_id": deal.pk})[0],
               "list_deals limit 100 (compacted)": call("list_deals", {"limit": 100})[0]}
    for name, (arguments, before, (holder, key, total)) in details.items():
        whole = before()
        after, size = call(name, arguments)
        shown = f"{len(after[holder][key])} of {after[holder][total]}"
        flags = ", ".join(f for f in ("compacted", "truncated") if after.get(f))
        rows.append([name, shown, old_wire(whole), size, flags, size <= limit])
    for name, (arguments, key) in lists.items():
        whole = untrimmed(name, arguments)
        after, size = call(name, arguments)
        total = after.get("total", after.get("count"))
        shown = f"{len(after[key])} of {total}"
        flags = ", ".join(f for f in ("compacted", "truncated") if after.get(f))
        rows.append([name, shown, old_wire(whole), size, flags, size <= limit])
    return rows, samples


def counting_cost(payloads: dict[str, dict]) -> str:
    """What counting costs per answer: the server's encoding before (text only, escaped) and now (text,
    UTF-8, plus the size of the result) - the same payloads, interleaved, median of 7 x 200 calls."""
    import statistics
    import timeit

    from mcp_tools import budget

    def before(payload: dict) -> int:
        return len(json.dumps(payload, separators=(",", ":"), default=str))

    def now(payload: dict) -> int:
        return budget.result_size(budget.dumps(payload))

    lines = [f"{'answer':<34} {'before us':>9} {'now us':>7} {'now/before':>10}"]
    for label, payload in payloads.items():
        runs = {"before": [], "now": []}
        for _ in range(7):
            for name, fn in (("before", before), ("now", now)):
                runs[name].append(timeit.timeit(lambda fn=fn, p=payload: fn(p), number=200) / 200 * 1e6)
        b, n = statistics.median(runs["before"]), statistics.median(runs["now"])
        lines.append(f"{label:<34} {b:>9.1f} {n:>7.1f} {n / b:>9.2f}x")
    return "\n".join(lines)


def table(rows: list[list]) -> str:
    from mcp_tools import budget

    header = f"{'tool':<26} {'items':>11} {'before B':>10} {'after B':>9} {'after/before':>12}  {'within':<6} trimmed"
    lines = [f"budget {budget.limit():,} bytes (JSON-RPC result: text content + structuredContent)", header,
             "-" * len(header)]
    for name, shown, before, after, flags, within in rows:
        lines.append(f"{name:<26} {shown:>11} {before:>10,} {after:>9,} {after / before:>11.2f}x  "
                     f"{'yes' if within else 'NO':<6} {flags or '-'}")
    return "\n".join(lines)


def main() -> int:
    from bench.own_database import own_database

    with own_database("budget_bench", keepdb=False):
        rows, samples = run()
        print(table(rows), flush=True)
        print("\nEncoding and counting one answer (in-process, no I/O)\n" + counting_cost(samples), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
