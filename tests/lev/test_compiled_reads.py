"""Compiled reads (lev.compiled, LEV_COMPILED_READS) answer what the ORM answers, on the database the
suite runs on (SQLite and PostgreSQL): the deal read (deals.selectors.deal_get) for every include shape,
instance for instance, serializer output, REST and MCP answers byte for byte with the switch on and off;
the same refusals; the same number of queries; compiled once per shape and alias; a shape the facility
cannot reproduce is read by the ORM; and a statement cancelled or a connection cut surfaces as before."""

from __future__ import annotations

import datetime as dt
import json
import threading
from decimal import Decimal

import psycopg
import pytest
from django.db import OperationalError, connection, connections
from django.db.models.sql.compiler import SQLCompiler
from django.test import Client
from django.utils import timezone
from rest_framework.renderers import JSONRenderer

from deals import selectors
from deals.companies.models import Company
from deals.models import Deal, DealProperty
from deals.serializers import DealSerializer
from lev.compiled import CompiledRead
from lev.errors import DealNotFound
from lev.limits import MAX_ID
from lev.outages import is_dependency_outage
from tests.factories import DealFactory, DealFinancialsFactory, DealPropertyFactory, UserFactory

pytestmark = pytest.mark.django_db

SHAPES = [frozenset(), frozenset({"financials"}), frozenset({"properties"}), frozenset({"financials", "properties"})]
READ = selectors._DEAL_READ
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(autouse=True)
def _fresh_plans():
    READ.clear()
    yield
    READ.clear()


def full_deal(account) -> Deal:
    owner = UserFactory(username=f"owner-{account.pk}", first_name="Zoë", last_name="Ō Neil")
    sponsor = Company.objects.create(account=account, name="Sponsor “One”", kind="sponsor")
    borrower = Company.objects.create(account=account, name="Borrower LLC", website="https://b.example")
    deal = DealFactory(account=account, title="Ünïcode “Tower”", loan_amount=Decimal("18500000.25"),
                       description="Line one\nline two", estimated_close_date=dt.date(2027, 3, 31),
                       owner=owner, sponsor=sponsor, borrower=borrower)
    Deal.objects.filter(pk=deal.pk).update(archived=True, archived_at=timezone.now())
    DealPropertyFactory(deal=deal, units=120, square_footage=98_000, year_built=1987)
    DealPropertyFactory(deal=deal, units=None, square_footage=None, year_built=None, address="", zip="")
    DealFinancialsFactory(deal=deal)
    return deal


def bare_deal(account) -> Deal:
    """No owner, sponsor, borrower, financials or properties; nulls wherever a column allows."""
    deal = DealFactory(account=account, loan_amount=None, estimated_close_date=None)
    Deal.objects.filter(pk=deal.pk).update(owner=None, sponsor=None, borrower=None)
    return deal


def orm_read(account, deal_id, include) -> list[Deal]:
    return list(selectors._deal_read(include, account_id=account.pk, deal_id=deal_id))


def values(obj) -> dict | None:
    if obj is None:
        return None
    return {"type": type(obj), "db": obj._state.db, "adding": obj._state.adding,
            **{f.attname: getattr(obj, f.attname) for f in type(obj)._meta.concrete_fields}}


def described(deal: Deal) -> dict:
    """Everything an instance carries: its values and state, and the related objects it holds."""
    cached = deal._state.fields_cache
    out = {"deal": values(deal), "cached": sorted(cached),
           **{name: values(cached[name]) for name in ("stage", "owner", "sponsor", "borrower") if name in cached}}
    if "financials" in cached:
        out["financials"] = values(cached["financials"])
        if cached["financials"] is not None:
            out["financials back"] = cached["financials"]._state.fields_cache.get("deal") is deal
    prefetched = getattr(deal, "_prefetched_objects_cache", {})
    out["prefetched"] = {name: [values(p) for p in qs] for name, qs in prefetched.items()}
    return out


