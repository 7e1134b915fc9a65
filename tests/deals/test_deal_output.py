"""deals.serializers.deal_output (over deals.selectors.deal_row) answers DealSerializer's bytes.

The deal detail is written by that explicit function rather than by DealSerializer (issue 40: the hot
read written plainly); both doors answer through the same view, so holding the function to the
serializer here is what keeps REST, MCP and the OpenAPI schema's promise one. Each deal below is read
both ways, from the same row, and compared as the JSON the view renders, and value by value with each
value's type, keys in order: nulls and every field set, money at every scale the column holds, date-times
with and without microseconds in no, UTC's, and other active time zones, and the stage, owner, sponsor
and borrower missing or present.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from django.db import OperationalError, connection, connections
from django.test import Client
from django.utils import timezone
from rest_framework.renderers import JSONRenderer

from deals import selectors
from deals.companies.models import Company
from deals.models import Deal
from deals.pipeline.models import Stage
from deals.serializers import DealSerializer, deal_output
from lev.errors import DealNotFound
from lev.outages import is_dependency_outage
from tests.factories import AccountFactory, DealFactory, DealFinancialsFactory, UserFactory

pytestmark = pytest.mark.django_db

AMOUNTS = [None, Decimal("0.01"), Decimal("0.10"), Decimal("1"), Decimal("12.3"), Decimal("18500000.25"),
           Decimal("1000000"), Decimal("999999999999.99")]
# No zone activated (the default, UTC), UTC, zones behind and ahead of it, half- and quarter-hour offsets,
# and one whose offset differs between the stored instants (daylight saving).
ZONES = [None, "UTC", "America/New_York", "America/St_Johns", "Asia/Kolkata", "Pacific/Chatham",
         "Europe/London"]
INSTANTS = [dt.datetime(2026, 1, 15, 9, 30, tzinfo=dt.UTC), dt.datetime(2026, 7, 4, 23, 59, 59, 123456, tzinfo=dt.UTC),
            dt.datetime(2031, 12, 31, 23, 0, 0, 1, tzinfo=dt.UTC)]


def typed(value: Any) -> Any:
    """`value` with every dict's keys in order and every leaf's type: equal only when the two answers are
    the same Python values, not merely equal ones (True is not 1, Decimal("1.0") not Decimal("1.00"))."""
    if isinstance(value, dict):
        return [(key, typed(item)) for key, item in value.items()]
    if isinstance(value, Decimal):
        return ("Decimal", str(value))
    return (type(value).__name__, value)


@pytest.fixture
def deals(account) -> tuple[Any, list[Deal]]:
    """An account's deals covering the fields' kinds of value (see the module docstring)."""
    owner = UserFactory(username="ø-owner")
    sponsor = Company.objects.create(account=account, kind="sponsor", name="Ünïcode “Sponsor” LLC")
    borrower = Company.objects.create(account=account, kind="borrower", name="Borrower SPE <1>")
    custom = Stage.objects.create(account=account, name="Term sheet — signed", kind="open", position=99)
    made = []
    for i, amount in enumerate(AMOUNTS):
        deal = DealFactory(account=account, loan_amount=amount, title=f"Deal {i} \"quoted\" \\ \u2028 end",
                           description="" if i % 2 else "Line one\nline two\ttab",
                           business_plan="" if i % 3 == 0 else "value_add",
                           estimated_close_date=None if i % 2 else dt.date(2027, 2, 28 - i))
        changes: dict[str, Any] = {
            "owner": owner if i % 2 == 0 else None,
            "sponsor": sponsor if i % 3 != 1 else None,
            "borrower": borrower if i % 4 in (1, 2) else None,
            "created_at": INSTANTS[i % 3], "updated_at": INSTANTS[(i + 1) % 3],
        }
        if i % 4 == 3:
            changes["stage"] = custom  # no key: written as ""
        if i >= 5:
            changes.update(archived=True, archived_at=INSTANTS[(i + 2) % 3])
        Deal.objects.filter(pk=deal.pk).update(**changes)
        made.append(deal)
    return account, made


@pytest.mark.parametrize("zone", ZONES)
def test_deal_output_writes_what_deal_serializer_writes(deals, zone):
    account, made = deals
    with timezone.override(zone) if zone else contextlib.nullcontext():
        for deal in made:
            row = selectors.deal_row(account=account, deal_id=deal.pk)
            # The instance as the views read it, and plainly: the serializer's answer does not depend on which.
            for instance in (selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True),
                             Deal.objects.get(pk=deal.pk)):
                expected = DealSerializer(instance).data
                ours = deal_output(row)
                assert JSONRenderer().render(ours) == JSONRenderer().render(expected)
                assert typed(ours) == typed(expected)


def test_the_cases_are_covered(deals):
    """The fixture holds what the comparison above claims to cover (a fixture changed later cannot
    silently narrow it)."""
    account, made = deals
    rows = [selectors.deal_row(account=account, deal_id=d.pk) for d in made]
    for column in ("loan_amount", "estimated_close_date", "archived_at", "owner__id", "sponsor__id",
                   "borrower__id"):
        assert {row[column] is None for row in rows} == {True, False}, column
    assert {row["stage__key"] == "" for row in rows} == {True, False}
    assert {row["archived"] for row in rows} == {True, False}
    assert {row["created_at"].microsecond == 0 for row in rows} == {True, False}


def test_the_row_is_one_query_and_tenancy_holds(deals, django_assert_num_queries):
    account, made = deals
    with django_assert_num_queries(1):
        selectors.deal_row(account=account, deal_id=made[0].pk)
    other = AccountFactory()
    for account_, deal_id in ((other, made[0].pk), (account, made[-1].pk + 1000), (account, 0), (account, -5),
                              (account, 2**63), (account, 10**30)):
        with pytest.raises(DealNotFound):
            selectors.deal_row(account=account_, deal_id=deal_id)


def test_the_rest_detail_answers_the_serializers_bytes(api, account, user):
    """The view answers the same bytes DealSerializer would render, for a bare deal and a full one."""
    sponsor = Company.objects.create(account=account, kind="sponsor", name="Sponsor")
    bare = DealFactory(account=account, loan_amount=None, business_plan="")
    full = DealFactory(account=account, loan_amount=Decimal("2500000.50"), estimated_close_date=dt.date(2027, 1, 2))
    Deal.objects.filter(pk=full.pk).update(owner=user, sponsor=sponsor, borrower=sponsor, archived=True,
                                           archived_at=timezone.now())
    for deal in (bare, full):
        response = api.get(f"/api/v1/deals/{deal.pk}/")
        assert response.status_code == 200
        assert response.content == JSONRenderer().render(DealSerializer(Deal.objects.get(pk=deal.pk)).data)


@pytest.mark.parametrize("zone", [None, "Asia/Kolkata"])
def test_the_detail_with_financials_answers_the_serializers_bytes(deals, api, zone):
    """`?include=financials` (MCP get_deal's include): the deal by deal_output, its financials as
    DealSerializer writes them, with financials missing and present, interest-only and amortizing, with
    and without a loan amount (the ratios read the deal's)."""
    _account, made = deals
    for i, deal in enumerate(made):
        if i % 3 != 2:  # the first deal (no loan amount) among those with figures
            DealFinancialsFactory(deal=deal, interest_only_months=(i % 2) * 24, stabilized_noi=Decimal("1250000.5"),
                                  interest_rate=Decimal("6.125") if i % 2 else Decimal("0"), amortization_years=30)
    Deal.objects.filter(pk=made[1].pk).update(loan_type="bridge")
    with timezone.override(zone) if zone else contextlib.nullcontext():
        for deal in made:
            response = api.get(f"/api/v1/deals/{deal.pk}/", {"include": "financials"})
            assert response.status_code == 200, response.content
            expected = DealSerializer(Deal.objects.get(pk=deal.pk), include=frozenset({"financials"})).data
            assert response.content == JSONRenderer().render(expected)


# --- failures of the read surface as any query's: a statement cancelled, a connection cut ----------------
@pytest.mark.django_db(transaction=True)
def test_a_cancelled_detail_read_is_an_outage_and_the_connection_reads_again(account, api_key):
    """The detail's read cancelled by the database (statement_timeout) while another session locks the
    table: deal_row raises what the ORM raises, an outage, the API answers 503 UPSTREAM_UNAVAILABLE, and
    the same connection reads again once the lock is gone."""
    if connection.vendor != "postgresql":
        pytest.skip("statement_timeout is PostgreSQL's")
    deal = DealFactory(account=account)
    auth = {"Authorization": f"Bearer {api_key}"}
    params = {k: v for k, v in connection.get_connection_params().items()
              if k in ("dbname", "user", "host", "port", "password")}
    options = connections.databases["default"].setdefault("OPTIONS", {})
    before = options.get("options")
    options["options"] = "-c statement_timeout=100"
    connections.close_all()
    try:
        assert selectors.deal_row(account=account, deal_id=deal.pk)["id"] == deal.pk
        with psycopg.connect(**params) as locker:
            locker.execute("LOCK TABLE deals_deal IN ACCESS EXCLUSIVE MODE")
            try:
                with pytest.raises(OperationalError) as cancelled:
                    selectors.deal_row(account=account, deal_id=deal.pk)
                refused = Client().get(f"/api/v1/deals/{deal.pk}/", headers=auth)
            finally:
                locker.rollback()
        raw = connection.connection
        assert selectors.deal_row(account=account, deal_id=deal.pk)["id"] == deal.pk
        assert connection.connection is raw  # the same connection, still usable
    finally:
        options["options"] = before
        connections.close_all()
    assert "canceling statement due to statement timeout" in str(cancelled.value)
    assert is_dependency_outage(cancelled.value)
    assert refused.status_code == 503 and refused.json()["code"] == "UPSTREAM_UNAVAILABLE"
    assert Client().get(f"/api/v1/deals/{deal.pk}/", headers=auth).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_a_cut_connection_is_an_outage_and_the_read_recovers(account, db_proxy):
    deal = DealFactory(account=account)
    assert selectors.deal_row(account=account, deal_id=deal.pk)["id"] == deal.pk
    db_proxy.cut()
    with pytest.raises(Exception) as cut:  # whichever the driver raises: an outage
        selectors.deal_row(account=account, deal_id=deal.pk)
    assert is_dependency_outage(cut.value), repr(cut.value)
    db_proxy.restore()
    connections.close_all()
    assert selectors.deal_row(account=account, deal_id=deal.pk)["id"] == deal.pk


def test_the_scope_of_the_properties_page_is_the_accounts_deal_in_one_small_query(account, django_assert_num_queries):
    deal = DealFactory(account=account)
    with django_assert_num_queries(1) as captured:
        assert selectors.deal_scope(account=account, deal_id=deal.pk).pk == deal.pk
    assert "JOIN" not in captured.captured_queries[0]["sql"].upper()
    for account_, deal_id in ((AccountFactory(), deal.pk), (account, deal.pk + 1000), (account, 0), (account, 2**63)):
        with pytest.raises(DealNotFound):
            selectors.deal_scope(account=account_, deal_id=deal_id)
