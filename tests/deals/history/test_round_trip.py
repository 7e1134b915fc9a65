"""The round trip with the team's own lenders (issue 38): an account's history exported and imported into
an empty account gives the same deals, placements (outcomes and dates), quotes' terms AND the same own
lenders and programs, for CSV (with its own lenders companion) and XLSX (its second sheet); the own
lenders reach the other account through the file alone, and a name the directory holds is refused."""

from __future__ import annotations

import csv
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from openpyxl import load_workbook

from deals.history.own import OWN_SHEET
from deals.models import Deal, DealFinancials, DealProperty, Placement, TermSheet
from deals.placements import services as placements
from lenders.models import Lender, LenderProgram
from lenders.services import lender_create, program_create
from tests.deals.history.helpers import DEAL_B, HEADER, counts, refused, rows_ab, run_import, write_csv
from tests.factories import AccountFactory, LenderFactory

pytestmark = pytest.mark.django_db

OWN_HEADER = [*HEADER, "lender_own"]
HARBOR = "Harbor Street Capital"
PROGRAM_FIELDS = ("status", "loan_types", "recourse_types", "min_loan_amount", "max_loan_amount",
                  "capital_source_type", "positions", "sponsor_states", "asset_types", "max_ltv", "min_dscr",
                  "rate_type", "rate_index", "spread_min_bps", "spread_max_bps", "fixed_rate_min", "fixed_rate_max",
                  "term_months_min", "term_months_max", "amortization_years", "interest_only_months",
                  "min_debt_yield")


def _history(account) -> dict:
    """The account's history keyed as the file keys it: deals by external id, placements by (deal, lender
    name, own), without ids of this account."""
    deals = {}
    for deal in Deal.objects.filter(account=account).select_related("stage"):
        key = deal.external_id or f"lev-{deal.pk}"
        deals[key] = (deal.title, deal.loan_amount, deal.loan_type, deal.transaction_type, deal.business_plan,
                      deal.estimated_close_date, deal.stage.name,
                      DealProperty.objects.filter(deal=deal).values("name", "state", "asset_type", "units",
                                                                    "square_footage").first(),
                      DealFinancials.objects.filter(deal=deal).values_list("in_place_noi", "estimated_value").first()
                      or (None, None), deal.description, deal.archived)
    placed = {}
    for p in Placement.objects.filter(deal__account=account).select_related("deal", "lender"):
        key = (p.deal.external_id or f"lev-{p.deal_id}", p.lender.name, p.lender.account_id is not None)
        quotes = list(TermSheet.objects.filter(placement=p, deleted_at=None).values(
            "loan_amount", "rate_type", "fixed_rate", "rate_index", "spread_bps", "term_months", "amortization_months",
            "max_ltv", "min_dscr", "origination_fee_percent", "exit_fee_percent", "winning"))
        days = tuple(None if moment is None else moment.date() for moment in (p.sent_at, p.first_response_at,
                                                                              p.decided_at))
        placed[key] = (p.status, days, p.decline_reason, quotes)
    return {"deals": deals, "placements": placed}


def _own(account) -> dict:
    lenders = {lender.name: (lender.website, lender.city, lender.state, lender.about, lender.lender_types)
               for lender in Lender.objects.filter(account=account)}
    programs = {(program.lender.name, program.lender.account_id is not None, program.title):
                tuple(getattr(program, name) for name in PROGRAM_FIELDS)
                for program in LenderProgram.objects.filter(account=account).select_related("lender")}
    return {"lenders": lenders, "programs": programs}


@pytest.fixture
def directory():
    return {name: LenderFactory(name=name) for name in ("JPMorgan Chase Bank, N.A.", "Wells Fargo Bank",
                                                         "Arbor Realty Trust")}