@pytest.mark.parametrize("include", SHAPES, ids=lambda s: ",".join(sorted(s)) or "nothing")
def test_the_compiled_read_builds_the_orms_instances(account, settings, include):
    settings.LEV_COMPILED_READS = True
    for deal in (full_deal(account), bare_deal(account)):
        compiled = READ(include, account_id=account.pk, deal_id=deal.pk)
        orm = orm_read(account, deal.pk, include)
        assert len(compiled) == len(orm) == 1
        assert described(compiled[0]) == described(orm[0])
        assert compiled[0].owner == orm[0].owner  # None for the bare deal, not a lookup
        rendered = [JSONRenderer().render(DealSerializer(d, include=include).data) for d in (compiled[0], orm[0])]
        assert rendered[0] == rendered[1]
    assert READ.compilations == 1
    assert type(READ.plans[include, "default"]).__name__ == "_Plan"  # compiled, not the ORM's long way


def test_null_foreign_keys_are_none_and_read_nothing_more(account, settings, django_assert_num_queries):
    settings.LEV_COMPILED_READS = True
    deal = bare_deal(account)
    with django_assert_num_queries(1):
        got = selectors.deal_get(account=account, deal_id=deal.pk, include=frozenset({"financials"}))
        assert got.owner is None and got.sponsor is None and got.borrower is None
        assert got.stage.account_id == account.pk
        assert not hasattr(got, "financials")  # the reverse one-to-one known to be missing, no query


@pytest.mark.parametrize("switch", [True, False], ids=["compiled", "orm"])
def test_refusals_are_the_same(account, other_account, settings, switch):
    settings.LEV_COMPILED_READS = switch
    mine, theirs, gone = full_deal(account), bare_deal(other_account), bare_deal(account)
    gone_id = gone.pk
    gone.delete()
    for include in SHAPES:
        assert selectors.deal_get(account=account, deal_id=mine.pk, include=include).pk == mine.pk
        for deal_id in (theirs.pk, gone_id, mine.pk + 10_000, 1, MAX_ID, MAX_ID + 1, 0, -1, 10**30):
            if deal_id == mine.pk:
                continue
            with pytest.raises(DealNotFound) as refused:
                selectors.deal_get(account=account, deal_id=deal_id, include=include)
            assert str(refused.value) == str(DealNotFound(deal_id))
            assert vars(refused.value) == vars(DealNotFound(deal_id))


@pytest.mark.parametrize("include", SHAPES, ids=lambda s: ",".join(sorted(s)) or "nothing")
def test_the_number_of_queries_is_the_orms(account, settings, include, django_assert_num_queries):
    deal = full_deal(account)
    settings.LEV_COMPILED_READS = False
    with django_assert_num_queries(2 if "properties" in include else 1):
        orm = selectors.deal_get(account=account, deal_id=deal.pk, include=include)
    settings.LEV_COMPILED_READS = True
    selectors.deal_get(account=account, deal_id=deal.pk, include=include)  # compiles (no query for that)
    with django_assert_num_queries(2 if "properties" in include else 1):
        compiled = selectors.deal_get(account=account, deal_id=deal.pk, include=include)
        assert described(compiled) == described(orm)  # inside: no lazy query afterwards either


class CountingCompiler:
    """Counts the ORM's compilations of deal queries: SQLCompiler.as_sql, Django's own, runs as always."""

    def __init__(self, monkeypatch):
        self.deal_compilations = 0
        original = SQLCompiler.as_sql

        def as_sql(compiler, *args, **kwargs):
            if compiler.query.model is Deal:
                self.deal_compilations += 1
            return original(compiler, *args, **kwargs)

        monkeypatch.setattr(SQLCompiler, "as_sql", as_sql)


def test_a_shape_is_compiled_once_per_alias(account, settings, monkeypatch):
    deal = full_deal(account)
    counter = CountingCompiler(monkeypatch)
    settings.LEV_COMPILED_READS = False
    for _ in range(3):
        selectors.deal_get(account=account, deal_id=deal.pk)
    assert counter.deal_compilations == 3  # the long way compiles on every read
    settings.LEV_COMPILED_READS = True
    for include in SHAPES:
        counter.deal_compilations = 0
        selectors.deal_get(account=account, deal_id=deal.pk, include=include)
        assert counter.deal_compilations == 2  # once per set of stand-ins
        for _ in range(5):
            assert selectors.deal_get(account=account, deal_id=deal.pk, include=include).pk == deal.pk
        assert counter.deal_compilations == 2  # not again
    assert READ.compilations == len(SHAPES)
    assert set(READ.plans) == {(include, "default") for include in SHAPES}
    # The include words an API may pass but the read does not know do not make shapes of their own.
    selectors.deal_get(account=account, deal_id=deal.pk, include=frozenset({"properties", "other"}))
    assert READ.compilations == len(SHAPES)


