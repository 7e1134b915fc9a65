"""The model moves of the restructuring (issue 20), run on a database that holds data: accounts,
memberships and API keys (deals → accounts), idempotency records (deals → idempotency), lender
searches and matches (lenders → deals). The migrations change state only, so every row stays in its
table; the content types change app label in place, so permissions, groups and the admin's history
keep pointing at them. And the moves go back and forth."""

from __future__ import annotations

import json
import uuid

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Group, User
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from deals.models import Deal
from deals.placements.models import Placement
from deals.searches.models import LenderMatch, LenderSearch
from lev.accounts.auth import hash_key
from lev.accounts.models import Account, ApiKey, Membership
from lev.idempotency.models import IdempotencyRecord
from lev.oauth.models import OAuthAuthorization
from tests.conftest import client_with_key

# The schema as main left it before the move: the last migration of each app that existed then, and
# none of the two apps the move made.
BEFORE_MOVE = [("deals", "0006_list_keyset_indexes"), ("lenders", "0006_ranking_top_n"),
               ("oauth", "0002_authorization_code_checksum"), ("accounts", None), ("idempotency", None)]

RAW_KEY = "lev_sk_" + "m" * 43  # the API key made before the move

# (old app label, new app label, model): every model that moved, and its model class today.
MOVED = {
    ("deals", "accounts", "account"): Account,
    ("deals", "accounts", "membership"): Membership,
    ("deals", "accounts", "apikey"): ApiKey,
    ("deals", "idempotency", "idempotencyrecord"): IdempotencyRecord,
    ("lenders", "deals", "lendersearch"): LenderSearch,
    ("lenders", "deals", "lendermatch"): LenderMatch,
}


def migrate(targets):
    """Migrate to `targets` and return the historical models of the state reached."""
    executor = MigrationExecutor(connection)
    state = executor.migrate(targets)
    ContentType.objects.clear_cache()  # ids are cached per model; the rows under them just changed
    return state.apps


def migrate_to_latest():
    executor = MigrationExecutor(connection)
    return migrate(executor.loader.graph.leaf_nodes())


@pytest.fixture
def migrated_back_then_latest():
    """The database before the move for the test's body; whatever happens in it, at the latest
    migration again after it, as every other test expects."""
    try:
        yield migrate(BEFORE_MOVE)
    finally:
        migrate_to_latest()


def fill_old_schema(old) -> dict:
    """A row in every moved table and in the tables that point at them, written with the models as
    they were before the move; plus the content types of the moved models, a permission on each held
    by a group, and an admin log entry on each row. Returns the ids to look for."""
    User = old.get_model("auth", "User")
    user = User.objects.create(username="mover", email="mover@example.com", is_staff=True, is_superuser=True)
    account = old.get_model("deals", "Account").objects.create(name="Moving Co", slug="moving-co")
    membership = old.get_model("deals", "Membership").objects.create(account=account, user=user, role="owner")
    api_key = old.get_model("deals", "ApiKey").objects.create(
        account=account, user=user, name="laptop", prefix=RAW_KEY[:12], key_hash=hash_key(RAW_KEY),
        scopes="deals:read lenders:read")
    deal = old.get_model("deals", "Deal").objects.create(account=account, title="Harbor Point", created_by=user)
    lender = old.get_model("lenders", "Lender").objects.create(name="First Capital")
    program = old.get_model("lenders", "LenderProgram").objects.create(lender=lender, title="Bridge")
    search = old.get_model("lenders", "LenderSearch").objects.create(
        account=account, deal=deal, deal_version=1, status="completed", total_candidates=1, total_matches=1,
        ranked_matches=1, created_by=user)
    match = old.get_model("lenders", "LenderMatch").objects.create(
        search=search, lender=lender, rank=1, score=91, program_count=1, programs=[{"id": program.pk}])
    placement = old.get_model("deals", "Placement").objects.create(
        deal=deal, lender=lender, program=program, source_search=search, source_rank=1, created_by=user)
    record = old.get_model("deals", "IdempotencyRecord").objects.create(
        account=account, user=user, key="k-1", method="POST", path="/api/v1/deals/", request_hash="r" * 64,
        status_code=201, response_body={"id": deal.pk})
    application = old.get_model("oauth2_provider", "Application").objects.create(
        name="Claude", client_type="public", authorization_grant_type="authorization-code",
        redirect_uris="https://claude.ai/api/mcp/auth_callback")
    authorization = old.get_model("oauth", "OAuthAuthorization").objects.create(
        user=user, account=account, application=application, token_family=uuid.uuid4(), scope="deals:read")

    rows = {"account": account, "membership": membership, "apikey": api_key, "idempotencyrecord": record,
            "lendersearch": search, "lendermatch": match}
    ContentType = old.get_model("contenttypes", "ContentType")
    Permission = old.get_model("auth", "Permission")
    LogEntry = old.get_model("admin", "LogEntry")
    group = old.get_model("auth", "Group").objects.create(name="Movers")
    content_types, entries = {}, {}
    for old_label, _new_label, model in MOVED:
        content_type, _ = ContentType.objects.get_or_create(app_label=old_label, model=model)
        content_types[model] = content_type.pk
        permission, _ = Permission.objects.get_or_create(
            content_type=content_type, codename=f"audit_{model}", defaults={"name": f"Can audit {model}"})
        group.permissions.add(permission)
        entries[model] = LogEntry.objects.create(
            user=user, content_type=content_type, object_id=str(rows[model].pk), object_repr=model,
            action_flag=2, change_message="[]").pk
    return {"user": user.pk, "account": account.pk, "membership": membership.pk, "apikey": api_key.pk,
            "deal": deal.pk, "lender": lender.pk, "program": program.pk, "search": search.pk,
            "match": match.pk, "placement": placement.pk, "record": record.pk,
            "authorization": authorization.pk, "group": group.pk, "content_types": content_types,
            "entries": entries}


