"""Prepared statements on PostgreSQL (LEV_DB_SERVER_SIDE_BINDING, issue 24): a query a connection has run
LEV_DB_PREPARE_THRESHOLD times is prepared, so PostgreSQL stops planning it on every request, and the
answers are the same as unprepared. Django passes psycopg `prepare_threshold=None` (never prepare) unless
OPTIONS names it, which is what once left the switch preparing nothing: these tests look at PostgreSQL's
own list of the connection's prepared statements, not at the settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from deals import selectors
from deals.serializers import DealSerializer
from tests.factories import DealFactory

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _postgresql():
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")


def prepared() -> dict[str, int]:
    """The connection's prepared statements: the statement's text -> how often it ran on a generic plan."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements")
        return dict(cursor.fetchall())


def test_the_settings_ask_for_server_side_binding_and_a_threshold():
    options = settings.DATABASES["default"]["OPTIONS"]
    assert options["server_side_binding"] is True
    assert options["prepare_threshold"] == 5


def test_a_query_run_often_is_prepared_and_answers_the_same():
    deal = DealFactory()
    answers = []
    for _ in range(8):
        found = selectors.deal_get(account=deal.account, deal_id=deal.pk)
        answers.append(json.dumps(DealSerializer(found).data, default=str))
    assert len(set(answers)) == 1  # the same deal, before and after it is prepared
    reads = [(text, runs) for text, runs in prepared().items() if 'FROM "deals_deal"' in text]
    assert reads, "the deal read was not prepared"
    assert max(runs for _, runs in reads) >= 3  # ran prepared (8 runs, prepared from the 5th or 6th)


def test_a_query_run_once_is_not_prepared():
    DealFactory()
    before = set(prepared())
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM deals_deal WHERE id > %s", [-12345])
    assert not any("-12345" in text or "id > $1" in text for text in set(prepared()) - before)


# A process of its own (the settings are read at start): runs one query 8 times, then prints the
# connection's prepare threshold and how many statements PostgreSQL holds prepared for it.
SCRIPT = (
    "import django; django.setup()\n"
    "from django.db import connection\n"
    "c = connection.cursor()\n"
    "for _ in range(8): c.execute('SELECT %s + 1', [41]); c.fetchall()\n"
    "c.execute('SELECT count(*) FROM pg_prepared_statements')\n"
    "print(connection.settings_dict['OPTIONS'].get('prepare_threshold'), c.fetchone()[0])\n"
)


def threshold_and_prepared(**switches: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LEV_DB_SERVER_SIDE_BINDING", "LEV_DB_PREPARE_THRESHOLD")}
    env.update(DJANGO_SETTINGS_MODULE="lev.settings", **switches)
    if not env.get("DATABASE_URL", "").startswith("postgres"):
        pytest.skip("needs DATABASE_URL on PostgreSQL")
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=60, check=True)
    return out.stdout.split()[-2:]


def test_switched_off_nothing_is_prepared():
    """LEV_DB_SERVER_SIDE_BINDING=false: Django's client-side binding, nothing prepared."""
    assert threshold_and_prepared(LEV_DB_SERVER_SIDE_BINDING="false") == ["None", "0"]


def test_switched_on_in_a_process_of_its_own_the_same_query_is_prepared():
    """The same script with the defaults: the control for the test above."""
    assert threshold_and_prepared() == ["5", "1"]