@pytest.mark.parametrize("include", SHAPES, ids=lambda s: ",".join(sorted(s)) or "nothing")
def test_rest_and_mcp_answers_are_byte_for_byte_the_orms(account, api_key, settings, include):
    full, bare = full_deal(account), bare_deal(account)
    auth = {"Authorization": f"Bearer {api_key}"}
    query = "?include=" + ",".join(sorted(include)) if include else ""
    answers = {}
    for switch in (True, False, True):  # the compiled read again, after the ORM's
        settings.LEV_COMPILED_READS = switch
        got = []
        for deal_id in (full.pk, bare.pk, full.pk + 10_000):
            rest = Client().get(f"/api/v1/deals/{deal_id}/{query}", headers={**auth, "X-Request-Id": "same"})
            arguments = {"deal_id": deal_id, **({"include": sorted(include)} if include else {})}
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                               "params": {"name": "get_deal", "arguments": arguments}})
            mcp = Client().post("/mcp", body, content_type="application/json",
                                headers={**HEADERS, **auth, "X-Request-Id": "same"})
            got.append((rest.status_code, rest.content, mcp.status_code, mcp.content))
        answers.setdefault(switch, []).append(got)
    assert answers[True][0] == answers[False][0] == answers[True][1]
    statuses = [(rest, mcp) for rest, _, mcp, _ in answers[True][0]]
    assert statuses == [(200, 200), (200, 200), (404, 200)]
    # Each shape the API and the tool read was compiled once, whatever the number of reads.
    assert READ.compilations == len(READ.plans) >= 1
    assert {type(plan).__name__ for plan in READ.plans.values()} == {"_Plan"}


def test_shapes_it_cannot_reproduce_are_read_by_the_orm(account, settings, caplog):
    settings.LEV_COMPILED_READS = True
    deal = full_deal(account)

    def build(shape, *, deal_id):
        qs = Deal.objects.filter(account=account.pk).select_related("stage")
        if shape == "shifted":  # the value is not a parameter as given: the SQL gets deal_id + 1
            return qs.filter(pk=deal_id + 1)
        if shape == "empty":  # the ORM answers without a query
            return qs.filter(pk__in=[])
        if shape == "values":
            return qs.filter(pk=deal_id).values("id")
        if shape == "picky" and deal_id > 10**9:  # refuses the stand-ins, not the call's values
            raise ValueError(deal_id)
        if shape == "locked":
            return qs.filter(pk=deal_id).select_for_update()
        return qs.filter(pk=deal_id, archived=True)  # a constant beside the parameter: compiled

    read = CompiledRead("test.shapes", Deal, build, params=("deal_id",))
    assert [d.pk for d in read("plain", deal_id=deal.pk)] == [deal.pk]
    assert [d.pk for d in read("shifted", deal_id=deal.pk - 1)] == [deal.pk]
    assert read("empty", deal_id=deal.pk) == []
    assert read("values", deal_id=deal.pk) == [{"id": deal.pk}]
    assert [d.pk for d in read("picky", deal_id=deal.pk)] == [deal.pk]
    assert type(read.plans["plain", "default"]).__name__ == "_Plan"
    for shape in ("shifted", "empty", "values", "picky"):
        assert type(read.plans[shape, "default"]).__name__ != "_Plan"
        assert any(shape in r.getMessage() and r.name == "lev.compiled" for r in caplog.records)
    read.build("locked", deal_id=1)  # (select_for_update needs a transaction: only the decision is checked)
    assert read._unsupported(read.build("locked", deal_id=1), "default") is not None
    # Values the compiled SQL is not for go the long way: not ints, or past a bigint.
    assert [d.pk for d in read("plain", deal_id=str(deal.pk))] == [deal.pk]
    assert read("plain", deal_id=2**63) == []
    assert read("plain", deal_id=True) == list(build("plain", deal_id=True))