@pytest.fixture
def source(tmp_path, directory):
    account = AccountFactory()
    run_import(write_csv(tmp_path / "history.csv", rows_ab()), account)
    harbor = lender_create(account=account, data={
        "name": HARBOR, "website": "https://harbor.example", "city": "Boston", "state": "MA",
        "about": "=cmd|' /C calc'!A0 (a formula-like note)", "lender_types": ["debt_fund", "private"]})
    lender_create(account=account, data={"name": "Quiet Bay Lending Partners"})  # never placed, no program
    program_create(account=account, lender=harbor, data={
        "title": "Harbor bridge", "loan_types": ["light_bridge", "heavy_bridge"], "asset_types": ["multifamily"],
        "positions": ["senior"], "sponsor_states": ["MA", "NY"], "min_loan_amount": Decimal("2000000"),
        "max_loan_amount": Decimal("40000000"), "max_ltv": Decimal("75"), "min_dscr": Decimal("1.15"),
        "rate_type": "floating", "rate_index": "sofr", "spread_min_bps": 300, "spread_max_bps": 450,
        "term_months_min": 24, "term_months_max": 36, "interest_only_months": 24})
    program_create(account=account, lender=directory["Wells Fargo Bank"], data={
        "title": "Our Wells agency desk", "status": "inactive", "loan_types": ["permanent"],
        "fixed_rate_min": Decimal("5.5"), "fixed_rate_max": Decimal("6.25"), "rate_type": "fixed"})
    # A deal filed away with its description: both travel (the demo's past deals are such deals).
    Deal.objects.filter(account=account, external_id="CRM-2").update(archived=True, description="Lost to a cash buyer.")
    # A placement with the own lender recorded in the product, declined; another imported, quoted.
    deal = Deal.objects.get(account=account, external_id="CRM-1")
    batch = placements.placements_create(deal=deal, lender_ids=[harbor.pk], send=True)
    placements.placement_update(placement=batch.created[0], data={"status": "declined"})
    run_import(write_csv(tmp_path / "own.csv", [
        {**DEAL_B, "deal_external_id": "CRM-3", "deal_title": "Pine Ridge Flex", "lender": "harbor street capital",
         "lender_own": "yes", "sent_on": "2025-03-02",
         "answered_on": "2025-03-05", "outcome": "quoted", "quote_amount": "$7.9M", "rate_index": "SOFR",
         "spread_bps": "325", "term_months": "36"}], header=OWN_HEADER), account)
    return account


@pytest.fixture
def neighbour():
    """Another account with its own lender of the same name: never read nor changed by the round trip."""
    account = AccountFactory()
    lender_create(account=account, data={"name": HARBOR, "city": "Miami"})
    return account


