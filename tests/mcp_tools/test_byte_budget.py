"""The byte budget (LEV_MCP_MAX_RESPONSE_BYTES) holds for every tool, counted as the client receives it:
the `result` of the JSON-RPC response, text content and structuredContent together. Nothing is left out
silently: a page cut short says truncated and continues with its cursor; a detail answer that shows
only the first properties, programs or quotes says how many there are and which call returns the rest;
an answer still over budget is an INTERNAL_ERROR result, never cut JSON and never an HTTP 500."""

from __future__ import annotations

import base64
import datetime as dt
import json
from decimal import Decimal

import pytest
from django.test import Client

from deals.companies.models import Company, Contact
from deals.history.models import HistoryImport
from deals.models import DealProperty, Document, DocumentVersion, Note, Placement, Stage
from deals.outreach.services import outreach_send
from deals.pipeline import services as pipeline
from lenders import selectors as lender_selectors
from lenders.models import LenderProgram
from lenders.rates.models import MarketRate
from lev import limits
from mcp_tools import budget
from mcp_tools.registry import TOOLS
from mcp_tools.tools.common import decode_page_cursor, encode_page_cursor
from tests.deals.fixtures import eager_jobs
from tests.deals.placements.helpers import FIXED, place, quote
from tests.factories import DealFactory, DealFinancialsFactory, LenderFactory, LenderProgramFactory

__all__ = ["eager_jobs"]

pytestmark = pytest.mark.django_db

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
# Text at its longest, in scripts that cost 2, 3 and 4 bytes a character in UTF-8.
WIDE = "Grünwald Tower 東京タワー 🏢 "


def wide(length: int) -> str:
    return (WIDE * (length // len(WIDE) + 1))[:length]


class Sent:
    """One tools/call as the client receives it."""

    def __init__(self, response):
        assert response.status_code == 200, response.content[:500]
        self.body = response.content
        prefix = b'{"jsonrpc":"2.0","id":1,"result":'
        assert self.body.startswith(prefix) and self.body.endswith(b"}"), self.body[:200]
        # What the budget counts: the `result` member, exactly as sent.
        self.result_bytes = len(self.body) - len(prefix) - 1
        result = json.loads(self.body)["result"]
        self.is_error = bool(result.get("isError"))
        self.payload = result["structuredContent"]
        assert json.loads(result["content"][0]["text"]) == self.payload  # both carry the same


@pytest.fixture
def call(api_key):
    client = Client()

    def call(name: str, arguments: dict | None = None) -> Sent:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments or {}}})
        return Sent(client.post("/mcp", body, content_type="application/json",
                                headers={**HEADERS, "Authorization": f"Bearer {api_key}"}))

    return call


def ok(sent: Sent) -> dict:
    assert not sent.is_error, sent.payload
    assert sent.result_bytes <= budget.limit(), (sent.result_bytes, budget.limit())
    return sent.payload


def big_deal(account, properties: int):
    deal = DealFactory(account=account, title=wide(limits.DEAL_TITLE_MAX),
                       description=wide(limits.DEAL_DESCRIPTION_MAX))
    DealProperty.objects.bulk_create([
        DealProperty(deal=deal, name=f"{n:04d} " + wide(limits.PROPERTY_NAME_MAX - 5),
                     address=wide(limits.PROPERTY_ADDRESS_MAX), city=wide(limits.PROPERTY_CITY_MAX), state="TX",
                     zip="78701-1234", asset_type="multifamily", units=1000, square_footage=10**6, year_built=2001)
        for n in range(properties)
    ])
    return deal


def big_lender(programs: int):
    lender = LenderFactory(name=wide(200), city=wide(100), about=wide(20_000), website="https://" + "l" * 180 + ".com")
    LenderProgram.objects.bulk_create([
        LenderProgram(lender=lender, title=f"{n:04d} " + wide(195), loan_types=["permanent", "light_bridge"],
                      recourse_types=["non_recourse"], min_loan_amount=1_000_000, max_loan_amount=50_000_000,
                      positions=["senior", "mezzanine"], sponsor_states=sorted(limits_states()),
                      asset_types=["multifamily", "office", "retail"], max_ltv=75, min_dscr=Decimal("1.25"),
                      status="inactive" if n % 7 == 0 else "active")
        for n in range(programs)
    ])
    return lender