def assert_rows_under_todays_models(ids: dict) -> None:
    account = Account.objects.get(pk=ids["account"])
    assert (account.name, account.slug) == ("Moving Co", "moving-co")
    membership = Membership.objects.get(pk=ids["membership"])
    assert (membership.account_id, membership.user_id, membership.role) == (account.pk, ids["user"], "owner")
    api_key = ApiKey.objects.get(pk=ids["apikey"])
    assert (api_key.account_id, api_key.user_id, api_key.key_hash, api_key.scopes) == (
        account.pk, ids["user"], hash_key(RAW_KEY), "deals:read lenders:read")
    deal = Deal.objects.get(pk=ids["deal"])
    assert (deal.account, deal.title) == (account, "Harbor Point")
    assert list(account.deals.all()) == [deal]
    search = LenderSearch.objects.get(pk=ids["search"])
    assert (search.account, search.deal, search.created_by_id, search.status) == (
        account, deal, ids["user"], "completed")
    assert list(deal.lender_searches.all()) == [search]
    match = LenderMatch.objects.get(pk=ids["match"])
    assert (match.search, match.lender_id, match.rank, match.score) == (search, ids["lender"], 1, 91)
    assert list(search.matches.all()) == [match]
    placement = Placement.objects.get(pk=ids["placement"])
    assert (placement.deal, placement.lender_id, placement.program_id, placement.source_search) == (
        deal, ids["lender"], ids["program"], search)
    record = IdempotencyRecord.objects.get(pk=ids["record"])
    assert (record.account, record.user_id, record.key, record.response_body) == (
        account, ids["user"], "k-1", {"id": deal.pk})
    authorization = OAuthAuthorization.objects.get(pk=ids["authorization"])
    assert (authorization.account, authorization.user_id) == (account, ids["user"])


def assert_content_types_moved(ids: dict) -> None:
    rows = {"account": ids["account"], "membership": ids["membership"], "apikey": ids["apikey"],
            "idempotencyrecord": ids["record"], "lendersearch": ids["search"], "lendermatch": ids["match"]}
    group = Group.objects.get(pk=ids["group"])
    for (old_label, new_label, model), model_class in MOVED.items():
        content_type = ContentType.objects.get_for_model(model_class)
        assert (content_type.app_label, content_type.model) == (new_label, model)
        assert content_type.pk == ids["content_types"][model]  # relabelled in place, not made anew
        assert not ContentType.objects.filter(app_label=old_label, model=model).exists()
        assert group.permissions.get(codename=f"audit_{model}").content_type == content_type
        entry = LogEntry.objects.get(pk=ids["entries"][model])
        assert entry.content_type == content_type
        assert entry.get_edited_object() == model_class.objects.get(pk=rows[model])
    labels = list(ContentType.objects.values_list("app_label", "model"))
    assert len(labels) == len(set(labels))


