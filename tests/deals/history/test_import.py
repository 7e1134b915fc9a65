"""manage.py import_history: a good file imported with its real dates and outcomes, the dry run's plan,
re-import creating nothing, lender names matched or listed to map, tenancy."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from deals.models import Deal, Placement, TermSheet
from deals.notes.timeline import deal_timeline
from deals.searches.ranking.evidence import observations
from lenders.models import Lender
from tests.deals.history.helpers import DEAL_A, counts, refused, rows_ab, run_import, write_csv
from tests.factories import AccountFactory, LenderFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def lenders():
    return {
        "jpm": LenderFactory(name="JPMorgan Chase Bank, N.A."),
        "wells": LenderFactory(name="Wells Fargo Bank"),
        "arbor": LenderFactory(name="Arbor Realty Trust"),
        "chase": LenderFactory(name="Chase Capital Partners"),
    }


def test_a_history_file_is_imported_with_its_outcomes_quotes_and_real_dates(tmp_path, lenders):
    account = AccountFactory()
    path = write_csv(tmp_path / "history.csv", rows_ab())

    out = run_import(path, account)

    assert "2 new deal(s)" in out and "5 placement(s)" in out and "3 quote(s), 1 won" in out
    assert 'Lender "JP Morgan" read as JPMorgan Chase Bank, N.A.' in out  # a fuzzy match is said, not silent
    deal = Deal.objects.get(account=account, external_id="CRM-1")
    assert (deal.title, deal.loan_amount, deal.loan_type) == ("Oak Street Apartments", Decimal("12500000.00"),
                                                              "permanent")
    assert deal.estimated_close_date == dt.date(2025, 6, 30)
    prop = deal.properties.get()
    assert (prop.name, prop.state, prop.asset_type, prop.units) == ("Oak Street", "TX", "multifamily", 120)
    assert (deal.financials.in_place_noi, deal.financials.estimated_value) == (Decimal("1050000"), Decimal("19000000"))
    by_lender = {p.lender_id: p for p in Placement.objects.filter(deal=deal)}
    won = by_lender[lenders["jpm"].pk]
    assert won.status == "won" and won.sent_at.date() == dt.date(2025, 1, 10)
    assert won.first_response_at.date() == dt.date(2025, 1, 20) and won.decided_at.date() == dt.date(2025, 2, 15)
    sheet = TermSheet.objects.get(placement=won)
    assert sheet.winning and sheet.fixed_rate == Decimal("6.125") and sheet.max_ltv == Decimal("65")
    assert sheet.loan_amount == Decimal("12000000") and sheet.origination_fee_percent == Decimal("1")
    lost = by_lender[lenders["wells"].pk]
    assert lost.sent_at.date() == dt.date(2025, 1, 10)  # Excel serial 45667
    floating = TermSheet.objects.get(placement=lost)
    assert (floating.rate_type, floating.rate_index, floating.spread_bps, floating.winning) == (
        "floating", "sofr", 275, False)
    declined = by_lender[lenders["arbor"].pk]
    assert declined.status == "declined" and declined.decline_reason == "Outside our box"
    assert declined.decided_at.date() == dt.date(2025, 1, 12)
    other = Deal.objects.get(account=account, external_id="CRM-2")
    assert other.loan_type == "light_bridge"
    assert set(Placement.objects.filter(deal=other).values_list("status", flat=True)) == {"no_response", "quoted"}

    # The timeline says it at the real dates, and that the deal was imported.
    entries = [(e.at.date(), e.kind, e.text) for e in deal_timeline(deal=deal)]
    assert (dt.date(2025, 1, 12), "placement_status", "Arbor Realty Trust: declined") in entries
    assert any(kind == "winner_chosen" and day == dt.date(2025, 2, 15) for day, kind, _ in entries)
    assert any(kind == "note" and "Imported from the history file history.csv" in text for _, kind, text in entries)
    # The ranking's learning reads the imported outcomes as it reads the product's.
    seen = {(o.lender_id, o.outcome, o.won) for o in observations(as_of=dt.datetime.now(tz=dt.UTC))
            if o.account_id == account.pk}
    assert (lenders["jpm"].pk, "q", True) in seen and (lenders["arbor"].pk, "d", False) in seen


def test_a_deal_is_imported_archived_with_its_description_when_the_file_says_so(tmp_path, lenders):
    """deal_archived and description: a past deal kept out of the active lists (the demo's history is one)."""
    account = AccountFactory()
    rows = [{**row, "deal_archived": "Yes", "description": "Closed in 2025."} if row["deal_external_id"] == "CRM-1"
            else {**row, "deal_archived": "no"} for row in rows_ab()]
    run_import(write_csv(tmp_path / "history.csv", rows), account)
    past, active = Deal.objects.get(external_id="CRM-1"), Deal.objects.get(external_id="CRM-2")
    assert (past.archived, past.description) == (True, "Closed in 2025.") and past.archived_at is not None
    assert (active.archived, active.description, active.archived_at) == (False, "", None)


def test_a_dry_run_prints_each_rows_plan_and_writes_nothing(tmp_path, lenders):
    account = AccountFactory()
    path = write_csv(tmp_path / "history.csv", rows_ab())

    out = run_import(path, account, "--dry-run")

    assert counts(account) == (0, 0, 0)
    assert 'line 2: deal CRM-1 "Oak Street Apartments" (new) -> JPMorgan Chase Bank, N.A.' in out
    assert "won, sent 2025-01-10, quote $12,000,000 at 6.125% fixed" in out
    assert "line 4: deal CRM-1 \"Oak Street Apartments\" -> Arbor Realty Trust" in out
    assert "Would import into" in out and "Dry run: nothing was written." in out


def test_importing_the_same_file_again_creates_nothing(tmp_path, lenders):
    account = AccountFactory()
    path = write_csv(tmp_path / "history.csv", rows_ab())
    run_import(path, account)
    before = counts(account)

    out = run_import(path, account)

    assert counts(account) == before == (2, 5, 3)
    assert "0 new deal(s)" in out and "2 deal(s) already in the account (5 row(s) skipped)" in out
    # A file with one more deal adds only it.
    more = write_csv(tmp_path / "more.csv", [*rows_ab(), {**DEAL_A, "deal_external_id": "CRM-3",
                                                          "lender": "Wells Fargo", "sent_on": "2025-04-01",
                                                          "outcome": "sent"}])
    run_import(more, account)
    assert counts(account) == (3, 6, 3)


def test_a_lender_name_matching_none_or_two_is_listed_to_map_and_mapped_it_imports(tmp_path, lenders):
    account = AccountFactory()
    rows = rows_ab()
    rows[0]["lender"] = "Chase"  # JPMorgan Chase Bank and Chase Capital Partners
    rows[3]["lender"] = "Blackstone Mortgage"  # none
    path = write_csv(tmp_path / "history.csv", rows)

    message = refused(path, account)

    assert 'line 2, column lender: "Chase" (1 row(s)) matches more than one lender' in message
    assert f"JPMorgan Chase Bank, N.A. (id {lenders['jpm'].pk})" in message
    assert 'line 5, column lender: "Blackstone Mortgage" (1 row(s)) matches no lender' in message
    assert "2 lender name(s) to map; nothing was imported." in message
    assert counts(account) == (0, 0, 0)

    bad_id = max(lender.pk for lender in lenders.values()) + 1000
    assert f'the mapping "Chase={bad_id}" names no lender this account can place with; nothing was imported' in (
        refused(path, account, "--map", f"Chase={bad_id}"))
    assert "is not NAME=LENDER_ID" in refused(path, account, "--map", "Chase")
    run_import(path, account, "--map", f"Chase={lenders['chase'].pk}", "--map",
               f"Blackstone Mortgage={lenders['wells'].pk}")
    assert Placement.objects.get(deal__account=account, deal__external_id="CRM-1", status="won").lender_id == (
        lenders["chase"].pk)


def test_an_import_touches_only_its_own_account(tmp_path, lenders):
    mine, theirs = AccountFactory(), AccountFactory()
    path = write_csv(tmp_path / "history.csv", rows_ab())
    run_import(path, theirs)
    theirs_before = list(Deal.objects.filter(account=theirs).values_list("pk", "title", "updated_at"))

    out = run_import(path, mine)  # the same external ids in another account: new deals here

    assert "2 new deal(s)" in out
    assert counts(mine) == counts(theirs) == (2, 5, 3)
    assert list(Deal.objects.filter(account=theirs).values_list("pk", "title", "updated_at")) == theirs_before
    assert not Placement.objects.filter(deal__account=mine).filter(deal__in=Deal.objects.filter(account=theirs))


def test_the_documented_example_file_imports(lenders):
    from pathlib import Path

    example = Path(__file__).resolve().parents[3] / "docs" / "examples" / "history-example.csv"
    account = AccountFactory()
    out = run_import(example, account)
    assert "2 new deal(s), 2 propert(ies), 5 placement(s), 3 quote(s), 1 won" in out
    assert Deal.objects.get(account=account, external_id="CRM-1001").stage.name == "Closed"
    template = example.with_name("history-template.csv")
    assert "history-template.csv: the file has its header but no rows; nothing was imported." in refused(
        template, account)


def test_what_a_dry_run_counts_is_what_the_import_writes(tmp_path, lenders):
    from deals.history.services import history_import
    from deals.models import DealProperty

    account = AccountFactory()
    rows = [*rows_ab(), {**DEAL_A, "deal_external_id": "CRM-9", "deal_title": "Never placed"}]
    path = write_csv(tmp_path / "history.csv", rows)
    plan: list[str] = []

    dry = history_import(account=account, path=path, dry_run=True, on_plan=plan.append)
    assert counts(account) == (0, 0, 0) and len(plan) == dry.rows == 6
    assert plan[-1] == 'line 7: deal CRM-9 "Never placed" (new), not placed'
    done = history_import(account=account, path=path)

    assert (dry.deals, dry.placements, dry.term_sheets, dry.won, dry.properties) == (
        done.deals, done.placements, done.term_sheets, done.won, done.properties) == (3, 5, 3, 1, 3)
    assert counts(account) == (done.deals, done.placements, done.term_sheets)
    assert DealProperty.objects.filter(deal__account=account).count() == done.properties


def test_an_applied_import_refreshes_the_lender_signals_with_its_outcomes(tmp_path, lenders, eager_jobs,
                                                                         django_capture_on_commit_callbacks):
    from django.core.cache import cache
    from django.utils import timezone

    from deals.searches import signals
    from lenders.models import LenderSignal

    cache.delete(signals.DEBOUNCE_KEY)
    account = AccountFactory()
    sent, answered = (str(timezone.localdate() - dt.timedelta(days=d)) for d in (40, 35))
    rows = [{**r, "sent_on": sent, "answered_on": answered if r.get("answered_on") else "",
             "decided_on": answered if r.get("decided_on") else ""} for r in rows_ab()]
    path = write_csv(tmp_path / "recent.csv", rows)

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        run_import(path, account)  # jobs in-process here: the refresh runs once the import commits

    assert callbacks, "no refresh was scheduled"
    arbor = LenderSignal.objects.get(account=account, lender=lenders["arbor"], dimension="all")
    assert (arbor.quoted_12m, arbor.declined_12m) == (1, 1)  # quoted CRM-2, declined CRM-1
    assert LenderSignal.objects.get(account=account, lender=lenders["jpm"], dimension="all").quoted_12m == 1


def test_another_accounts_own_lender_is_never_matched_by_name_id_or_mapping(tmp_path, lenders):
    """A lender a team keeps for itself (issue 38) does not exist for another account's import: its name
    matches nothing, its id is no lender, a mapping to it is refused; the team's own import finds it."""
    mine, theirs = AccountFactory(), AccountFactory()
    private = LenderFactory(name="Blackstone Mortgage Trust", account=theirs)
    rows = rows_ab()
    rows[3]["lender"] = "Blackstone Mortgage Trust"
    path = write_csv(tmp_path / "history.csv", rows)

    message = refused(path, mine)
    assert 'line 5, column lender: "Blackstone Mortgage Trust" (1 row(s)) matches no lender' in message
    assert str(private.pk) not in message.split("matches no lender", 1)[1].splitlines()[0]
    assert f'the mapping "Blackstone Mortgage Trust={private.pk}" names no lender this account can place with' in (
        refused(path, mine, "--map", f"Blackstone Mortgage Trust={private.pk}"))
    by_id = rows_ab()
    by_id[3] = {**by_id[3], "lender": "", "lender_id": str(private.pk)}
    assert f"no lender has the id {private.pk}" in refused(write_csv(tmp_path / "by-id.csv", by_id), mine)
    assert counts(mine) == (0, 0, 0)

    run_import(path, theirs)  # its own team: matched exactly, placed with it
    placed = Placement.objects.get(deal__account=theirs, deal__external_id="CRM-2", lender=private)
    assert placed.status == "no_response"


def test_a_name_no_lender_holds_is_added_as_the_teams_own_with_the_import_or_not_at_all(tmp_path, lenders):
    """--new-lender: a lender the directory lacks becomes the account's own, in the import's transaction:
    a dry run adds nothing, a refused import adds nothing, another account never sees it, and a name the
    directory already holds is refused, naming that lender to map to."""
    mine, theirs = AccountFactory(), AccountFactory()
    rows = rows_ab()
    rows[3]["lender"] = "Harbor Street Capital"
    path = write_csv(tmp_path / "history.csv", rows)
    assert '--new-lender "Harbor Street Capital"' in refused(path, mine)

    plan = run_import(path, mine, "--dry-run", "--new-lender", "Harbor Street  Capital")
    assert "Would add as lenders of the account's own: Harbor Street Capital." in plan
    assert 'new lender of your own from "Harbor Street Capital"' in plan
    assert not Lender.objects.filter(name="Harbor Street Capital").exists()

    bad = rows_ab()
    bad[3] = {**bad[3], "lender": "Harbor Street Capital", "outcome": "maybe"}
    refused(write_csv(tmp_path / "bad.csv", bad), mine, "--new-lender", "Harbor Street Capital")
    assert not Lender.objects.filter(name="Harbor Street Capital").exists()  # with the rows, or not at all

    taken = refused(path, mine, "--new-lender", "Wells Fargo Bank")
    wells = lenders["wells"].pk
    assert f'--new-lender "Wells Fargo Bank": the directory has a lender of this name (id {wells})' in taken

    out = run_import(path, mine, "--new-lender", "Harbor Street Capital")
    assert "Added as lenders of the account's own: Harbor Street Capital." in out
    own = Lender.objects.get(name="Harbor Street Capital")
    assert own.account == mine
    assert Placement.objects.get(deal__account=mine, deal__external_id="CRM-2", lender=own).status == "no_response"
    # Another account's import does not see it: the name matches nothing there.
    assert '"Harbor Street Capital" (1 row(s)) matches no lender' in refused(path, theirs)