def limits_states() -> list[str]:
    from lev.enums import US_STATES

    return list(US_STATES)


# --- what is counted ------------------------------------------------------------------------------
def test_the_budget_counts_the_result_exactly_as_the_client_receives_it(call, account):
    deal = big_deal(account, properties=3)
    for name, arguments in [("get_deal", {"deal_id": deal.pk, "include": ["properties", "financials"]}),
                            ("list_deals", {}), ("get_deal", {"deal_id": 10**9})]:
        sent = call(name, arguments)
        assert budget.payload_size(sent.payload, is_error=sent.is_error) == sent.result_bytes, name
    # Both copies count: the result is a little over twice the payload's own JSON.
    payload_bytes = len(budget.dumps(sent.payload).encode())
    assert 2 * payload_bytes < sent.result_bytes < 3 * payload_bytes
    # Non-ASCII text goes out as UTF-8, not as 6-byte escapes.
    body = call("get_deal", {"deal_id": deal.pk}).body
    assert "東京タワー".encode() in body and b"\\u6771" not in body


def test_the_answer_is_utf8_whatever_the_sites_default_charset(call, account, settings):
    """The budget counts UTF-8 bytes, so /mcp answers in UTF-8 even where DEFAULT_CHARSET says otherwise
    (Django would encode a text body in the response's charset)."""
    deal = big_deal(account, properties=0)
    settings.DEFAULT_CHARSET = "latin-1"
    sent = call("get_deal", {"deal_id": deal.pk})
    assert "東京タワー".encode() in sent.body and budget.payload_size(sent.payload) == sent.result_bytes


def test_a_lone_surrogate_in_the_request_id_still_gets_an_answer(api_key):
    body = '{"jsonrpc":"2.0","id":"\\ud800","method":"tools/call","params":{"name":"list_deals","arguments":{}}}'
    response = Client().post("/mcp", body, content_type="application/json",
                             headers={**HEADERS, "Authorization": f"Bearer {api_key}"})
    assert response.status_code == 200 and json.loads(response.content)["id"] == "\ud800"


# --- get_deal and list_deal_properties ------------------------------------------------------------
def follow(call, tool: str, arguments: dict, key: str) -> tuple[list[dict], list[Sent]]:
    """Every item of a list tool from the given arguments on, following next_cursor."""
    items, pages = [], []
    while True:
        sent = call(tool, arguments)
        page = ok(sent)
        items += page[key]
        pages.append(sent)
        if not page["has_more"]:
            assert page["next_cursor"] is None
            return items, pages
        arguments = {k: v for k, v in arguments.items() if k != "cursor"} | {"cursor": page["next_cursor"]}


@pytest.mark.parametrize("max_bytes", [None, 25_000])
def test_a_deal_with_201_properties_fits_and_the_rest_is_reachable(call, account, settings, max_bytes):
    if max_bytes:
        settings.LEV_MCP_MAX_RESPONSE_BYTES = max_bytes  # forces pages cut short, not only get_deal's
    deal = big_deal(account, properties=201)
    expected = list(DealProperty.objects.filter(deal=deal).order_by("id").values_list("id", flat=True))

    got = ok(call("get_deal", {"deal_id": deal.pk, "include": ["properties", "financials"]}))
    shown = got["deal"]["properties"]
    assert got["deal"]["property_count"] == 201 and got["truncated"] is True
    assert len(shown) <= 20 and got["deal"]["financials"]["ltv"] is None
    assert got["deal"]["description"] == deal.description  # the deal itself is never trimmed
    rest = got["continue_with"]
    assert rest["tool"] == "list_deal_properties" and rest["remaining"] == 201 - len(shown)
    assert rest["arguments"]["deal_id"] == deal.pk

    more, pages = follow(call, "list_deal_properties", rest["arguments"], "properties")
    ids = [p["id"] for p in shown + more]
    assert ids == expected  # every property once, in order: no gap, no repeat
    # Whole properties: pages are shortened, never trimmed.
    assert all(len(p["address"]) == limits.PROPERTY_ADDRESS_MAX for p in shown + more)
    if max_bytes:
        assert len(shown) < 20 and any(page.payload.get("truncated") for page in pages)
        assert all(len(page.payload["properties"]) >= 1 for page in pages)


