"""Idempotency keys: their shape, their scope (account and user), and expired keys reused at once."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory

from deals.models import Deal
from lev.accounts.models import ApiKey
from lev.accounts.services import api_key_create
from lev.idempotency.models import IdempotencyRecord
from lev.idempotency.services import REPLAY_HEADER, idempotent
from lev.parsers import JSONParser
from tests.conftest import client_with_key
from tests.factories import AccountFactory, DealFactory, MembershipFactory, UserFactory
from tests.lev.concurrency import Worker, postgres_only, wait_for_lock_waiters


def post_deal(api, key: str, title: str = "Keyed"):
    return api.post("/api/v1/deals/", {"title": title}, HTTP_IDEMPOTENCY_KEY=key)


# --- the key's shape ------------------------------------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("key", ["a\x00b", "\x00", "\x01key", "key\x1f", "a b", "tab\tinside", "k" * 256,
                                 "caf\u00e9", "", "   "])
def test_a_key_that_is_not_visible_ascii_is_a_validation_error(api, key):
    response = post_deal(api, key)
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "VALIDATION_ERROR"
    assert body["message"].startswith("Validation failed: Idempotency-Key must be 1 to 255 visible ASCII")
    assert list(body["details"]["fields"]) == ["Idempotency-Key"]
    assert not Deal.objects.exists() and not IdempotencyRecord.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["k-1", "!~", "k" * 255, "  padded  ", "uuid:2f0c/x=1"])
def test_a_visible_ascii_key_is_accepted_and_replayed(api, key):
    first = post_deal(api, key)
    again = post_deal(api, key)
    assert first.status_code == 201 and again.status_code == 201
    assert again.json() == first.json() and again[REPLAY_HEADER] == "true"
    assert Deal.objects.count() == 1


# --- scope: account and user ----------------------------------------------------------------------
@pytest.mark.django_db
def test_the_same_key_and_body_for_two_accounts_of_one_user_makes_two_deals(user, account, api):
    second = AccountFactory(name="Second Fund", slug="second")
    MembershipFactory(account=second, user=user)
    _key, raw = api_key_create(user=user, account=second, name="second")
    api_second = client_with_key(raw)

    in_first = post_deal(api, "same-key", title="Same body")
    in_second = post_deal(api_second, "same-key", title="Same body")

    assert in_first.status_code == 201 and in_second.status_code == 201
    assert REPLAY_HEADER not in in_second
    assert in_first.json()["id"] != in_second.json()["id"]
    assert Deal.objects.get(pk=in_first.json()["id"]).account == account
    assert Deal.objects.get(pk=in_second.json()["id"]).account == second
    # Each account still replays its own.
    assert post_deal(api_second, "same-key", title="Same body").json()["id"] == in_second.json()["id"]
    assert post_deal(api, "same-key", title="Same body").json()["id"] == in_first.json()["id"]


@pytest.mark.django_db
def test_the_same_key_in_one_account_from_two_users_makes_two_deals(account, api):
    colleague = MembershipFactory(account=account, user=UserFactory(username="bob")).user
    _key, raw = api_key_create(user=colleague, account=account, name="bob")
    mine, theirs = post_deal(api, "shared"), post_deal(client_with_key(raw), "shared")
    assert mine.json()["id"] != theirs.json()["id"]


@pytest.mark.django_db
def test_a_session_user_is_scoped_to_the_account_the_deal_views_act_for(user, account):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_login(user)
    response = client.post("/api/v1/deals/", {"title": "Session"}, HTTP_IDEMPOTENCY_KEY="s-1")
    assert response.status_code == 201
    assert IdempotencyRecord.objects.get(key="s-1").account == account


# --- expired keys -----------------------------------------------------------------------------------
def expire(key: str) -> None:
    IdempotencyRecord.objects.filter(key=key).update(created_at=timezone.now() - dt.timedelta(hours=25))


@pytest.mark.django_db
def test_an_expired_key_runs_the_request_again(api):
    first = post_deal(api, "old", title="Old")
    expire("old")
    again = post_deal(api, "old", title="Another body is fine once the key expired")
    assert again.status_code == 201 and REPLAY_HEADER not in again
    assert again.json()["id"] != first.json()["id"]
    assert post_deal(api, "old", title="Another body is fine once the key expired").json() == again.json()
    assert IdempotencyRecord.objects.filter(key="old").count() == 1


def keyed_request(user, api_key: ApiKey, key: str) -> Request:
    wsgi = APIRequestFactory().post("/api/v1/deals/", {"title": "Race"}, format="json", HTTP_IDEMPOTENCY_KEY=key)
    request = Request(wsgi, parsers=[JSONParser()])
    request.user, request.auth = user, api_key
    return request


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_two_requests_reusing_an_expired_key_at_once_run_it_once_and_replay(user, api, api_key):
    assert post_deal(api, "race").status_code == 201
    expire("race")
    record = IdempotencyRecord.objects.get(key="race")
    key_obj = ApiKey.objects.get(user=user)
    calls: list[int] = []

    def handler() -> Response:
        calls.append(1)
        return Response({"run": len(calls)}, status=201)

    # Hold the expired record's row lock, so both requests find the key taken and queue for the
    # lock together; then let them go. One reuses the record, the other must replay it.
    with transaction.atomic():
        IdempotencyRecord.objects.select_for_update().get(pk=record.pk)
        workers = [Worker(lambda: idempotent(keyed_request(user, key_obj, "race"), handler)) for _ in range(2)]
        for worker in workers:
            worker.start()
        wait_for_lock_waiters(2)

    responses = [worker.outcome() for worker in workers]
    assert [r.status_code for r in responses] == [201, 201]
    assert len(calls) == 1
    assert responses[0].data == responses[1].data == {"run": 1}
    assert sorted(r.get(REPLAY_HEADER, "") for r in responses) == ["", "true"]
    assert IdempotencyRecord.objects.filter(key="race").count() == 1


# --- the migration that adds the account --------------------------------------------------------------
@postgres_only
@pytest.mark.django_db(transaction=True)
def test_the_account_migration_applies_to_a_database_with_records():
    executor = MigrationExecutor(connection)
    try:
        executor.migrate([("deals", "0001_initial")])
        old = executor.loader.project_state([("deals", "0001_initial")]).apps
        User, Account = old.get_model("auth", "User"), old.get_model("deals", "Account")
        Membership, OldDeal = old.get_model("deals", "Membership"), old.get_model("deals", "Deal")
        Record = old.get_model("deals", "IdempotencyRecord")
        user, loner = User.objects.create(username="u"), User.objects.create(username="loner")
        first, second = Account.objects.create(name="A", slug="a"), Account.objects.create(name="B", slug="b")
        Membership.objects.create(account=first, user=user)
        Membership.objects.create(account=second, user=user)
        deal = OldDeal.objects.create(account=second, title="In B")
        common = {"method": "POST", "request_hash": "h", "status_code": 201}
        Record.objects.create(user=user, key="create", path="/api/v1/deals/", response_body={"id": deal.pk}, **common)
        Record.objects.create(user=user, key="prop", path=f"/api/v1/deals/{deal.pk}/properties/",
                              response_body={"id": 7}, **common)
        Record.objects.create(user=user, key="other", path="/api/v1/deals/", response_body={"id": 10**6}, **common)
        Record.objects.create(user=loner, key="orphan", path="/api/v1/deals/", response_body={}, **common)

        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())

        accounts = dict(IdempotencyRecord.objects.values_list("key", "account__slug"))
        assert accounts == {"create": "b", "prop": "b", "other": "a"}  # the deal's account, else the first
    finally:  # never leave the database half-migrated for the tests after this one
        latest = MigrationExecutor(connection)
        latest.migrate(latest.loader.graph.leaf_nodes())


@pytest.mark.django_db
def test_records_of_a_deleted_account_go_with_it(api, account):
    post_deal(api, "gone")
    DealFactory(account=account)
    account.delete()
    assert not IdempotencyRecord.objects.exists()
