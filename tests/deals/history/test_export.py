"""manage.py export_history: the round trip (export an account, import the file into an empty account:
the same deals, placements, outcomes and quotes), CSV and XLSX alike; formula cells written inert."""

from __future__ import annotations

import csv
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from openpyxl import load_workbook

from deals.models import Deal, DealFinancials, DealProperty, Placement, TermSheet
from deals.placements import services as placements
from tests.deals.history.helpers import rows_ab, run_import, write_csv
from tests.factories import AccountFactory, DealFactory, LenderFactory

pytestmark = pytest.mark.django_db


def _history(account) -> dict:
    """The account's history, keyed as the file keys it, without ids of this account."""
    deals = {}
    for deal in Deal.objects.filter(account=account).select_related("stage"):
        key = deal.external_id or f"lev-{deal.pk}"
        prop = DealProperty.objects.filter(deal=deal).values("name", "state", "asset_type", "units",
                                                             "square_footage").first()
        deals[key] = (deal.title, deal.loan_amount, deal.loan_type, deal.transaction_type, deal.business_plan,
                      deal.estimated_close_date, deal.stage.name, prop,
                      DealFinancials.objects.filter(deal=deal).values_list("in_place_noi", "estimated_value").first()
                      or (None, None))
    placed = {}
    for p in Placement.objects.filter(deal__account=account).select_related("deal"):
        key = p.deal.external_id or f"lev-{p.deal_id}"
        quotes = list(TermSheet.objects.filter(placement=p, deleted_at=None).values(
            "loan_amount", "rate_type", "fixed_rate", "rate_index", "spread_bps", "term_months", "amortization_months",
            "max_ltv", "min_dscr", "origination_fee_percent", "exit_fee_percent", "winning", "received_at"))
        placed[(key, p.lender_id)] = (p.status, p.sent_at, p.first_response_at, p.decided_at, p.decline_reason, quotes)
    return {"deals": deals, "placements": placed}


@pytest.fixture
def source(tmp_path):
    for name in ("JPMorgan Chase Bank, N.A.", "Wells Fargo Bank", "Arbor Realty Trust"):
        LenderFactory(name=name)
    account = AccountFactory()
    run_import(write_csv(tmp_path / "history.csv", rows_ab()), account)
    # A deal made in the product (no external id, never placed), with a title a spreadsheet would run.
    DealFactory(account=account, title="=HYPERLINK(\"http://x.example\",\"click\")", loan_amount=Decimal("2500000"))
    # A placement recorded through the product's own services, quoted and declined later.
    deal = Deal.objects.get(account=account, external_id="CRM-2")
    batch = placements.placements_create(deal=deal, lender_ids=[LenderFactory(name="Greystone").pk], send=True)
    placements.placement_update(placement=batch.created[0], data={"status": "declined"})
    return account


@pytest.mark.parametrize("suffix", [".csv", ".xlsx"])
def test_export_then_import_into_an_empty_account_gives_the_same_history(tmp_path, source, suffix):
    path = tmp_path / f"export{suffix}"
    out = StringIO()
    call_command("export_history", "--account", source.slug, "--output", str(path), stdout=out)
    assert "3 deal(s), 7 row(s)" in out.getvalue()
    empty = AccountFactory()

    run_import(path, empty)

    before, after = _history(source), _history(empty)
    assert after["deals"] == before["deals"] and len(after["deals"]) == 3
    assert after["placements"].keys() == before["placements"].keys() and len(after["placements"]) == 6
    for key, (status, sent, answered, decided, reason, quotes) in before["placements"].items():
        got = after["placements"][key]
        # Dates travel as days (the file's unit): the same day, noon.
        assert (got[0], got[4]) == (status, reason)
        for mine, theirs in zip((sent, answered, decided), got[1:4], strict=True):
            assert (mine is None) == (theirs is None) and (mine is None or mine.date() == theirs.date())
        strip = [{k: v for k, v in q.items() if k != "received_at"} for q in quotes]
        assert strip == [{k: v for k, v in q.items() if k != "received_at"} for q in got[5]]
    # And importing the export into the account it came from creates nothing.
    run_import(path, source)
    assert len(_history(source)["deals"]) == 3


def test_a_formula_cell_is_exported_inert(tmp_path, source):
    csv_path, xlsx_path = tmp_path / "e.csv", tmp_path / "e.xlsx"
    call_command("export_history", "--account", source.slug, "--output", str(csv_path), stdout=StringIO())
    call_command("export_history", "--account", source.slug, "--output", str(xlsx_path), stdout=StringIO())
    with csv_path.open(encoding="utf-8-sig") as file:
        titles = [row["deal_title"] for row in csv.DictReader(file)]
    assert "'=HYPERLINK(\"http://x.example\",\"click\")" in titles
    sheet = load_workbook(xlsx_path, read_only=True).worksheets[0]
    cells = [c for row in sheet.iter_rows(values_only=True) for c in row if isinstance(c, str)]
    assert not any(c.startswith(("=", "+", "-", "@")) for c in cells)
    assert "'=HYPERLINK(\"http://x.example\",\"click\")" in cells


def test_export_refuses_an_unknown_account_or_suffix(tmp_path):
    with pytest.raises(CommandError, match="No account has the slug 'nobody'"):
        call_command("export_history", "--account", "nobody", "--output", str(tmp_path / "x.csv"))
    account = AccountFactory()
    with pytest.raises(CommandError, match=r"must end in \.csv or \.xlsx"):
        call_command("export_history", "--account", account.slug, "--output", str(tmp_path / "x.json"))


def test_a_selection_exports_those_deals_of_the_account_only(tmp_path, source):
    from deals.history.export import history_export

    other = AccountFactory()
    stranger = DealFactory(account=other, title="Not yours", external_id="X-1")
    chosen = Deal.objects.get(account=source, external_id="CRM-1")
    path = tmp_path / "some.csv"

    stats = history_export(account=source, path=path, deals=[chosen.pk, stranger.pk])

    with path.open(encoding="utf-8-sig") as file:
        rows = list(csv.DictReader(file))
    assert (stats.deals, stats.rows) == (1, 3) and {r["deal_external_id"] for r in rows} == {"CRM-1"}


def test_an_xlsx_export_writes_dates_as_date_cells_and_an_empty_account_its_header(tmp_path, source):
    import datetime as dt

    path = tmp_path / "e.xlsx"
    call_command("export_history", "--account", source.slug, "--output", str(path), stdout=StringIO())
    rows = list(load_workbook(path, read_only=True)["History"].iter_rows(values_only=True))
    header = rows[0]
    sent = [row[header.index("sent_on")] for row in rows[1:] if row[header.index("lender")]]
    assert sent and all(isinstance(day, dt.datetime) and day.time() == dt.time() for day in sent)
    empty = tmp_path / "empty.xlsx"
    call_command("export_history", "--account", AccountFactory().slug, "--output", str(empty), stdout=StringIO())
    assert [r for r in load_workbook(empty, read_only=True)["History"].iter_rows(values_only=True)
            if any(c is not None for c in r)] == [header]
