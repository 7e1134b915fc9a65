"""The directory's loan-size filters."""

from __future__ import annotations

import pytest

from tests.factories import LenderFactory, LenderProgramFactory

pytestmark = pytest.mark.django_db


def test_directory_min_and_max_loan_amount_keep_programs_whose_range_reaches_them(api):
    small = LenderFactory(name="Small Loans Bank")
    LenderProgramFactory(lender=small, min_loan_amount=500_000, max_loan_amount=5_000_000)
    large = LenderFactory(name="Large Loans Fund")
    LenderProgramFactory(lender=large, min_loan_amount=20_000_000, max_loan_amount=200_000_000)

    def names(**query) -> list[str]:
        return sorted(x["name"] for x in api.get("/api/v1/lenders/", query).json()["results"])

    assert names() == ["Large Loans Fund", "Small Loans Bank"]
    # min_loan_amount: lenders that lend at least this much (a program's max reaches it).
    assert names(min_loan_amount=10_000_000) == ["Large Loans Fund"]
    # max_loan_amount: lenders that lend this little (a program's min is at or below it).
    assert names(max_loan_amount=10_000_000) == ["Small Loans Bank"]
    assert names(min_loan_amount=6_000_000, max_loan_amount=10_000_000) == []
