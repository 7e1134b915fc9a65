"""REST GET /api/v1/history-export/: the caller's account's whole history as a file (CSV or XLSX, the
own lenders table as CSV), tenancy by the credential's account, read scope, a bad format a 400 in the
error contract, and the operation in the OpenAPI schema."""

from __future__ import annotations

import csv
import io

import pytest
from openpyxl import load_workbook

from deals.history.own import OWN_SHEET
from lenders.services import lender_create
from lev.accounts.services import api_key_create
from tests.conftest import client_with_key
from tests.deals.history.helpers import rows_ab, run_import, write_csv
from tests.factories import LenderFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/history-export/"


@pytest.fixture
def history(tmp_path, account, other_account):
    for name in ("JPMorgan Chase Bank, N.A.", "Wells Fargo Bank", "Arbor Realty Trust"):
        LenderFactory(name=name)
    run_import(write_csv(tmp_path / "a.csv", rows_ab()), account)
    lender_create(account=account, data={"name": "Acme's Own Lender"})
    rival = [{**row, "deal_external_id": "RIVAL-" + row["deal_external_id"], "deal_title": "Rival deal"}
             for row in rows_ab()]
    run_import(write_csv(tmp_path / "b.csv", rival), other_account)
    lender_create(account=other_account, data={"name": "Rival's Secret Lender"})


def _body(response) -> bytes:
    return b"".join(response.streaming_content)


def test_csv_is_the_accounts_history_as_an_attachment(api, history):
    response = api.get(URL, {"format": "csv"})

    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="acme-history-')
    rows = list(csv.DictReader(io.StringIO(_body(response).decode("utf-8-sig"))))
    assert len(rows) == 5 and {r["deal_external_id"] for r in rows} == {"CRM-1", "CRM-2"}


def test_another_accounts_key_never_gets_its_rows(other_api, history):
    rows = list(csv.DictReader(io.StringIO(_body(other_api.get(URL)).decode("utf-8-sig"))))
    assert {r["deal_external_id"] for r in rows} == {"RIVAL-CRM-1", "RIVAL-CRM-2"}
    own = _body(other_api.get(URL, {"format": "csv", "table": "own_lenders"})).decode("utf-8-sig")
    assert "Rival's Secret Lender" in own and "Acme's Own Lender" not in own


def test_xlsx_carries_the_own_lenders_sheet(api, history, tmp_path):
    response = api.get(URL, {"format": "xlsx"})

    assert response.status_code == 200
    assert response["Content-Type"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    assert response["Content-Disposition"].endswith('.xlsx"')
    path = tmp_path / "got.xlsx"
    path.write_bytes(_body(response))
    workbook = load_workbook(path, read_only=True)
    assert workbook.sheetnames == ["History", OWN_SHEET]
    cells = {c for row in workbook[OWN_SHEET].iter_rows(values_only=True) for c in row}
    assert "Acme's Own Lender" in cells and "Rival's Secret Lender" not in cells
    assert len(list(workbook["History"].iter_rows(values_only=True))) == 6


@pytest.mark.parametrize("query", [{"format": "pdf"}, {"format": "csv", "table": "nope"}, {"formats": "csv"}])
def test_a_bad_query_is_a_400_in_the_error_contract(api, history, query):
    response = api.get(URL, query)

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "VALIDATION_ERROR" and body["message"].startswith("Validation failed: ")
    assert set(body["details"]["fields"]) <= {"format", "table", "formats"} and body["details"]["fields"]


def test_xlsx_own_lenders_alone(api, history, tmp_path):
    path = tmp_path / "own.xlsx"
    path.write_bytes(_body(api.get(URL, {"format": "xlsx", "table": "own_lenders"})))
    workbook = load_workbook(path, read_only=True)
    assert workbook.sheetnames == [OWN_SHEET]
    assert [row[0] for row in workbook[OWN_SHEET].iter_rows(values_only=True)] == ["lender", "Acme's Own Lender"]


def test_an_empty_account_gets_the_header_alone(api):
    rows = _body(api.get(URL)).decode("utf-8-sig").splitlines()
    assert rows == [rows[0]] and rows[0].startswith("deal_external_id,deal_title,")


def test_it_needs_the_deals_read_scope(user, account, history):
    _key, raw = api_key_create(user=user, account=account, name="lenders only", scopes=frozenset({"lenders:read"}))
    response = client_with_key(raw).get(URL)
    assert response.status_code == 403 and response.json()["details"]["required_scope"] == "deals:read"
    assert client_with_key("lev_sk_nope").get(URL).status_code == 401


def test_the_schema_documents_the_operation(api):
    schema = api.get("/api/v1/schema/", {"format": "json"}).json()
    operation = schema["paths"][URL]["get"]
    assert operation["operationId"] == "history_export"
    assert set(operation["responses"]["200"]["content"]) == {
        "text/csv", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}
    assert {p["name"] for p in operation["parameters"]} >= {"format", "table"}
    assert "400" in operation["responses"]
