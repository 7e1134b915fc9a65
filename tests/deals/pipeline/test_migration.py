"""The pipeline's migrations on a database that holds data: every account gets the default stages, and
every deal a stage read from its records, its creator as owner and a first history record saying why;
then the column is required, and the migrations go back."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from deals.models import Deal, Stage, StageChange
from lev.enums import DEFAULT_STAGES

BEFORE = [("deals", "0009_financials_interest_only_months")]


def migrate(targets):
    return MigrationExecutor(connection).migrate(targets).apps


def migrate_to_latest():
    executor = MigrationExecutor(connection)
    return migrate(executor.loader.graph.leaf_nodes())


@pytest.fixture
def before_the_pipeline():
    try:
        yield migrate(BEFORE)
    finally:
        migrate_to_latest()


@pytest.mark.django_db(transaction=True)
def test_existing_accounts_get_stages_and_existing_deals_a_stage_from_their_records(before_the_pipeline):
    old = before_the_pipeline
    user = old.get_model("auth", "User").objects.create(username="broker")
    account = old.get_model("accounts", "Account").objects.create(name="Old Co", slug="old-co")
    empty = old.get_model("accounts", "Account").objects.create(name="Empty Co", slug="empty-co")
    Deal_ = old.get_model("deals", "Deal")
    deals = {name: Deal_.objects.create(account=account, title=name, created_by=user)
             for name in ("fresh", "searched", "placed", "quoted", "won", "archived")}
    Deal_.objects.filter(pk=deals["archived"].pk).update(archived=True)
    lender = old.get_model("lenders", "Lender").objects.create(name="First Capital")
    old.get_model("deals", "LenderSearch").objects.create(account=account, deal=deals["searched"], deal_version=1)
    Placement = old.get_model("deals", "Placement")
    placements = {name: Placement.objects.create(deal=deals[name], lender=lender, status="sent")
                  for name in ("placed", "quoted", "won")}
    TermSheet = old.get_model("deals", "TermSheet")
    for name in ("quoted", "won"):
        TermSheet.objects.create(placement=placements[name], deal=deals[name], loan_amount=1_000_000,
                                 rate_type="fixed", fixed_rate=6, winning=name == "won")

    migrate_to_latest()

    for each in (account, empty):
        assert [(s.key, s.name, s.kind) for s in Stage.objects.filter(account_id=each.pk)] == list(DEFAULT_STAGES)
    placed = {name: Deal.objects.select_related("stage").get(pk=deal.pk) for name, deal in deals.items()}
    assert {name: deal.stage.key for name, deal in placed.items()} == {
        "fresh": "intake", "searched": "in_market", "placed": "in_market", "quoted": "term_sheets",
        "won": "closing", "archived": "dead"}
    assert all(deal.owner_id == user.pk and deal.stage.account_id == account.pk for deal in placed.values())
    for name, deal in placed.items():
        [start] = StageChange.objects.filter(deal=deal)
        assert (start.from_stage, start.to_stage, start.automatic) == (None, deal.stage, True), name
        assert start.reason.startswith("Placed when the pipeline was introduced"), name
    # Required from now on, and a new account still gets its stages.
    assert not Deal._meta.get_field("stage").null
    with connection.cursor() as cursor:
        columns = {c.name: c for c in connection.introspection.get_table_description(cursor, "deals_deal")}
    assert columns["stage_id"].null_ok is False

    # And back: the pipeline's tables and columns go, the deals stay.
    migrate(BEFORE)
    with connection.cursor() as cursor:
        tables = connection.introspection.table_names(cursor)
        columns = {c.name for c in connection.introspection.get_table_description(cursor, "deals_deal")}
    assert "deals_stage" not in tables and "deals_stagechange" not in tables
    assert "stage_id" not in columns and "owner_id" not in columns
    assert Deal_.objects.count() == 6
