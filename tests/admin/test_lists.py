"""The deal team's lists (issue 23, findings 2, 3, 6, 8): the columns a team reads, newest first,
placements and term sheets of active deals unless archived ones are asked for (the demo's market
history is archived), totals that do not count the hidden archive, the lender list's figures of
active programs, records named in words — and every list's page costs the same queries for a few
rows or many."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from deals import services as deal_services
from deals.models import DealFinancials, Placement, TermSheet
from deals.searches.models import LenderSearch
from lev import formatting
from tests.admin_helpers import admin_client, superuser
from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote
from tests.factories import LenderFactory, LenderProgramFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def rows(html: str) -> list[str]:
    start = html.index('<table id="result_list">')
    body = html[start:html.index("</table>", start)]
    return re.findall(r"<tr>(.*?)</tr>", body.split("<tbody>")[1], re.S)


def placed(account, title: str, *, archived: bool = False, quoted: bool = True) -> Placement:
    deal = deal_with_financials(account, title=title)
    placement = place(deal, lenders(1)[0])
    if quoted:
        quote(placement)
    if archived:
        deal_services.deal_archive(deal=deal)
    return placement


@pytest.fixture
def team(account):
    """A deal team's member (staff of one account, every permission of its lists) and its client."""
    from django.contrib.auth.models import Permission

    user = UserFactory(username="dana", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label__in=["deals", "lenders"]))
    MembershipFactory(account=account, user=user, role="owner")
    return admin_client(user)


# --- placements and term sheets: active deals by default, newest first -------------------------------
def test_placements_and_term_sheets_open_on_active_deals_newest_first(account):
    client = admin_client(superuser())
    placed(account, "Past multifamily loan in MN #001", archived=True)
    older = placed(account, "Older Deal")
    newer = placed(account, "Newer Deal")
    Placement.objects.filter(pk=older.pk).update(created_at=timezone.now() - dt.timedelta(days=3))
    TermSheet.objects.filter(placement=older).update(received_at=timezone.now() - dt.timedelta(days=3))
    for name in ("placement", "termsheet"):
        url = reverse(f"admin:deals_{name}_changelist")
        html = client.get(url).content.decode()
        listed = rows(html)
        assert [("Newer Deal" in r, "Older Deal" in r) for r in listed] == [(True, False), (False, True)], name
        assert "Past multifamily" not in html.split('id="result_list"')[1]
        # The count does not shout the hidden archive: 2 rows of 2 active, no "(3 total)".
        assert "3 total" not in html
        for status, expected in (("archived", ["Past multifamily"]), ("all", ["Newer", "Past multifamily", "Older"])):
            listed = rows(client.get(url, {"deal_status": status}).content.decode())
            assert [next(t for t in expected if t in r) for r in listed] == expected, (name, status)
    placement_row = rows(client.get(reverse("admin:deals_placement_changelist")).content.decode())[0]
    assert reverse("admin:deals_placement_change", args=[newer.pk]) in placement_row
    for cell in ("field-lender_deal", "field-status_cell", "field-rank", "field-quotes", "field-sent",
                 "field-response"):
        assert cell in placement_row
    sheet_row = rows(client.get(reverse("admin:deals_termsheet_changelist")).content.decode())[0]
    assert '<td class="field-amount">$10M</td>' in sheet_row
    assert '<td class="field-terms">10 yr' in sheet_row


def test_a_search_shows_its_count_of_the_rows_of_active_deals(account):
    client = admin_client(superuser())
    placed(account, "Harbor One")
    placed(account, "Harbor Two")
    placed(account, "Past Harbor", archived=True)
    html = client.get(reverse("admin:deals_placement_changelist"), {"q": "Harbor One"}).content.decode()
    assert "1 result" in html and "2 total" in html and "3 total" not in html


def test_the_deal_list_does_not_count_the_archive(account):
    client = admin_client(superuser())
    deal_with_financials(account, title="Live One")
    for n in range(3):
        deal_services.deal_archive(deal=deal_with_financials(account, title=f"Old {n}"))
    html = client.get(reverse("admin:deals_deal_changelist")).content.decode()
    assert len(rows(html)) == 1 and "4 total" not in html
    assert len(rows(client.get(reverse("admin:deals_deal_changelist"), {"archived": "all"}).content.decode())) == 4


def test_a_one_account_team_reads_deals_without_an_account_column(account, team):
    deal_with_financials(account, title="Team Deal", loan_amount=Decimal("18500000"), loan_type="tbd")
    html = team.get(reverse("admin:deals_deal_changelist")).content.decode()
    (row,) = rows(html)
    assert "field-deal_cell" in row and "field-deal_with_account" not in row
    assert ('<td class="field-loan"><data value="18500000">$18.5M</data>'
            '<div class="lev-sub">To be decided</div></td>') in row
    assert ">To be decided<" in html.split('id="changelist-filter"')[1]  # the loan type filter, not "Tbd"
    assert "Tbd" not in html


# --- the lender list ----------------------------------------------------------------------------------
def test_the_lender_list_compares_active_programs(client):
    client = admin_client(superuser())
    lender = LenderFactory(name="Aardvark Capital", city="Boston", state="MA", lender_types=["debt_fund"])
    LenderProgramFactory(lender=lender, min_loan_amount=Decimal("2000000"), max_loan_amount=Decimal("25000000"),
                         max_ltv=Decimal("75"), asset_types=["multifamily"])
    LenderProgramFactory(lender=lender, min_loan_amount=Decimal("5000000"), max_loan_amount=Decimal("80000000"),
                         max_ltv=Decimal("80"), asset_types=["office", "retail"])
    LenderProgramFactory(lender=lender, min_loan_amount=Decimal("100000"), max_loan_amount=Decimal("900000000"),
                         max_ltv=Decimal("90"), asset_types=["land"], status="inactive")
    (row,) = rows(client.get(reverse("admin:lenders_lender_changelist"), {"q": "Aardvark"}).content.decode())
    assert "Aardvark Capital" in row and '<div class="lev-sub">Boston, MA</div>' in row
    assert '<span class="lev-nowrap">$2M\N{EN DASH}$80M</span>' in row
    assert '<td class="field-max_leverage">80%</td>' in row
    assert '<td class="field-active_programs">2</td>' in row
    assert '<td class="field-asset_types">Multifamily, Office +1 more</td>' in row
    assert "Debt Fund" in row and "Land" not in row