@pytest.mark.django_db(transaction=True)
def test_the_backends_converters_follow_the_connection_of_the_thread(account, settings):
    """Each thread has its own connection: a read in another thread converts with that connection."""
    if connection.vendor == "sqlite" and connection.is_in_memory_db():
        pytest.skip("an in-memory SQLite database is not seen from another thread's connection")
    settings.LEV_COMPILED_READS = True
    deal = full_deal(account)
    expected = described(orm_read(account, deal.pk, frozenset())[0])
    assert described(selectors.deal_get(account=account, deal_id=deal.pk)) == expected
    assert READ.plans[frozenset(), "default"].converters[0] is connections["default"]
    got = []

    def read_in_a_thread():
        try:
            got.append((described(selectors.deal_get(account=account, deal_id=deal.pk)),
                        READ.plans[frozenset(), "default"].converters[0] is connections["default"]))
        finally:
            connections.close_all()

    worker = threading.Thread(target=read_in_a_thread)
    worker.start()
    worker.join()
    assert got == [(expected, True)]
    assert described(selectors.deal_get(account=account, deal_id=deal.pk)) == expected
    assert READ.plans[frozenset(), "default"].converters[0] is connections["default"]
    assert READ.compilations == 1


# --- failures surface as before: a statement cancelled, a connection cut -------------------------------
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("switch", [True, False], ids=["compiled", "orm"])
def test_a_cancelled_read_is_an_outage_both_ways(account, api_key, settings, switch):
    """A deal read the database cancels (statement_timeout, LEV_DB_STATEMENT_TIMEOUT_MS) while another
    session locks the table: the API's 503, the compiled read as the ORM's."""
    if connection.vendor != "postgresql":
        pytest.skip("statement_timeout is PostgreSQL's")
    settings.LEV_COMPILED_READS = switch
    deal = full_deal(account)
    auth = {"Authorization": f"Bearer {api_key}"}
    assert Client().get(f"/api/v1/deals/{deal.pk}/", headers=auth).status_code == 200  # compiled, if on
    params = {k: v for k, v in connection.get_connection_params().items()
              if k in ("dbname", "user", "host", "port", "password")}
    options = connections.databases["default"].setdefault("OPTIONS", {})
    before = options.get("options")
    options["options"] = "-c statement_timeout=100"
    connections.close_all()
    try:
        with psycopg.connect(**params) as locker:
            locker.execute("LOCK TABLE deals_deal IN ACCESS EXCLUSIVE MODE")
            try:
                refused = Client().get(f"/api/v1/deals/{deal.pk}/", headers=auth)
                with pytest.raises(OperationalError) as cancelled:
                    selectors.deal_get(account=account, deal_id=deal.pk)
            finally:
                locker.rollback()
    finally:
        options["options"] = before
        connections.close_all()
    assert refused.status_code == 503 and refused.json()["code"] == "UPSTREAM_UNAVAILABLE"
    assert is_dependency_outage(cancelled.value)
    assert Client().get(f"/api/v1/deals/{deal.pk}/", headers=auth).status_code == 200
    assert READ.compilations == (1 if switch else 0)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("switch", [True, False], ids=["compiled", "orm"])
@pytest.mark.parametrize("compiled_before", [True, False], ids=["compiled before", "compiled during"])
def test_a_cut_connection_is_an_outage_both_ways_and_recovers(account, db_proxy, settings, switch,
                                                              compiled_before):
    settings.LEV_COMPILED_READS = switch
    deal = full_deal(account)
    if compiled_before:
        assert selectors.deal_get(account=account, deal_id=deal.pk).pk == deal.pk
    db_proxy.cut()
    with pytest.raises(Exception) as cut:  # whichever the driver raises: an outage
        selectors.deal_get(account=account, deal_id=deal.pk)
    assert is_dependency_outage(cut.value), repr(cut.value)
    db_proxy.restore()
    connections.close_all()
    got = selectors.deal_get(account=account, deal_id=deal.pk, include=frozenset({"financials"}))
    assert described(got) == described(orm_read(account, deal.pk, frozenset({"financials"}))[0])
    plans = {shape: type(plan).__name__ for (shape, _alias), plan in READ.plans.items()}
    assert plans == ({frozenset(): "_Plan", frozenset({"financials"}): "_Plan"} if switch else {})


def test_properties_prefetched_on_built_instances_are_the_orms(account, settings):
    settings.LEV_COMPILED_READS = True
    deal = full_deal(account)
    got = selectors.deal_get(account=account, deal_id=deal.pk, include=frozenset({"properties"}))
    assert [p.pk for p in got.properties.all()] == list(
        DealProperty.objects.filter(deal=deal).order_by("id").values_list("pk", flat=True))
    assert all(p._state.db == "default" and not p._state.adding for p in got.properties.all())