def _export(account, path) -> str:
    out = StringIO()
    call_command("export_history", "--account", account.slug, "--output", str(path), stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("suffix", [".csv", ".xlsx"])
def test_the_round_trip_carries_the_own_lenders_and_programs(tmp_path, source, neighbour, suffix):
    path = tmp_path / f"export{suffix}"
    said = _export(source, path)
    assert "3 deal(s), 7 row(s)" in said
    before = _history(source)
    assert (("CRM-3", HARBOR, True) in before["placements"] and ("CRM-1", HARBOR, True) in before["placements"])
    args = ("--own-lenders", str(tmp_path / "export.own-lenders.csv")) if suffix == ".csv" else ()
    if suffix == ".csv":
        assert "import them with --own-lenders" in said
    empty = AccountFactory()

    out = run_import(path, empty, *args)

    assert f"Added as lenders of the account's own: {HARBOR}, Quiet Bay Lending Partners." in out
    assert "Added 2 program(s) of the account's own." in out
    after = _history(empty)
    assert after == before
    assert len(after["placements"]) == 7 and after["placements"][("CRM-3", HARBOR, True)][3][0]["spread_bps"] == 325
    assert _own(empty) == _own(source)
    assert len(_own(empty)["lenders"]) == 2 and len(_own(empty)["programs"]) == 2
    # Another account's own lender of the same name was neither used nor changed.
    assert Lender.objects.filter(account=neighbour).values_list("name", "city").get() == (HARBOR, "Miami")
    harbor = Lender.objects.get(account=empty, name=HARBOR)
    assert set(Placement.objects.filter(lender__name=HARBOR, deal__account=empty).values_list("lender", flat=True)) == {
        harbor.pk}
    # Importing the file again adds nothing, lenders and programs included.
    again = run_import(path, empty, *args)
    assert "Added as lenders" not in again and "program(s) of the account's own" not in again
    assert counts(empty) == counts(source) and _own(empty) == _own(source)


def test_an_xlsx_export_has_the_own_lenders_sheet_and_marks_own_rows(tmp_path, source, neighbour):
    path = tmp_path / "export.xlsx"
    _export(source, path)
    workbook = load_workbook(path, read_only=True)
    assert workbook.sheetnames == ["History", OWN_SHEET]
    history = list(workbook["History"].iter_rows(values_only=True))
    header = list(history[0])
    own_rows = [dict(zip(header, row, strict=True)) for row in history[1:] if row[header.index("lender")] == HARBOR]
    # An own lender's rows say so and carry no id (the source account's id means nothing elsewhere).
    assert len(own_rows) == 2 and all(r["lender_own"] == "yes" and r["lender_id"] is None for r in own_rows)
    directory_rows = [dict(zip(header, row, strict=True)) for row in history[1:]
                      if row[header.index("lender")] not in (HARBOR, None)]
    assert directory_rows and all(r["lender_own"] is None and r["lender_id"] for r in directory_rows)
    own = list(workbook[OWN_SHEET].iter_rows(values_only=True))
    names = [row[0] for row in own[1:]]
    assert sorted(names) == sorted([HARBOR, "Quiet Bay Lending Partners", "Wells Fargo Bank"])
    cells = [c for row in own for c in row if isinstance(c, str)]
    # Formula-like text in the new sheet is inert too.
    assert not any(c.startswith(("=", "+", "-", "@")) for c in cells)
    assert "'=cmd|' /C calc'!A0 (a formula-like note)" in cells
    # The neighbour's own lender of the same name is not in the source's export.
    assert "Miami" not in cells


def test_a_csv_export_writes_the_companion_only_for_an_account_with_own_lenders(tmp_path, source, directory):
    _export(source, tmp_path / "a.csv")
    with (tmp_path / "a.own-lenders.csv").open(encoding="utf-8-sig") as file:
        rows = list(csv.DictReader(file))
    assert {r["lender"] for r in rows} == {HARBOR, "Quiet Bay Lending Partners", "Wells Fargo Bank"}
    wells = next(r for r in rows if r["lender"] == "Wells Fargo Bank")
    assert (wells["lender_own"], wells["lender_id"], wells["program_status"]) == (
        "", str(directory["Wells Fargo Bank"].pk), "inactive")
    plain = AccountFactory()
    said = _export(plain, tmp_path / "b.csv")
    assert not (tmp_path / "b.own-lenders.csv").exists() and "own lenders" not in said


def test_an_own_lender_named_as_a_directory_lender_is_refused_and_nothing_is_written(tmp_path, directory):
    account = AccountFactory()
    path = write_csv(tmp_path / "h.csv", [
        {**DEAL_B, "lender": "Arbor Realty Trust", "lender_own": "yes", "sent_on": "2025-03-01",
         "outcome": "no answer"},
        {**DEAL_B, "deal_external_id": "CRM-9", "lender": "Brand New Lending", "lender_own": "yes",
         "sent_on": "2025-03-01", "outcome": "no answer"}], header=OWN_HEADER)

    text = refused(path, account)

    arbor = directory["Arbor Realty Trust"]
    assert (f'line 2, column lender: "Arbor Realty Trust" is marked as your own lender, but the directory has a '
            f'lender of this name (id {arbor.pk})') in text
    assert f'--map "Arbor Realty Trust={arbor.pk}"' in text
    # All or nothing: the other row's new own lender was rolled back with the refusal.
    assert counts(account) == (0, 0, 0) and not Lender.objects.filter(account=account).exists()


def test_a_dry_run_names_the_own_lenders_it_would_add_and_adds_none(tmp_path, directory):
    account = AccountFactory()
    path = write_csv(tmp_path / "h.csv", [
        {**DEAL_B, "lender": "Brand New Lending", "lender_own": "yes", "sent_on": "2025-03-01",
         "outcome": "no answer"}], header=OWN_HEADER)

    out = run_import(path, account, "--dry-run")

    assert "Would add as lenders of the account's own: Brand New Lending." in out
    assert "new lender of your own" in out
    assert not Lender.objects.filter(account=account).exists() and counts(account) == (0, 0, 0)


def test_a_bad_own_lenders_table_is_refused_naming_line_and_column(tmp_path, directory):
    account = AccountFactory()
    history = write_csv(tmp_path / "h.csv", [{**DEAL_B}])
    own = tmp_path / "own.csv"
    own.write_text("lender,lender_own,website,program_title,max_ltv,loan_types,asset_types\r\n"
                   "Brand New Lending,yes,not a web address,,,,\r\n"
                   "Wells Fargo Bank,,,Desk,0.75,permanent,multifamily\r\n", encoding="utf-8")

    text = refused(history, account, "--own-lenders", str(own))

    assert "line 2, column website: must be a web address" in text
    assert "line 3, column max_ltv:" in text and "did you mean 75" in text
    assert not Lender.objects.filter(account=account).exists()
    assert not LenderProgram.objects.filter(account=account).exists() and counts(account) == (0, 0, 0)
