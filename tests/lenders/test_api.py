"""REST: GET /lenders/ (the directory)."""

from __future__ import annotations

import pytest

from tests.deals.searches.factories import LenderFactory, LenderProgramFactory

pytestmark = pytest.mark.django_db


def test_directory_filters_and_counts_active_programs(api):
    bank = LenderFactory(name="Alpha Bank", state="TX", lender_types=["bank"])
    LenderProgramFactory(lender=bank, min_loan_amount=1_000_000, max_loan_amount=5_000_000)
    LenderProgramFactory(lender=bank, min_loan_amount=2_000_000, max_loan_amount=20_000_000)
    LenderProgramFactory(lender=bank, status="inactive", max_loan_amount=90_000_000)
    fund = LenderFactory(name="Beta Credit Fund", state="NY", lender_types=["debt_fund"])
    LenderProgramFactory(lender=fund, loan_types=["heavy_bridge"], asset_types=["office"])
    body = api.get("/api/v1/lenders/", {"state": "tx"}).json()
    assert [x["name"] for x in body["results"]] == ["Alpha Bank"]
    assert body["results"][0]["program_count"] == 2
    assert (body["results"][0]["min_loan"], body["results"][0]["max_loan"]) == (1_000_000, 20_000_000)
    assert [x["name"] for x in api.get("/api/v1/lenders/", {"asset_type": "office"}).json()["results"]] == [
        "Beta Credit Fund"]
    assert [x["name"] for x in api.get("/api/v1/lenders/", {"loan_amount": 15_000_000}).json()["results"]] == [
        "Alpha Bank", "Beta Credit Fund"]
    assert api.get("/api/v1/lenders/", {"loan_type": "land"}).json()["count"] == 0
