"""The admin's history export: the deal list's actions "Export selected deals (CSV)" / "(XLSX)" (the
selection only, one account's) and the whole-account export linked above the deal list, within the
accounts the staff user sees."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse
from openpyxl import load_workbook

from deals.history.own import OWN_SHEET
from deals.models import Deal
from lenders.services import lender_create
from tests.admin_helpers import admin_client, staff_user, superuser
from tests.deals.history.helpers import rows_ab, run_import, write_csv
from tests.factories import AccountFactory, LenderFactory, MembershipFactory

pytestmark = pytest.mark.django_db
LIST = "admin:deals_deal_changelist"


@pytest.fixture
def accounts(tmp_path):
    for name in ("JPMorgan Chase Bank, N.A.", "Wells Fargo Bank", "Arbor Realty Trust"):
        LenderFactory(name=name)
    mine, theirs = AccountFactory(name="Mine"), AccountFactory(name="Theirs")
    run_import(write_csv(tmp_path / "a.csv", rows_ab()), mine)
    lender_create(account=mine, data={"name": "Mine's Own Lender"})
    run_import(write_csv(tmp_path / "b.csv", [{**r, "deal_external_id": "T-" + r["deal_external_id"]}
                                                for r in rows_ab()]), theirs)
    return mine, theirs


@pytest.fixture
def member(accounts):
    user = staff_user("dana", "view_deal", "change_deal")
    MembershipFactory(account=accounts[0], user=user)
    return admin_client(user)


def _csv(response) -> list[dict]:
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig"))))


def test_the_action_exports_the_selected_deals_only(member, accounts):
    deal = Deal.objects.get(account=accounts[0], external_id="CRM-2")

    response = member.post(reverse(LIST), {"action": "export_csv", "_selected_action": [deal.pk]})

    assert response.status_code == 200 and response["Content-Disposition"].startswith("attachment;")
    rows = _csv(response)
    assert {r["deal_external_id"] for r in rows} == {"CRM-2"} and len(rows) == 2


def test_the_xlsx_action_carries_the_own_lenders_sheet(member, accounts, tmp_path):
    ids = list(Deal.objects.filter(account=accounts[0]).values_list("pk", flat=True))
    response = member.post(reverse(LIST), {"action": "export_xlsx", "_selected_action": ids})
    path = tmp_path / "x.xlsx"
    path.write_bytes(b"".join(response.streaming_content))
    workbook = load_workbook(path, read_only=True)
    assert workbook.sheetnames == ["History", OWN_SHEET]
    assert len(list(workbook["History"].iter_rows(values_only=True))) == 6
    assert "Mine's Own Lender" in {c for row in workbook[OWN_SHEET].iter_rows(values_only=True) for c in row}


def test_another_accounts_deals_cannot_be_exported_by_a_member(member, accounts):
    theirs = list(Deal.objects.filter(account=accounts[1]).values_list("pk", flat=True))

    response = member.post(reverse(LIST), {"action": "export_csv", "_selected_action": theirs})

    # Not in the member's list: nothing selected, nothing exported.
    assert response.status_code == 302 and "Content-Disposition" not in response


def test_a_selection_spanning_two_accounts_is_refused_with_a_message(accounts):
    client = admin_client(superuser())
    ids = list(Deal.objects.values_list("pk", flat=True))

    response = client.post(reverse(LIST), {"action": "export_csv", "_selected_action": ids})

    assert response.status_code == 302
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "Select deals of one account to export: a history file is one account's (its own lenders go with it)."]


def test_the_list_links_the_whole_account_export(member, accounts):
    page = member.get(reverse(LIST)).content.decode()
    url = reverse("admin:deals_deal_export_history")
    assert f'{url}?account={accounts[0].pk}&amp;format=xlsx' in page and "Export history (CSV)" in page

    rows = _csv(member.get(url, {"account": accounts[0].pk, "format": "csv"}))

    assert {r["deal_external_id"] for r in rows} == {"CRM-1", "CRM-2"}


def test_the_whole_account_export_keeps_tenancy(member, accounts):
    url = reverse("admin:deals_deal_export_history")
    assert member.get(url, {"account": accounts[1].pk, "format": "csv"}).status_code == 404
    assert member.get(url, {"account": accounts[0].pk, "format": "pdf"}).status_code == 400
    assert {r["deal_external_id"] for r in _csv(member.get(url, {"format": "csv"}))} == {"CRM-1", "CRM-2"}
    ops = admin_client(superuser())
    assert {r["deal_external_id"] for r in _csv(ops.get(url, {"account": accounts[1].pk, "format": "csv"}))} == {
        "T-CRM-1", "T-CRM-2"}
