"""The deal read answers exactly what the ORM and DRF answer.

`deals.selectors.deal_get` finds the account's deal and no other, and DealSerializer writes what it
includes. (The deal detail's own row and output function: tests/deals/test_deal_output.py.)
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from deals import selectors
from deals.models import Deal, DealFinancials, DealProperty
from deals.serializers import DealFinancialsSerializer, DealPropertySerializer, DealSerializer
from lev.errors import DealNotFound
from tests.factories import AccountFactory, DealFactory, DealFinancialsFactory, DealPropertyFactory

pytestmark = pytest.mark.django_db


def full_deal(account) -> Deal:
    deal = DealFactory(account=account, title="Ünïcode “Tower”", loan_amount=Decimal("18500000.25"),
                       description="Line one\nline two", estimated_close_date=dt.date(2027, 3, 31))
    Deal.objects.filter(pk=deal.pk).update(archived=True, archived_at=timezone.now())
    DealPropertyFactory(deal=deal, units=120, square_footage=98_000, year_built=1987)
    DealPropertyFactory(deal=deal, units=None, square_footage=None, year_built=None, address="", zip="")
    DealFinancialsFactory(deal=deal)
    return deal


def test_the_read_finds_what_the_orm_finds_field_for_field():
    account, other = AccountFactory(), AccountFactory()
    deal, bare = full_deal(account), DealFactory(account=account, loan_amount=None, estimated_close_date=None)
    for wanted in (deal, bare):
        got = selectors.deal_get(account=account, deal_id=wanted.pk)
        orm = Deal.objects.get(pk=wanted.pk)
        assert type(got) is Deal
        assert {f.attname: getattr(got, f.attname) for f in Deal._meta.concrete_fields} == \
            {f.attname: getattr(orm, f.attname) for f in Deal._meta.concrete_fields}
    # Tenancy and bounds answer as before: another account's deal, a missing id, ids past the column.
    for account_, deal_id in ((other, deal.pk), (account, deal.pk + 1000), (account, 0), (account, -5),
                              (account, 2**63), (account, 10**30)):
        with pytest.raises(DealNotFound):
            selectors.deal_get(account=account_, deal_id=deal_id)


@pytest.mark.parametrize("include", [frozenset(), frozenset({"properties"}), frozenset({"financials"}),
                                     frozenset({"properties", "financials"})])
def test_a_deal_is_written_out_with_what_it_includes(include):
    """DealSerializer's `include`: the deal's fields, then its properties (oldest first) and its financials
    (every figure null without any), as their own serializers write them."""
    account = AccountFactory()
    for deal in (full_deal(account), DealFactory(account=account, loan_amount=None, estimated_close_date=None)):
        read = selectors.deal_get(account=account, deal_id=deal.pk, include=include)
        ours = DealSerializer(read, include=include).data
        expected = DealSerializer(Deal.objects.get(pk=deal.pk)).data
        if "properties" in include:
            expected["properties"] = DealPropertySerializer(
                DealProperty.objects.filter(deal=deal).order_by("id"), many=True).data
        if "financials" in include:
            financials = DealFinancials.objects.filter(deal=deal).first() or DealFinancials(deal=read)
            expected["financials"] = DealFinancialsSerializer(financials).data
        assert ours == expected
        assert list(ours) == list(expected)  # the same keys in the same order
