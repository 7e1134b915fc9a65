"""Fixtures of the fuzz suites: a small world of data, a raw JSON-RPC client of /mcp, the counts."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
import requests
from django.utils import timezone

from lev.accounts.services import api_key_create
from mcp_tools import resilience
from tests.deals.fixtures import eager_jobs
from tests.factories import (
    AccountFactory,
    DealFactory,
    DealFinancialsFactory,
    DealPropertyFactory,
    LenderProgramFactory,
    MembershipFactory,
    UserFactory,
)
from tests.fuzz.stats import STATS

__all__ = ["eager_jobs"]

# Scales every fuzz budget (LEV_FUZZ_SCALE=0.1 for a quick look, 3 for a long hunt).
SCALE = float(os.environ.get("LEV_FUZZ_SCALE", "1"))
PROTOCOL_VERSION = "2025-06-18"


def budget(examples: int) -> int:
    return max(1, int(examples * SCALE))


def pytest_terminal_summary(terminalreporter) -> None:
    if STATS.mcp_calls or STATS.api_calls:
        terminalreporter.section("fuzz counts")
        for line in STATS.lines():
            terminalreporter.write_line(line)


MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}}


class RawMcp:
    """POSTs raw bodies to /mcp over real HTTP (the live server) and counts every call."""

    def __init__(self, base_url: str, api_key: str):
        self.url = base_url.rstrip("/") + "/mcp"
        self.headers = {
            "Authorization": f"Bearer {api_key}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": PROTOCOL_VERSION,
            # A fresh connection per call (no Session): on a kept-alive connection Django's test
            # server answers ~60 ms late (Nagle meets delayed ACK), and its thread would hold a
            # database connection past the test.
            "Connection": "close",
        }
        self._next_id = 0

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def post(self, body: bytes | str, headers: dict[str, str] | None = None, path: str | None = None
             ) -> tuple[int, str]:
        """POST to /mcp, or to `path` (an address under it such as /mcp/x/deals, sent as written)."""
        data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
        url = self.url if path is None else self.url.removesuffix("/mcp") + path
        response = requests.post(url, data=data, headers={**self.headers, **(headers or {})}, timeout=60)
        STATS.mcp_calls += 1
        if response.status_code >= 500:
            STATS.mcp_5xx += 1
        return response.status_code, response.text

    def call(self, name: str, arguments: Any) -> tuple[int, str, str, int]:
        """(status, response text, body sent, request id) of one tools/call."""
        request_id = self.next_id()
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        headers = None
        if request_id % 3 == 0:
            # Every third call in MCP 2026-07-28's envelope: the error contract, the budget, scopes and
            # the breaker must answer the same in both eras.
            params["_meta"] = MODERN_META
            headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
        status, text = self.post(body, headers)
        return status, text, body, request_id

    def tools(self) -> list[dict[str, Any]]:
        status, text = self.post(json.dumps({"jsonrpc": "2.0", "id": self.next_id(), "method": "tools/list"}))
        assert status == 200, text
        return json.loads(text)["result"]["tools"]


@dataclass
class World:
    """The data the fuzzers aim at: ids that exist, so valid calls get past NOT_FOUND."""

    api_key: str
    other_api_key: str
    deal_ids: list[int]
    property_ids: list[int]
    lender_ids: list[int]
    search_ids: list[int]
    placement_ids: list[int] = dataclasses.field(default_factory=list)
    term_sheet_ids: list[int] = dataclasses.field(default_factory=list)
    company_ids: list[int] = dataclasses.field(default_factory=list)
    contact_ids: list[int] = dataclasses.field(default_factory=list)
    stage_ids: list[int] = dataclasses.field(default_factory=list)
    note_ids: list[int] = dataclasses.field(default_factory=list)
    # The account's own programs (issue 38): the first on the world's first lender (a directory lender).
    program_ids: list[int] = dataclasses.field(default_factory=list)
    # A history import of the account (issue 38), refused: its pages and report exist, its file is not kept.
    import_ids: list[int] = dataclasses.field(default_factory=list)
    # A document of the full deal (issue 41): a rent roll with its file, so its figures can be read.
    document_ids: list[int] = dataclasses.field(default_factory=list)
    # Outreach (issue 41): a send of the full deal and the package link of its sent placement.
    send_ids: list[int] = dataclasses.field(default_factory=list)
    package_ids: list[int] = dataclasses.field(default_factory=list)


def make_world(account_slug: str = "fuzz") -> World:
    account = AccountFactory(slug=account_slug, name="Fuzz Capital")
    # The account's admin (owner role): the pipeline's stage changes are theirs alone, and the fuzzers
    # reach every endpoint's validation.
    user = MembershipFactory(account=account, user=UserFactory(username=f"{account_slug}-user"),
                             role="owner").user
    _key, raw = api_key_create(user=user, account=account, name="fuzz")
    other = AccountFactory(slug=f"{account_slug}-other", name="Other Capital")
    other_user = MembershipFactory(account=other, user=UserFactory(username=f"{account_slug}-other")).user
    _key, other_raw = api_key_create(user=other_user, account=other, name="fuzz")

    plain = DealFactory(account=account, title="Plain deal")
    full = DealFactory(account=account, title="Full deal with financials", loan_amount=Decimal("12000000"))
    prop = DealPropertyFactory(deal=full, state="TX", asset_type="multifamily")
    DealFinancialsFactory(deal=full)
    archived = DealFactory(account=account, title="Archived deal", archived=True)
    programs = [LenderProgramFactory(sponsor_states=states) for states in ([], ["TX"], ["CA", "NY"])]
    from deals.searches import services as lender_services

    search, _created = lender_services.lender_search_start(deal=full, user=user)
    # Placements and quotes (issue #13): a sent one with two quotes, a draft one.
    from deals.placements import services as placement_services

    sent, draft = placement_services.placements_create(deal=full, lender_ids=[programs[0].lender_id],
                                                       send=True).created + placement_services.placements_create(
        deal=full, lender_ids=[programs[1].lender_id]).created
    quote = {"loan_amount": Decimal("9000000"), "rate_type": "fixed", "fixed_rate": Decimal("6.25")}
    term_sheets = [placement_services.term_sheet_add(placement=sent, data=quote) for _ in range(2)]
    # Companies and contacts (issue 22): a sponsor with a person, and a contact at a placed lender.
    from deals.companies import services as company_services

    sponsor = company_services.company_create(account=account, data={"kind": "sponsor", "name": "Fuzz Sponsor"})
    person = company_services.contact_create(account=account, company=sponsor, data={"name": "Fuzz Person"})
    banker = company_services.contact_create(account=account, lender=sent.lender, data={"name": "Fuzz Banker"})
    # Notes (issue: notes and the timeline): a call on the placement, a meeting on the deal.
    from deals.notes import services as note_services

    notes = [note_services.note_create(account=account, author=user, target=target, kind=kind, body="Fuzz note")
             for target, kind in (({"placement": sent}, "call"), ({"deal": full}, "meeting"))]
    # The account's own terms with the first lender, so a program's PATCH reaches its validation.
    own_terms = LenderProgramFactory(lender=programs[0].lender, account=account, title="Fuzz own terms")
    # A deal's documents and outreach (issue 41): a rent roll kept with the full deal, a send and a package.
    from django.core.files.base import ContentFile

    from deals.documents.services import document_add
    from deals.history.models import HistoryImport
    from deals.outreach.models import OutreachSend, PackageLink

    rent_roll = document_add(deal=full, user=user, kind="rent_roll", upload=ContentFile(
        b"Unit,Tenant,Rent\n101,Smith,1450\n102,Vacant,0\n", name="rent roll.csv"))
    send = OutreachSend.objects.create(account=account, deal=full, kind="teaser", created_by=user)
    package = PackageLink.objects.create(account=account, placement=sent, token_hash="0" * 64,
                                         expires_at=timezone.now() + dt.timedelta(days=30), created_by=user)
    return World(
        api_key=raw, other_api_key=other_raw,
        deal_ids=[plain.id, full.id, archived.id],
        property_ids=[prop.id],
        lender_ids=[p.lender_id for p in programs],
        search_ids=[search.id],
        placement_ids=[sent.id, draft.id],
        term_sheet_ids=[t.id for t in term_sheets],
        company_ids=[sponsor.id],
        contact_ids=[person.id, banker.id],
        stage_ids=list(account.stages.order_by("position").values_list("id", flat=True)),
        note_ids=[n.id for n in notes],
        program_ids=[own_terms.id],
        import_ids=[HistoryImport.objects.create(account=account, created_by=user, file_name="history.csv",
                                                 status=HistoryImport.Status.REFUSED).id],
        document_ids=[rent_roll.document_id], send_ids=[send.id], package_ids=[package.id],
    )


@pytest.fixture
def world(transactional_db, eager_jobs) -> World:
    # Jobs run in-process: the fuzzers never leave ranking jobs queued in a shared broker.
    return make_world()


@pytest.fixture
def raw_mcp(live_server, world) -> RawMcp:
    resilience.reset_breaker()
    return RawMcp(live_server.url, world.api_key)


def _program_pair_rules() -> tuple[str, ...]:
    from lenders import program_terms, services

    return tuple(f"Validation failed: {field} {message}" for field, message in (
        *((high, f"Must be at least the {words}.") for _low, high, words in program_terms.RANGES),
        ("max_loan_amount", "Must be at least the min loan amount."),
        *((name, program_terms.LEFT_OUT_FIXED) for name in ("spread_min_bps", "spread_max_bps", "rate_index")),
        *((name, program_terms.LEFT_OUT_FLOATING) for name in ("fixed_rate_min", "fixed_rate_max")),
        ("rate_index", program_terms.INDEX_NEEDED),
        *services.ACTIVE_NEEDS.items()))


# A lender program's rules over two fields or over the program as it will be saved (lenders.program_terms'
# pairs, the loan range, what an active program states): schema-valid arguments rightly refused, as the
# tool's and the route's descriptions say (issue 38).
PROGRAM_PAIR_RULES = _program_pair_rules()
