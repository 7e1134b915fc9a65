"""One open placement per (deal, lender) and one winning term sheet per deal, under real concurrency:
two requests racing in real threads on PostgreSQL — exactly one wins, the other gets CONFLICT (per
lender) or BUSINESS_RULE, never two. The database constraints hold on their own too (also on SQLite),
and a violation that gets past the services is a 409 CONFLICT, not a 500."""

from __future__ import annotations

import threading

import pytest
from django.db import IntegrityError, transaction

from deals.models import Deal, Placement, TermSheet
from deals.placements import services
from lev.errors import BusinessRuleViolation
from tests.conftest import client_with_key
from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote
from tests.lev.concurrency import Worker, postgres_only, wait_for_lock_waiters


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_create_waiting_on_another_reports_the_lender_as_already_placed(account):
    deal = deal_with_financials(account)
    (lender,) = lenders(1)
    with transaction.atomic():
        mine = services.placements_create(deal=Deal.objects.get(pk=deal.pk), lender_ids=[lender.pk])
        other = Worker(lambda: services.placements_create(deal=Deal.objects.get(pk=deal.pk), lender_ids=[lender.pk]))
        other.start()
        wait_for_lock_waiters(1)  # B waits for A's deal lock
    batch = other.outcome()
    assert batch.created == []
    assert batch.failed == [{"lender_id": lender.pk, "code": "CONFLICT", "placement_id": mine.created[0].pk,
                             "message": f"Conflict: lender {lender.pk} already has an open placement on this deal "
                                        f"(placement {mine.created[0].pk})"}]
    assert Placement.objects.filter(deal=deal, lender=lender).count() == 1


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_winner_chosen_while_another_choice_waits_leaves_one_winner(account):
    deal = deal_with_financials(account)
    first, second = quote(place(deal, lenders(1)[0])), quote(place(deal, lenders(1)[0]))
    with transaction.atomic():
        services.term_sheet_select_winner(term_sheet=TermSheet.objects.get(pk=first.pk))
        other = Worker(lambda: services.term_sheet_select_winner(term_sheet=TermSheet.objects.get(pk=second.pk)))
        other.start()
        wait_for_lock_waiters(1)
    with pytest.raises(BusinessRuleViolation) as refused:
        other.outcome()
    assert refused.value.details["winning_term_sheet_id"] == first.pk
    assert list(TermSheet.objects.filter(deal=deal, winning=True).values_list("pk", flat=True)) == [first.pk]
    assert Placement.objects.get(pk=second.placement_id).status == "lost"


def race(*calls):
    """Run the calls at the same moment in real threads (each on its own connection)."""
    barrier = threading.Barrier(len(calls))

    def at_once(call):
        def run():
            barrier.wait(timeout=10)
            return call()
        return run

    workers = [Worker(at_once(call)) for call in calls]
    for worker in workers:
        worker.start()
    return [worker.outcome() for worker in workers]


@postgres_only
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("round_", range(3))
def test_two_racing_requests_place_a_lender_once(account, api_key, round_):
    deal = deal_with_financials(account)
    (lender,) = lenders(1)
    path = f"/api/v1/deals/{deal.pk}/placements/"

    def post():
        return client_with_key(api_key).post(path, {"lender_ids": [lender.pk], "send": True}, format="json")

    answers = race(post, post)
    bodies = sorted((r.json() for r in answers), key=lambda b: b["created"])
    assert sorted(r.status_code for r in answers) == [200, 201]
    assert bodies[1]["created"] == 1 and bodies[0]["created"] == 0
    assert bodies[0]["failed"][0]["code"] == "CONFLICT"
    assert bodies[0]["failed"][0]["placement_id"] == bodies[1]["placements"][0]["id"]
    assert Placement.objects.filter(deal=deal, lender=lender).count() == 1


@postgres_only
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("round_", range(3))
def test_two_racing_requests_choose_one_winner(account, api_key, round_):
    deal = deal_with_financials(account)
    first, second = quote(place(deal, lenders(1)[0])), quote(place(deal, lenders(1)[0]))

    def select(term_sheet_id):
        return lambda: client_with_key(api_key).post(f"/api/v1/term-sheets/{term_sheet_id}/select-winner/")

    answers = race(select(first.pk), select(second.pk))
    assert sorted(r.status_code for r in answers) == [200, 409]
    refused = next(r.json() for r in answers if r.status_code == 409)
    assert refused["code"] in ("BUSINESS_RULE", "CONFLICT")
    assert TermSheet.objects.filter(deal=deal, winning=True).count() == 1
    assert sorted(Placement.objects.filter(deal=deal).values_list("status", flat=True)) == ["lost", "won"]


# --- the constraints themselves (PostgreSQL and SQLite) -------------------------------------------------
@pytest.mark.django_db
def test_the_database_refuses_a_second_open_placement_and_a_second_winner(account):
    deal = deal_with_financials(account)
    placement = place(deal, lenders(1)[0])
    with pytest.raises(IntegrityError), transaction.atomic():
        Placement.objects.create(deal=deal, lender=placement.lender, status="draft")
    Placement.objects.create(deal=deal, lender=placement.lender, status="lost")  # closed ones may repeat
    winner = quote(placement)
    TermSheet.objects.filter(pk=winner.pk).update(winning=True)
    other = quote(place(deal, lenders(1)[0]))
    with pytest.raises(IntegrityError), transaction.atomic():
        TermSheet.objects.filter(pk=other.pk).update(winning=True)


@pytest.mark.django_db
def test_a_violation_that_gets_past_the_checks_is_a_conflict_not_a_500(api, account, monkeypatch):
    deal = deal_with_financials(account)
    placement = place(deal, lenders(1)[0])
    # As if another writer had skipped the deal lock: the service's own check sees nothing open.
    real_filter = Placement.objects.filter

    def blind(*args, **kwargs):
        if "status__in" in kwargs and "lender_id__in" in kwargs:
            return Placement.objects.none()
        return real_filter(*args, **kwargs)

    monkeypatch.setattr(Placement.objects, "filter", blind)
    response = api.post(f"/api/v1/deals/{deal.pk}/placements/", {"lender_ids": [placement.lender_id]}, format="json")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "CONFLICT" and body["message"].startswith("Conflict: another request placed this deal")
    assert Placement.objects.count() == 1


@pytest.mark.django_db
def test_a_second_winner_past_the_checks_is_a_conflict(api, account, monkeypatch):
    deal = deal_with_financials(account)
    first, second = quote(place(deal, lenders(1)[0])), quote(place(deal, lenders(1)[0]))
    TermSheet.objects.filter(pk=first.pk).update(winning=True)  # written behind the service's back
    real_filter = TermSheet.objects.filter

    def blind(*args, **kwargs):
        if kwargs.get("winning") is True:
            return TermSheet.objects.none()
        return real_filter(*args, **kwargs)

    monkeypatch.setattr(TermSheet.objects, "filter", blind)
    response = api.post(f"/api/v1/term-sheets/{second.pk}/select-winner/")
    assert response.status_code == 409 and response.json()["code"] == "CONFLICT"
    monkeypatch.undo()
    assert TermSheet.objects.filter(winning=True).count() == 1
    assert Placement.objects.get(pk=second.placement_id).status == "quoted"  # rolled back whole