def assert_content_types_back(old, ids: dict) -> None:
    ContentType = old.get_model("contenttypes", "ContentType")
    for old_label, new_label, model in MOVED:
        content_type = ContentType.objects.get(app_label=old_label, model=model)
        assert content_type.pk == ids["content_types"][model]
        assert not ContentType.objects.filter(app_label=new_label, model=model).exists()


@pytest.mark.django_db(transaction=True)
def test_a_database_from_before_the_move_migrates_with_its_rows_and_back(migrated_back_then_latest):
    ids = fill_old_schema(migrated_back_then_latest)

    migrate_to_latest()
    assert_rows_under_todays_models(ids)
    assert_content_types_moved(ids)

    # Back to before the move: the rows are still there for the old models, under the old labels.
    old = migrate(BEFORE_MOVE)
    assert_content_types_back(old, ids)
    assert old.get_model("lenders", "LenderSearch").objects.get(pk=ids["search"]).account_id == ids["account"]
    assert old.get_model("deals", "Placement").objects.get(pk=ids["placement"]).source_search_id == ids["search"]
    assert old.get_model("deals", "IdempotencyRecord").objects.filter(pk=ids["record"]).exists()
    # `migrate` there with today's code makes the content types of today's models again (post_migrate):
    # forwards, those newer, empty types give way to the old ones, which keep their ids.
    ContentType = old.get_model("contenttypes", "ContentType")
    for _old_label, new_label, model in MOVED:
        stale = ContentType.objects.create(app_label=new_label, model=model)
        old.get_model("auth", "Permission").objects.create(
            content_type=stale, codename=f"view_{model}", name=f"Can view {model}")

    migrate_to_latest()
    assert_rows_under_todays_models(ids)
    assert_content_types_moved(ids)


@pytest.mark.django_db(transaction=True)
def test_the_migrate_command_on_a_database_from_before_the_move_then_it_serves(migrated_back_then_latest):
    """What `make run` does after a pull: `migrate` (with its post_migrate, which makes the content
    types of today's models when missing), then requests with what was made before the move."""
    ids = fill_old_schema(migrated_back_then_latest)

    call_command("migrate", interactive=False, verbosity=0)
    ContentType.objects.clear_cache()
    assert_rows_under_todays_models(ids)
    assert_content_types_moved(ids)

    api = client_with_key(RAW_KEY)  # the key made before the move still opens the API
    response = api.get("/api/v1/deals/")
    assert response.status_code == 200, response.content
    assert [deal["id"] for deal in response.json()["results"]] == [ids["deal"]]
    response = api.get(f"/api/v1/lender-searches/{ids['search']}/")
    assert response.status_code == 200, response.content
    assert (response.json()["search_id"], response.json()["status"]) == (ids["search"], "completed")
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "get_deal", "arguments": {"deal_id": ids["deal"]}}})
    response = Client().generic("POST", "/mcp", body, content_type="application/json", headers={
        "Accept": "application/json, text/event-stream", "Authorization": f"Bearer {RAW_KEY}"})
    assert response.status_code == 200, response.content
    assert response.json()["result"]["structuredContent"]["deal"]["title"] == "Harbor Point"

    admin = Client()
    admin.force_login(User.objects.get(pk=ids["user"]))
    response = admin.get("/admin/deals/lendersearch/")
    assert response.status_code == 200
    assert f"/admin/deals/lendersearch/{ids['search']}/change/" in response.content.decode()
    response = admin.get("/admin/lenders/lendersearch/")
    assert (response.status_code, response["Location"]) == (301, "/admin/deals/lendersearch/")
    response = admin.get(f"/admin/deals/lendersearch/{ids['search']}/history/")
    assert response.status_code == 200
    assert response.context["action_list"][0].pk == ids["entries"]["lendersearch"]
    response = admin.get(f"/admin/accounts/account/{ids['account']}/history/")
    assert response.context["action_list"][0].pk == ids["entries"]["account"]