def test_a_small_deal_shows_all_its_properties_and_nothing_about_truncation(call, account):
    deal = big_deal(account, properties=3)
    got = ok(call("get_deal", {"deal_id": deal.pk, "include": ["properties"]}))
    assert len(got["deal"]["properties"]) == 3 and got["deal"]["property_count"] == 3
    assert "truncated" not in got and "continue_with" not in got
    assert "property_count" not in ok(call("get_deal", {"deal_id": deal.pk}))["deal"]
    page = ok(call("list_deal_properties", {"deal_id": deal.pk, "limit": 2}))
    assert len(page["properties"]) == 2 and page["total"] == 3 and page["has_more"] and "truncated" not in page


def test_create_deal_with_the_most_properties_fits_and_says_where_the_rest_is(call, settings):
    settings.LEV_MCP_MAX_RESPONSE_BYTES = 20_000
    properties = [{"name": f"{n:02d} " + wide(197), "address": wide(255), "city": wide(100), "state": "TX"}
                  for n in range(limits.PROPERTIES_PER_CREATE_MAX)]
    got = ok(call("create_deal", {"title": wide(200), "properties": properties}))
    shown, rest = got["deal"]["properties"], got["continue_with"]
    assert got["deal"]["property_count"] == limits.PROPERTIES_PER_CREATE_MAX and got["truncated"] is True
    more, _ = follow(call, "list_deal_properties", rest["arguments"], "properties")
    assert [p["name"][:2] for p in shown + more] == [f"{n:02d}" for n in range(limits.PROPERTIES_PER_CREATE_MAX)]


# --- get_lender and list_lender_programs ----------------------------------------------------------
@pytest.mark.parametrize("max_bytes", [None, 15_000])
def test_a_lender_with_many_programs_fits_and_the_rest_is_reachable(call, settings, max_bytes):
    if max_bytes:
        settings.LEV_MCP_MAX_RESPONSE_BYTES = max_bytes
    lender = big_lender(programs=130)
    expected = list(lender_selectors.lender_program_list(lender_id=lender.pk).values_list("id", flat=True))

    got = ok(call("get_lender", {"lender_id": lender.pk}))
    shown = got["lender"]["programs"]
    assert got["lender"]["programs_total"] == 130 and got["truncated"] is True and len(shown) <= 20
    assert got["compacted"] is True and len(got["lender"]["about"]) == 2000  # about is cut, and says so
    rest = got["continue_with"]
    assert rest == {"tool": "list_lender_programs", "arguments": rest["arguments"], "remaining": 130 - len(shown)}
    more, pages = follow(call, "list_lender_programs", rest["arguments"], "programs")
    assert [p["id"] for p in shown + more] == expected
    assert [p["status"] for p in shown + more][:3] == ["active"] * 3  # active first, as the detail orders them
    if max_bytes:
        assert any(page.payload.get("truncated") for page in pages)


def test_list_lender_programs_of_an_unknown_lender_is_not_found(call):
    sent = call("list_lender_programs", {"lender_id": 987654})
    assert sent.is_error and sent.payload["code"] == "NOT_FOUND"
    assert sent.payload["message"] == "Lender not found: 987654"


# --- get_placement and list_term_sheets -----------------------------------------------------------
def test_a_placement_with_many_quotes_fits_and_the_rest_is_reachable(call, account, settings):
    settings.LEV_MCP_MAX_RESPONSE_BYTES = 10_000
    deal = DealFactory(account=account)
    placement = place(deal, LenderFactory(name=wide(200)))
    quotes = [quote(placement, prepayment=wide(limits.PREPAYMENT_TEXT_MAX)).pk for _ in range(45)]

    got = ok(call("get_placement", {"placement_id": placement.pk}))
    shown = got["placement"]["term_sheets"]
    assert got["placement"]["term_sheet_count"] == 45 and got["truncated"] is True and len(shown) < 20
    rest = got["continue_with"]
    assert rest["tool"] == "list_term_sheets" and rest["arguments"]["placement_id"] == placement.pk
    more, _ = follow(call, "list_term_sheets", rest["arguments"], "term_sheets")
    assert [t["id"] for t in shown + more] == quotes


