"""Every write that moves a deal's version locks the deal's row and bumps in the database, so a
concurrent change is never lost and a lender search is never reused for a deal that changed."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest
from django.db import transaction

from deals import services
from deals.models import Deal, DealProperty
from deals.searches.services import lender_search_start
from lev.errors import BusinessRuleViolation
from tests.deals.searches.factories import make_deal
from tests.factories import DealFactory, DealPropertyFactory
from tests.lev.concurrency import Worker, postgres_only, wait_for_lock_waiters

# Each write, run with a Deal (or property) object loaded before another writer's change: what a
# view holds when two requests for one deal arrive together.
WRITES: dict[str, Callable[[Deal, DealProperty], object]] = {
    "deal_update": lambda deal, prop: services.deal_update(deal=deal, data={"title": "Changed by B"}),
    "deal_archive": lambda deal, prop: services.deal_archive(deal=deal),
    "property_create": lambda deal, prop: services.deal_property_create(deal=deal, data={"name": "By B"}),
    "property_update": lambda deal, prop: services.deal_property_update(prop=prop, data={"units": 7}),
    "financials_update": lambda deal, prop: services.deal_financials_update(
        deal=deal, data={"purchase_price": Decimal("5000000")}),
}


@postgres_only
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("write", list(WRITES))
def test_a_write_waiting_on_another_never_loses_its_version_bump(account, write):
    deal = DealFactory(account=account)
    prop = DealPropertyFactory(deal=deal)
    start = Deal.objects.get(pk=deal.pk).version
    stale_deal = Deal.objects.get(pk=deal.pk)
    stale_prop = DealProperty.objects.get(pk=prop.pk)

    # A: changes the deal and holds its row lock, uncommitted, while B runs.
    with transaction.atomic():
        services.deal_property_create(deal=Deal.objects.get(pk=deal.pk), data={"name": "By A"})
        b = Worker(lambda: WRITES[write](stale_deal, stale_prop))
        b.start()
        wait_for_lock_waiters(1)  # B is queued behind A's lock
    b.outcome()

    assert Deal.objects.get(pk=deal.pk).version == start + 2


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_deal_archived_meanwhile_is_not_changed_by_a_waiting_write(account):
    deal = DealFactory(account=account)
    stale = Deal.objects.get(pk=deal.pk)
    with transaction.atomic():
        services.deal_archive(deal=Deal.objects.get(pk=deal.pk))
        b = Worker(lambda: services.deal_property_create(deal=stale, data={"name": "Too late"}))
        b.start()
        wait_for_lock_waiters(1)
    with pytest.raises(BusinessRuleViolation):
        b.outcome()
    assert not DealProperty.objects.filter(deal=deal).exists()


@pytest.mark.django_db
def test_a_search_of_an_older_version_is_not_reused_after_a_write_from_a_stale_object(account):
    deal = make_deal(account)
    stale = Deal.objects.get(pk=deal.pk)  # e.g. loaded by a request that started earlier
    services.deal_property_create(deal=Deal.objects.get(pk=deal.pk), data={"name": "Second", "state": "OK",
                                                                         "asset_type": "multifamily"})
    first, _ = lender_search_start(deal=Deal.objects.get(pk=deal.pk))
    services.deal_update(deal=stale, data={"loan_amount": Decimal("20000000")})
    second, created = lender_search_start(deal=Deal.objects.get(pk=deal.pk))
    assert created and second.pk != first.pk
    assert second.criteria["loan_amount"] == 20_000_000


@pytest.mark.django_db
def test_services_leave_the_callers_object_current(account):
    deal = DealFactory(account=account)
    other_view = Deal.objects.get(pk=deal.pk)
    services.deal_update(deal=other_view, data={"title": "Renamed"})
    services.deal_update(deal=deal, data={"loan_amount": Decimal("1")})
    assert (deal.title, deal.loan_amount, deal.version) == ("Renamed", Decimal("1"), 3)
    services.deal_archive(deal=other_view)
    assert other_view.archived and other_view.version == 4