# --- records in words; worker internals only for superusers --------------------------------------------
def test_records_are_named_in_words(account, django_capture_on_commit_callbacks):
    from deals.searches import services as search_services

    placement = placed(account, "Riverside Apartments")
    deal = placement.deal
    assert str(DealFinancials.objects.get(deal=deal)) == "Financials of Riverside Apartments"
    assert str(placement) == f"Riverside Apartments with {placement.lender.name} (quoted)"
    assert str(placement.term_sheets.get()) == f"Term Sheet from {placement.lender.name} on Riverside Apartments"
    with django_capture_on_commit_callbacks(execute=True):
        search, _ = search_services.lender_search_start(deal=deal)
    search = LenderSearch.objects.get(pk=search.pk)
    status = search.get_status_display().lower()  # completed in-process, pending with a worker queue
    assert str(search) == f"Search of Riverside Apartments, {formatting.day(search.created_at)} ({status})"


def test_a_searchs_diagnostics_are_a_superusers(account, team, django_capture_on_commit_callbacks):
    from deals.searches import services as search_services

    deal = deal_with_financials(account, title="Riverside Apartments")
    with django_capture_on_commit_callbacks(execute=True):
        search, _ = search_services.lender_search_start(deal=deal)
    url = reverse("admin:deals_lendersearch_change", args=[search.pk])
    page = team.get(url).content.decode()
    assert "Percent done" not in page and "Diagnostics" not in page and "Heartbeat" not in page
    assert "Attempts" not in page and "Deal version" not in page
    assert "Search of Riverside Apartments" in page
    root = admin_client(superuser()).get(url).content.decode()
    assert "Diagnostics" in root and "Heartbeat" in root and "Attempts" in root
    listed = team.get(reverse("admin:deals_lendersearch_changelist")).content.decode()
    assert "Attempts" not in listed and "Search of" in listed


def test_money_and_days_as_a_list_reads_them():
    assert formatting.money_short(Decimal("18500000")) == "$18.5M"
    assert formatting.label("tbd") == "To be decided"
    assert formatting.money_short(Decimal("999999999")) == "$1B"
    assert formatting.money_short(Decimal("850000")) == "$850K"
    assert formatting.money_short(None) == formatting.EMPTY
    assert formatting.money_range(None, Decimal("5000000")) == "up to $5M"
    assert formatting.day(dt.date(2001, 3, 4)) == "Mar 4, 2001"
    assert formatting.day(timezone.localdate()).count(",") == 0


# --- each list's page: the same queries for a few rows or many --------------------------------------
LISTS = ["deals_deal", "deals_placement", "deals_termsheet", "lenders_lender", "deals_lendersearch",
         "lenders_lenderprogram", "deals_dealproperty"]


@pytest.mark.parametrize("name", LISTS)
def test_each_list_costs_the_same_queries_for_few_rows_or_many(account, team, name,
                                                               django_capture_on_commit_callbacks):
    from deals.searches import services as search_services

    def add(count: int) -> None:
        for _ in range(count):
            placement = placed(account, "Deal")
            LenderProgramFactory(lender=placement.lender)
            with django_capture_on_commit_callbacks(execute=True):
                search_services.lender_search_start(deal=placement.deal)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert team.get(reverse(f"admin:{name}_changelist")).status_code == 200
        return len(captured)

    add(2)
    team.get(reverse(f"admin:{name}_changelist"))  # process-wide caches filled before counting
    few = queries()
    add(10)
    assert queries() == few, name


def test_a_deals_version_is_a_superusers_diagnostic(account, team):
    deal = deal_with_financials(account, title="Versioned")
    url = reverse("admin:deals_deal_change", args=[deal.pk])
    page = team.get(url).content.decode()
    assert "Diagnostics" not in page and "field-version" not in page
    root = admin_client(superuser()).get(url).content.decode()
    assert "Diagnostics" in root and "field-version" in root


def test_a_placements_page_names_its_quotes_in_the_same_queries_for_one_or_four(account):
    client = admin_client(superuser())
    placement = placed(account, "Riverside Apartments")
    url = reverse("admin:deals_placement_change", args=[placement.pk])

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    client.get(url)
    one = queries()
    for _ in range(3):
        quote(placement)
    assert queries() == one


@pytest.mark.parametrize("name", ["placement", "termsheet"])
def test_a_history_page_costs_the_same_queries_for_few_changes_or_many(account, name):
    from deals.placements import services as placement_services

    client = admin_client(superuser())
    placement = placed(account, "Riverside Apartments")
    row = placement if name == "placement" else placement.term_sheets.get()
    url = reverse(f"admin:deals_{name}_history", args=[row.pk])

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    client.get(url)
    few = queries()
    for n in range(4):
        if name == "placement":
            placement_services.placement_update(placement=Placement.objects.get(pk=placement.pk),
                                                data={"notes": f"call {n}"})
        else:
            TermSheet.objects.get(pk=row.pk).save()
    assert queries() == few
    page = client.get(url).content.decode()
    assert f"Riverside Apartments with {placement.lender.name}" in page or name != "placement"