# --- pages cut short keep their cursors honest --------------------------------------------------------
def test_a_page_cut_short_continues_right_after_its_last_item(call, account, settings):
    settings.LEV_MCP_MAX_RESPONSE_BYTES = 9_000
    deal = big_deal(account, properties=25)
    first = ok(call("list_deal_properties", {"deal_id": deal.pk, "limit": 10}))
    kept = len(first["properties"])
    assert first["truncated"] is True and 1 <= kept < 10 and first["has_more"] is True
    assert decode_page_cursor(first["next_cursor"], 10) == (1, 10, kept)
    second = ok(call("list_deal_properties", {"deal_id": deal.pk, "cursor": first["next_cursor"]}))
    assert second["properties"][0]["id"] == first["properties"][-1]["id"] + 1


def forged(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


@pytest.mark.parametrize("data", [
    {"p": 1, "l": 10, "s": 10},  # skip = page size: no such place in a page
    {"p": 1, "l": 10, "s": -1}, {"p": 1, "l": 10, "s": True}, {"p": 1, "l": 10, "s": 1.5},
    {"p": 1, "l": 10, "x": 1}, {"p": 0, "l": 10, "s": 1},
])
def test_a_forged_cursor_is_a_validation_error(call, account, data):
    deal = DealFactory(account=account)
    sent = call("list_deal_properties", {"deal_id": deal.pk, "cursor": forged(data)})
    assert sent.is_error and sent.payload["code"] == "VALIDATION_ERROR"
    assert list(sent.payload["details"]["fields"]) == ["cursor"]


def test_a_cursor_past_the_end_of_a_shrunken_list_is_a_validation_error(call, account):
    deal = big_deal(account, properties=3)
    sent = call("list_deal_properties", {"deal_id": deal.pk, "cursor": encode_page_cursor(5, 2)})
    assert sent.is_error and sent.payload["code"] == "VALIDATION_ERROR"
    assert "points past the last page" in sent.payload["message"]


# --- every tool, at its worst realistic size ------------------------------------------------------
def test_every_tool_stays_within_the_budget_at_its_largest(call, account, eager_jobs):
    """Each tool with the largest data it can meet: the longest texts (in 2-4 byte UTF-8), the
    biggest pages, a deal with 201 properties and 100 quotes, a lender with 130 programs."""
    deal = big_deal(account, properties=201)
    DealFinancialsFactory(deal=deal)
    DealFactory.create_batch(110, account=account, title=wide(limits.DEAL_TITLE_MAX))
    big = big_lender(programs=130)
    lenders = []
    for n in range(110):
        lender = LenderFactory(name=f"{n:03d} " + wide(196), city=wide(100))
        LenderProgramFactory(lender=lender, title=wide(200), asset_types=["multifamily"], sponsor_states=[])
        LenderProgramFactory(lender=lender, title=wide(200), asset_types=["multifamily"], sponsor_states=["TX"])
        lenders.append(lender)
    search = ok(call("search_lenders_for_deal", {"deal_id": deal.pk}))
    placements = [place(deal, lender) for lender in lenders[:100]]
    for placement in placements[:50]:
        placement.notes = wide(limits.PLACEMENT_NOTES_MAX)
        placement.save(update_fields=["notes"])
    quotes = [quote(placement, prepayment=wide(limits.PREPAYMENT_TEXT_MAX), notes=wide(limits.TERM_SHEET_NOTES_MAX))
              for placement in placements[:50] for _ in range(2)]
    notes = wide(limits.PLACEMENT_NOTES_MAX)
    # The fullest outreach: a send of 100 emails (each lender's name at its longest), then the same placements
    # sent again through the tool, each of the 100 reported "already sent" with its name.
    Placement.objects.filter(pk__in=[p.pk for p in placements]).update(contact_email="pat@example.com")
    emailed = outreach_send(deal=deal, placements=placements, user=None).send
    # The fullest pipeline (every stage named at length) and a deal moved through it 100 times, each move
    # with the longest reason.
    for n in range(limits.STAGES_PER_ACCOUNT_MAX - Stage.objects.filter(account=account).count()):
        pipeline.stage_create(account=account, name=f"{n:02d} " + wide(limits.STAGE_NAME_MAX - 3))
    stages = list(Stage.objects.filter(account=account).exclude(pk=deal.stage_id))
    for n in range(100):
        pipeline.deal_move_stage(deal=deal, stage=stages[n % len(stages)], reason=wide(limits.STAGE_REASON_MAX))
    # The fullest company: the longest texts and 110 contacts, each with every text at its longest.
    company = Company.objects.create(account=account, kind="sponsor", name=wide(limits.COMPANY_NAME_MAX),
                                     location=wide(limits.COMPANY_LOCATION_MAX), notes=wide(limits.COMPANY_NOTES_MAX))
    contacts = Contact.objects.bulk_create(
        Contact(account=account, company=company, name=f"{n:03d} " + wide(limits.CONTACT_NAME_MAX - 4),
                title=wide(limits.CONTACT_TITLE_MAX), phone="+1 212 555 0100", notes=wide(limits.CONTACT_NOTES_MAX))
        for n in range(110))
    Company.objects.bulk_create(
        Company(account=account, kind="borrower", name=f"{n:03d} " + wide(196),
                location=wide(limits.COMPANY_LOCATION_MAX), notes=wide(limits.COMPANY_NOTES_MAX))
        for n in range(110))
    today = dt.date.today()
    MarketRate.objects.bulk_create(MarketRate(index="sofr", on=today - dt.timedelta(days=n), rate=Decimal("29.999"),
                                              source=wide(limits.MARKET_RATE_SOURCE_MAX)) for n in range(120))
    # The longest notes on the deal (list_notes, and the timeline with its 100 placements, quotes, moves).
    Note.objects.bulk_create(Note(account=account, deal=deal, kind="call", body=wide(limits.NOTE_BODY_MAX))
                             for _ in range(110))
    # The fullest documents: 110 with the longest names, and one with 300 versions, each with a reading
    # of as many problems as a reading keeps (FIGURES_PROBLEMS_MAX), at their longest.
    documents = Document.objects.bulk_create(
        Document(account=account, deal=deal, kind="photo", name=f"{n:03d} " + wide(limits.DOCUMENT_NAME_MAX - 4),
                 versions_count=1) for n in range(110))
    DocumentVersion.objects.bulk_create(
        DocumentVersion(document=d, number=1, file=f"x/{d.pk}.png", file_name=wide(limits.DOCUMENT_FILE_NAME_MAX),
                        size=10**9, sha256="0" * 64, content_type="image/png") for d in documents)
    reading = {"figures": {"units": 5000}, "layout": "yardi",
               "problems": [{"row": n, "message": wide(200)} for n in range(limits.FIGURES_PROBLEMS_MAX)]}
    DocumentVersion.objects.bulk_create(
        DocumentVersion(document=documents[0], number=n, file=f"x/{n}.xlsx", size=10**9, sha256="0" * 64,
                        file_name=wide(limits.DOCUMENT_FILE_NAME_MAX), content_type="text/csv", extracted=reading)
        for n in range(2, 301))
    Document.objects.filter(pk=documents[0].pk).update(versions_count=300)
    arguments = {
        "list_deal_documents": {"deal_id": deal.pk, "limit": 100},
        "get_deal_document": {"document_id": documents[0].pk},
        "get_market_rates": {"index": "sofr", "as_of": today.isoformat(),
                             "history_days": limits.MARKET_RATE_HISTORY_DAYS_MAX},
        "list_deals": {"limit": 100},
        "get_deal": {"deal_id": deal.pk, "include": ["properties", "financials"]},
        "list_deal_properties": {"deal_id": deal.pk, "limit": 100},
        "create_deal": {"title": wide(200), "description": wide(limits.DEAL_DESCRIPTION_MAX), "properties": [
            {"name": wide(200), "address": wide(255), "city": wide(100)} for _ in range(50)]},
        "update_deal": {"deal_id": deal.pk, "description": wide(limits.DEAL_DESCRIPTION_MAX)},
        "archive_deal": {"deal_id": DealFactory(account=account, description=wide(5000)).pk},
        "add_deal_property": {"deal_id": deal.pk, "name": wide(200), "address": wide(255), "city": wide(100),
                              "state": "TX", "asset_type": "multifamily"},
        "update_deal_property": {"deal_id": deal.pk, "property_id": deal.properties.first().pk, "name": wide(200)},
        "remove_deal_property": {"deal_id": deal.pk, "property_id": deal.properties.last().pk},
        "get_deal_financials": {"deal_id": deal.pk},
        "update_deal_financials": {"deal_id": deal.pk, "cash_out": 1},
        "search_lender_directory": {"limit": 100},
        "get_lender": {"lender_id": big.pk},
        "create_lender": {"name": "Own " + wide(limits.LENDER_NAME_MAX - 4), "city": wide(limits.LENDER_CITY_MAX),
                          "about": wide(limits.LENDER_ABOUT_MAX), "lender_types": ["bank", "debt_fund"]},
        "add_lender_program": {"lender_id": big.pk, "title": wide(limits.PROGRAM_TITLE_MAX),
                               "loan_types": ["permanent", "heavy_bridge"], "asset_types": ["multifamily", "office"],
                               "sponsor_states": ["TX", "OK", "LA"], "rate_type": "floating", "rate_index": "sofr",
                               "spread_min_bps": 250, "spread_max_bps": 400},
        "list_lender_programs": {"lender_id": big.pk, "limit": 100},
        "list_lender_searches": {"deal_id": deal.pk, "limit": 100},
        "search_lenders_for_deal": {"deal_id": deal.pk},
        "get_lender_search_results": {"search_id": search["search_id"], "limit": 100},
        "create_placements": {"deal_id": deal.pk, "lender_ids": [x.pk for x in lenders[100:]] + [big.pk],
                              "notes": notes},
        "list_placements": {"deal_id": deal.pk, "limit": 100},
        "get_placement": {"placement_id": placements[0].pk},
        "update_placement": {"placement_id": placements[1].pk, "notes": notes},
        "add_term_sheet": {"placement_id": placements[2].pk, **FIXED, "prepayment": wide(500), "notes": wide(2000)},
        "list_term_sheets": {"deal_id": deal.pk, "limit": 100},
        "compare_term_sheets": {"deal_id": deal.pk, "limit": 100},
        "select_winning_term_sheet": {"term_sheet_id": quotes[0].pk},
        "remove_term_sheet": {"term_sheet_id": quotes[-1].pk},
        "get_account": {},
        "list_companies": {"limit": 100},
        "get_company": {"company_id": company.pk},
        "create_company": {"kind": "sponsor", "name": wide(limits.COMPANY_NAME_MAX),
                           "location": wide(limits.COMPANY_LOCATION_MAX), "notes": wide(limits.COMPANY_NOTES_MAX)},
        "update_company": {"company_id": company.pk, "notes": wide(limits.COMPANY_NOTES_MAX)},
        "list_contacts": {"company_id": company.pk, "limit": 100},
        "add_contact": {"company_id": company.pk, "name": wide(limits.CONTACT_NAME_MAX),
                        "title": wide(limits.CONTACT_TITLE_MAX), "notes": wide(limits.CONTACT_NOTES_MAX)},
        "update_contact": {"contact_id": contacts[0].pk, "notes": wide(limits.CONTACT_NOTES_MAX)},
        "get_pipeline": {},
        "move_deal_stage": {"deal_id": deal.pk, "stage": stages[-1].name, "reason": wide(limits.STAGE_REASON_MAX)},
        "get_deal_stage_history": {"deal_id": deal.pk, "limit": 100},
        "summarize_deal": {"deal_id": deal.pk, "detail": "memo"},
        "add_note": {"deal_id": deal.pk, "kind": "meeting", "body": wide(limits.NOTE_BODY_MAX)},
        "list_notes": {"deal_id": deal.pk, "limit": 100},
        "get_deal_timeline": {"deal_id": deal.pk, "limit": 100},
        "get_import": {"import_id": refused_import(account).pk},
        "list_imports": {"limit": 100},
        "send_placements_email": {"deal_id": deal.pk, "placement_ids": [p.pk for p in placements]},
        "get_outreach_progress": {"send_id": emailed.pk},
    }
    assert set(arguments) == set(TOOLS), f"add {sorted(set(TOOLS) - set(arguments))} to this table"
    sizes = {}
    for name, args in arguments.items():
        sent = call(name, args)
        ok(sent)
        sizes[name] = sent.result_bytes
    # The worst cases are real: without trimming several would be far over.
    assert max(sizes.values()) > budget.limit() * 0.6, sizes


def refused_import(account):
    """The fullest history import: 200 problems and names to map, each at its longest, and 99 more imports."""
    job = HistoryImport.objects.create(
        account=account, file_name=wide(255), status="refused", message=wide(300),
        problems=[{"line": n, "column": wide(40), "message": wide(400)} for n in range(200)],
        summary={"kind": "csv", "rows": 250_000, "problems_total": 250_000, "new_lenders": [wide(200)] * 20,
                 "unresolved": [{"name": wide(200), "first_line": n, "rows": 9, "candidates": [
                     {"id": n, "name": wide(200)}] * 3} for n in range(200)]},
        plan=[wide(300)] * 500)
    HistoryImport.objects.bulk_create(HistoryImport(account=account, file_name=wide(255), status="failed",
                                                    message=wide(300)) for _ in range(99))
    return job


# --- the final guard ------------------------------------------------------------------------------
def test_an_answer_still_over_budget_is_an_internal_error_never_cut_json(call, account, settings, caplog):
    deal = DealFactory(account=account, description=wide(limits.DEAL_DESCRIPTION_MAX))
    settings.LEV_MCP_MAX_RESPONSE_BYTES = 4_000  # below the deal itself: get_deal has nothing to trim
    sent = call("get_deal", {"deal_id": deal.pk})
    assert sent.is_error
    assert sent.payload["code"] == "INTERNAL_ERROR" and sent.payload["errorCategory"] == "internal"
    assert sent.payload["isRetryable"] is False
    assert sent.payload["message"] == "Internal error: the answer of get_deal was too large to send."
    assert sent.payload["details"] == {"tool": "get_deal"} and sent.result_bytes <= 4_000  # no sizes, no budget
    assert any(r.levelname == "ERROR" and "over the 4000 byte budget" in r.getMessage() for r in caplog.records)


def test_an_error_naming_thousands_of_arguments_is_shortened_not_dropped(call, account):
    arguments = {f"unknown_argument_{n:05d}_" + "x" * 40: 1 for n in range(3000)}
    sent = call("list_deals", arguments)
    assert sent.is_error and sent.payload["code"] == "VALIDATION_ERROR"
    assert sent.result_bytes <= budget.limit()
    details = sent.payload["details"]
    assert details["truncated"] is True and details["omitted_fields"] == 3000 - len(details["fields"]) > 0
    assert sent.payload["message"].startswith("Validation failed:")


# --- REST: the lists behind the tools ---------------------------------------------------------------
def test_rest_pages_a_deals_properties_and_a_lenders_programs(api, account):
    deal = big_deal(account, properties=25)
    page = api.get(f"/api/v1/deals/{deal.pk}/properties/", {"page_size": 10, "page": 3}).json()
    assert page["count"] == 25 and len(page["results"]) == 5 and page["next"] is None
    assert api.get(f"/api/v1/deals/{deal.pk}/properties/", {"limit": 3}).status_code == 400
    lender = big_lender(programs=12)
    body = api.get(f"/api/v1/lenders/{lender.pk}/programs/").json()
    detail = api.get(f"/api/v1/lenders/{lender.pk}/").json()
    assert body["count"] == 12 and [p["id"] for p in body["results"]] == [p["id"] for p in detail["programs"]]
    missing = api.get("/api/v1/lenders/987654/programs/")
    assert missing.status_code == 404 and missing.json()["message"] == "Lender not found: 987654"
