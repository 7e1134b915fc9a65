"""Two moves of one deal at once end in one recorded history, not two: the second waits for the first's
row lock, then sees where the deal is (real PostgreSQL transactions on two connections)."""

from __future__ import annotations

import pytest
from django.db import transaction

from deals.models import Deal, Stage, StageChange
from deals.pipeline import services
from deals.searches.services import lender_search_start
from tests.deals.searches.factories import lender_with, make_deal
from tests.factories import DealFactory
from tests.lev.concurrency import Worker, postgres_only, wait_for_lock_waiters

pytestmark = [postgres_only, pytest.mark.django_db(transaction=True)]


def stage(account, key: str) -> Stage:
    return Stage.objects.get(account=account, key=key)


def chain(deal: Deal) -> list[tuple[str | None, str]]:
    return [(c.from_stage.key if c.from_stage else None, c.to_stage.key)
            for c in StageChange.objects.filter(deal=deal).select_related("from_stage", "to_stage")]


def test_two_racing_moves_to_the_same_stage_record_one_change(account):
    deal = DealFactory(account=account)
    stale = Deal.objects.get(pk=deal.pk)  # what a second request loaded before the first committed
    target = stage(account, "underwriting")
    with transaction.atomic():
        first = services.deal_move_stage(deal=Deal.objects.get(pk=deal.pk), stage=target, reason="A")
        b = Worker(lambda: services.deal_move_stage(deal=stale, stage=target, reason="B"))
        b.start()
        wait_for_lock_waiters(1)  # B waits on A's row lock
    second = b.outcome()
    assert first.change is not None and second.change is None
    assert chain(deal) == [("intake", "underwriting")]
    assert StageChange.objects.get(deal=deal).reason == "A"


def test_two_racing_moves_to_different_stages_make_one_chain(account):
    deal = DealFactory(account=account)
    stale = Deal.objects.get(pk=deal.pk)
    with transaction.atomic():
        services.deal_move_stage(deal=Deal.objects.get(pk=deal.pk), stage=stage(account, "underwriting"))
        b = Worker(lambda: services.deal_move_stage(deal=stale, stage=stage(account, "dead")))
        b.start()
        wait_for_lock_waiters(1)
    b.outcome()
    # B's record starts where A left the deal, not where B first saw it.
    assert chain(deal) == [("intake", "underwriting"), ("underwriting", "dead")]
    assert Deal.objects.get(pk=deal.pk).stage.key == "dead"


def test_a_move_waiting_on_a_search_start_comes_after_its_automatic_move(account):
    lender_with("Lone Star Bank")
    deal = make_deal(account)
    stale = Deal.objects.get(pk=deal.pk)
    with transaction.atomic():
        lender_search_start(deal=Deal.objects.get(pk=deal.pk))
        b = Worker(lambda: services.deal_move_stage(deal=stale, stage=stage(account, "underwriting")))
        b.start()
        wait_for_lock_waiters(1)
    b.outcome()
    assert chain(deal) == [("intake", "in_market"), ("in_market", "underwriting")]


def test_two_processes_giving_an_account_its_defaults_at_once_make_one_set(account):
    """The unique (account, key) constraint decides: the second insert waits on the first's uncommitted
    keys, then its rows are ignored."""
    Stage.objects.filter(account=account).delete()
    with transaction.atomic():
        Stage.objects.ensure_defaults(account.pk)
        b = Worker(lambda: Stage.objects.ensure_defaults(account.pk))
        b.start()
        wait_for_lock_waiters(1)  # B's insert waits on A's uncommitted unique keys
    b.outcome()
    assert Stage.objects.filter(account=account).count() == 7
