"""Compiled reads (lev.compiled, LEV_COMPILED_READS) answer what the ORM answers, on the database the
suite runs on (SQLite and PostgreSQL): the deal read (deals.selectors.deal_get) for every include shape,
whole or with only the columns DealSerializer writes of its related rows (`refs_only`), instance for
instance (datetimes to the tzinfo object), serializer output, REST and MCP answers byte for byte with the
switch on and off; the same refusals; the same number of queries, counted and seen by execute wrappers;
compiled once per shape and alias; a shape the facility cannot reproduce is read by the ORM; on PostgreSQL
one psycopg cursor per connection, made again after a reconnect, with psycopg's timestamptz loader only
where it gives Django's values; and a statement cancelled or a connection cut or ended surfaces as before."""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from decimal import Decimal

import psycopg
import pytest
from django.contrib.auth.models import User
from django.db import DatabaseError, OperationalError, connection, connections, reset_queries, transaction
from django.db.backends.postgresql.psycopg_any import BaseTzLoader
from django.db.models import signals
from django.db.models.sql.compiler import SQLCompiler
from django.db.transaction import TransactionManagementError
from django.test import Client
from django.test.utils import CaptureQueriesContext, isolate_apps
from django.utils import timezone
from psycopg.pq import Format
from rest_framework.renderers import JSONRenderer

from deals import selectors
from deals.companies.models import Company
from deals.models import Deal, DealFinancials, DealProperty
from deals.serializers import DealSerializer
from lev.compiled import _HELD_CURSOR, CompiledRead, fetch_rows
from lev.errors import DealNotFound
from lev.limits import MAX_ID
from lev.outages import is_dependency_outage
from tests.factories import (
    DealFactory,
    DealFinancialsFactory,
    DealPropertyFactory,
    MembershipFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

SHAPES = [frozenset(), frozenset({"financials"}), frozenset({"properties"}), frozenset({"financials", "properties"})]
# The same with only the columns DealSerializer writes of the stage, owner, sponsor and borrower.
LEAN_SHAPES = [include | {selectors.REFS_ONLY} for include in SHAPES]
INCLUDES = frozenset({"financials", "properties"})
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


def exactly(value):
    """A value, and for a datetime its tzinfo object too (equal datetimes may differ in tzinfo)."""
    return (value, id(value.tzinfo)) if isinstance(value, dt.datetime) else value


def values(obj) -> dict | None:
    """An instance's state and the values of its loaded fields (which are deferred, not their values:
    reading one would query)."""
    if obj is None:
        return None
    deferred = obj.get_deferred_fields()
    return {"type": type(obj), "db": obj._state.db, "adding": obj._state.adding, "deferred": sorted(deferred),
            **{f.attname: exactly(getattr(obj, f.attname)) for f in type(obj)._meta.concrete_fields
               if f.attname not in deferred}}


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


def shape_id(shape: frozenset[str]) -> str:
    return ",".join(sorted(shape)) or "nothing"


def held_cursor():
    """The psycopg cursor the compiled reads keep for this thread's open connection, or None. (One kept
    for a connection since closed stays on the wrapper until the next compiled read replaces it.)"""
    held = getattr(connection, _HELD_CURSOR, None)
    return held[3] if held and held[0] is connection.connection is not None else None


@pytest.mark.parametrize("shape", SHAPES + LEAN_SHAPES, ids=shape_id)
def test_the_compiled_read_builds_the_orms_instances(account, settings, shape, django_assert_num_queries):
    settings.LEV_COMPILED_READS = True
    for deal in (full_deal(account), bare_deal(account)):
        compiled = READ(shape, account_id=account.pk, deal_id=deal.pk)
        orm = orm_read(account, deal.pk, shape)
        assert len(compiled) == len(orm) == 1
        assert described(compiled[0]) == described(orm[0])
        with django_assert_num_queries(0):  # every column written out was read (none deferred)
            rendered = [JSONRenderer().render(DealSerializer(d, include=shape & INCLUDES).data)
                        for d in (compiled[0], orm[0])]
        assert rendered[0] == rendered[1]
        assert compiled[0].owner == orm[0].owner  # None for the bare deal, not a lookup
    assert READ.compilations == 1
    assert type(READ.plans[shape, "default"]).__name__ == "_Plan"  # compiled, not the ORM's long way


@pytest.mark.parametrize("switch", [True, False], ids=["compiled", "orm"])
@pytest.mark.parametrize("include", SHAPES, ids=shape_id)
def test_refs_only_writes_the_deal_out_as_the_whole_read_does(account, settings, switch, include,
                                                              django_assert_num_queries):
    """The lean read's stage, owner, sponsor and borrower hold exactly DEAL_REF_FIELDS; the deal's own
    columns and its financials are whole; DealSerializer writes it out as it writes the whole read, with
    no query for a deferred column."""
    settings.LEV_COMPILED_READS = switch
    for deal in (full_deal(account), bare_deal(account)):
        whole = selectors.deal_get(account=account, deal_id=deal.pk, include=include)
        with django_assert_num_queries(2 if "properties" in include else 1):
            lean = selectors.deal_get(account=account, deal_id=deal.pk, include=include, refs_only=True)
            written = JSONRenderer().render(DealSerializer(lean, include=include).data)
        assert written == JSONRenderer().render(DealSerializer(whole, include=include).data)
        assert lean.get_deferred_fields() == set()
        for name, kept in selectors.DEAL_REF_FIELDS.items():
            ref, whole_ref = getattr(lean, name), getattr(whole, name)
            assert (ref is None) == (whole_ref is None)
            if ref is not None:
                loaded = {f.attname for f in type(ref)._meta.concrete_fields} - ref.get_deferred_fields()
                assert loaded == set(kept), name
                same = {k: v for k, v in values(whole_ref).items() if k != "deferred"}
                assert {k: v for k, v in values(ref).items() if k != "deferred"} == {k: same[k] for k in (
                    "type", "db", "adding", *kept)}
        if "financials" in include and hasattr(whole, "financials"):
            assert values(lean.financials) == values(whole.financials)  # whole: deferred is []


def selected_columns(compiler) -> set[tuple[str, str]]:
    return {(col.target.model._meta.db_table, col.target.column) for col, _, _ in compiler.select}


@pytest.mark.parametrize("include", SHAPES, ids=shape_id)
def test_the_lean_read_selects_only_the_columns_the_answer_uses(account, settings, include):
    settings.LEV_COMPILED_READS = True
    deal = full_deal(account)
    selectors.deal_get(account=account, deal_id=deal.pk, include=include, refs_only=True)
    selectors.deal_get(account=account, deal_id=deal.pk, include=include)
    lean, whole = (READ.plans[shape, "default"] for shape in (include | {selectors.REFS_ONLY}, include))

    def columns(model, names=None) -> set[tuple[str, str]]:
        fields = model._meta.concrete_fields
        return {(model._meta.db_table, f.column) for f in fields if names is None or f.name in names}

    refs = set().union(*(columns(Deal._meta.get_field(name).related_model, kept)
                         for name, kept in selectors.DEAL_REF_FIELDS.items()))
    financials = columns(DealFinancials) if "financials" in include else set()
    assert selected_columns(lean.compiler) == columns(Deal) | refs | financials
    assert len(lean.compiler.select) == len(columns(Deal)) + 4 + 2 + 3 + 3 + len(financials)  # both companies
    assert '"password"' not in lean.sql and '"email"' not in lean.sql and '"website"' not in lean.sql
    assert '"auth_user"."password"' in whole.sql  # the control: the whole read has it
    # The ORM's way runs the same query (the long way's SQL, as the database saw it).
    settings.LEV_COMPILED_READS = False
    with CaptureQueriesContext(connection) as ran:
        selectors.deal_get(account=account, deal_id=deal.pk, include=include, refs_only=True)
    assert '"password"' not in ran.captured_queries[0]["sql"]
    assert ran.captured_queries[0]["sql"].split(" FROM ")[0] == lean.sql.split(" FROM ")[0]


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


@pytest.mark.parametrize("refs_only", [False, True], ids=["whole", "refs only"])
@pytest.mark.parametrize("include", SHAPES, ids=shape_id)
def test_the_number_of_queries_is_the_orms(account, settings, include, refs_only, django_assert_num_queries):
    deal = full_deal(account)
    settings.LEV_COMPILED_READS = False
    with django_assert_num_queries(2 if "properties" in include else 1):
        orm = selectors.deal_get(account=account, deal_id=deal.pk, include=include, refs_only=refs_only)
    settings.LEV_COMPILED_READS = True
    selectors.deal_get(account=account, deal_id=deal.pk, include=include, refs_only=refs_only)  # compiles
    with django_assert_num_queries(2 if "properties" in include else 1) as counted:
        compiled = selectors.deal_get(account=account, deal_id=deal.pk, include=include, refs_only=refs_only)
        assert described(compiled) == described(orm)  # inside: no lazy query afterwards either
    assert counted.captured_queries[0]["sql"].startswith('SELECT "deals_deal"."id"')


def test_execute_wrappers_and_the_debug_log_see_the_compiled_read(account, settings):
    """While a wrapper is installed or queries are logged (DEBUG), the read takes Django's cursor."""
    settings.LEV_COMPILED_READS = True
    deal = full_deal(account)
    for _ in range(2):
        selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True)
    seen = []

    def wrapper(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        assert selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True).pk == deal.pk
    assert len(seen) == 1 and seen[0] == READ.plans[frozenset({selectors.REFS_ONLY}), "default"].sql
    settings.DEBUG = True
    reset_queries()
    assert selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True).pk == deal.pk
    assert [q["sql"][:26] for q in connection.queries] == ['SELECT "deals_deal"."id", ']


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


@pytest.mark.parametrize("include", SHAPES, ids=shape_id)
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
    # Each shape the API and the tool read was compiled once, whatever the number of reads; all lean (the
    # tool reads the deal without its properties, then their page, whose view reads the deal alone).
    assert READ.compilations == len(READ.plans)
    assert {type(plan).__name__ for plan in READ.plans.values()} == {"_Plan"}
    read = [include, include - {"properties"}] + ([frozenset()] if "properties" in include else [])
    assert set(READ.plans) == {(shape | {selectors.REFS_ONLY}, "default") for shape in read}


@pytest.mark.parametrize("switch", [True, False], ids=["compiled", "orm"])
def test_the_views_reading_refs_only_keep_their_queries_and_answers(account, api, user, settings, switch,
                                                                     django_assert_num_queries):
    """GET, PATCH and archive of a deal, POST of a new one and GET of its properties (MCP get_deal's
    second read) read it with `refs_only`: the same number of queries as with the whole read (no
    deferred column read afterwards; measured before the change), and the answers of the whole read."""
    settings.LEV_COMPILED_READS = switch
    deal, live = full_deal(account), full_deal(account)
    Deal.objects.filter(pk=live.pk).update(archived=False, archived_at=None)
    sponsor = Company.objects.create(account=account, name="New Sponsor", kind="sponsor")
    member = MembershipFactory(account=account, user=UserFactory(username="bob")).user

    def whole(deal_id: int, include: frozenset[str] = frozenset()) -> dict:
        read = selectors.deal_get(account=account, deal_id=deal_id, include=include)
        return json.loads(JSONRenderer().render(DealSerializer(read, include=include).data))

    for include in SHAPES:
        query = "?include=" + ",".join(sorted(include)) if include else ""
        api.get(f"/api/v1/deals/{deal.pk}/{query}")  # compiles the shape
        with django_assert_num_queries(2 if "properties" in include else 1):
            got = api.get(f"/api/v1/deals/{deal.pk}/{query}")
        assert got.status_code == 200 and got.json() == whole(deal.pk, include)
    for query in ("", "?page=2&page_size=1"):
        api.get(f"/api/v1/deals/{deal.pk}/properties/{query}")
        with django_assert_num_queries(3):  # the deal, the count, the page
            page = api.get(f"/api/v1/deals/{deal.pk}/properties/{query}")
        expected = list(DealProperty.objects.filter(deal=deal).order_by("id").values_list("pk", flat=True))
        assert [p["id"] for p in page.json()["results"]] == (expected[1:] if query else expected)
    # (request, queries): the reads, the row's lock, the writes, savepoints, and the stage, owner and
    # companies read again (the lock's refresh_from_db forgets them), as main counted them before the change.
    writes = [
        (lambda: api.patch(f"/api/v1/deals/{live.pk}/", {"title": "Renamed"}, format="json"), 10),
        (lambda: api.patch(f"/api/v1/deals/{live.pk}/", {"title": "Again", "sponsor_id": sponsor.pk,
                                                         "owner_id": member.pk}, format="json"), 15),
        (lambda: api.post("/api/v1/deals/", {"title": "New", "properties": [{"name": "One"}]}, format="json"), 10),
        (lambda: api.post(f"/api/v1/deals/{live.pk}/archive/"), 10),
    ]
    for request, queries in writes:
        with django_assert_num_queries(queries) as ran:
            answer = request()
        assert answer.status_code in (200, 201), answer.content
        deal_reads = [q["sql"] for q in ran.captured_queries if 'JOIN "deals_stage"' in q["sql"]]
        assert len(deal_reads) == 1 and '"password"' not in deal_reads[0]  # the view's read: lean
        include = frozenset({"properties"}) if answer.status_code == 201 else frozenset()
        assert answer.json() == whole(answer.json()["id"], include)
    assert Deal.objects.get(pk=live.pk).sponsor_id == sponsor.pk and Deal.objects.get(pk=live.pk).archived


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

    main_cursor = held_cursor()
    cursors = []

    def read_in_a_thread():
        try:
            for _ in range(2):
                found = selectors.deal_get(account=account, deal_id=deal.pk)
                cursors.append(held_cursor())
            got.append((described(found), READ.plans[frozenset(), "default"].converters[0] is connections["default"]))
            cursors.append(connection.connection)
        finally:
            connections.close_all()

    worker = threading.Thread(target=read_in_a_thread)
    worker.start()
    worker.join()
    assert got == [(expected, True)]
    if connection.vendor == "postgresql":  # each thread's connection keeps its own cursor
        thread_cursor, again, thread_raw = cursors
        assert thread_cursor is again and thread_cursor.connection is thread_raw
        assert main_cursor is not None and thread_cursor is not main_cursor and thread_raw is not connection.connection
    assert held_cursor() is main_cursor
    assert described(selectors.deal_get(account=account, deal_id=deal.pk)) == expected
    assert READ.plans[frozenset(), "default"].converters[0] is connections["default"]
    assert READ.compilations == 1


# --- PostgreSQL: one cursor per connection, psycopg's timestamptz loader where it answers Django's values --
def postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("the compiled reads keep a cursor on PostgreSQL only")


def server_params() -> dict:
    return {k: v for k, v in connection.get_connection_params().items()
            if k in ("dbname", "user", "host", "port", "password")}


def terminate(pid: int) -> None:
    """End the backend `pid` from another session (pg_terminate_backend), and wait until it is gone."""
    with psycopg.connect(**server_params(), autocommit=True) as killer:
        assert killer.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)
        for _ in range(500):
            if killer.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone() is None:
                return
            time.sleep(0.01)
    raise AssertionError(f"backend {pid} still there")


@pytest.mark.django_db(transaction=True)
def test_one_cursor_per_connection_is_reused_and_a_new_one_made_after_a_reconnect(account, settings):
    postgresql_only()
    settings.LEV_COMPILED_READS = True
    deal = full_deal(account)
    expected = described(orm_read(account, deal.pk, LEAN_SHAPES[0])[0])
    connections.close_all()
    selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True)  # compiles the shape, then runs it
    assert described(selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True)) == expected
    first, raw = held_cursor(), connection.connection
    assert first is not None and first.connection is raw
    for _ in range(3):
        got = selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True)
        assert held_cursor() is first
    assert described(got) == expected
    for reconnect in (connection.close, connections.close_all):
        reconnect()
        assert described(selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True)) == expected
        assert connection.connection is not raw
        assert held_cursor() is not first and held_cursor().connection is connection.connection
        first, raw = held_cursor(), connection.connection
    # The whole read and the lean one share the connection's cursor.
    selectors.deal_get(account=account, deal_id=deal.pk, include=frozenset({"financials"}))
    assert held_cursor() is first


@pytest.mark.django_db(transaction=True)
def test_a_connection_ended_by_a_failed_health_check_gets_a_new_cursor(account, settings):
    """A reused connection's first query of a request runs the health check (lev.postgresql: the socket,
    then SELECT 1); a connection PostgreSQL ended is replaced before the read, on a cursor of the new one."""
    postgresql_only()
    settings.LEV_COMPILED_READS = True
    deal = full_deal(account)
    connections.close_all()
    for _ in range(2):
        selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True)
    first, raw = held_cursor(), connection.connection
    terminate(raw.info.backend_pid)
    connection.health_check_done = False  # as at the start of a request (close_if_unusable_or_obsolete)
    assert selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True).pk == deal.pk
    assert connection.connection is not raw and raw.closed
    assert held_cursor() is not first and held_cursor().connection is connection.connection


def test_no_cursor_is_kept_while_queries_are_observed_nor_on_sqlite(account, settings, django_assert_num_queries):
    settings.LEV_COMPILED_READS = True
    deal = full_deal(account)
    if hasattr(connection, _HELD_CURSOR):
        delattr(connection, _HELD_CURSOR)
    for _ in range(2):  # compiled, then run: the compiled SQL through Django's cursor, counted
        with django_assert_num_queries(1):
            selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True)
    assert not hasattr(connection, _HELD_CURSOR)
    selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True)
    assert hasattr(connection, _HELD_CURSOR) == (connection.vendor == "postgresql")


@pytest.mark.parametrize("switch", [True, False], ids=["compiled", "orm"])
def test_a_broken_atomic_block_and_another_threads_connection_are_refused_both_ways(account, settings, switch):
    """Django's checks before a query: no query inside an atomic block marked for rollback, and no use of
    a thread's connection from another thread."""
    settings.LEV_COMPILED_READS = switch
    deal = full_deal(account)
    for _ in range(2):
        selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True)
    with transaction.atomic():
        transaction.set_rollback(True)
        with pytest.raises(TransactionManagementError):
            selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True)
    plan_sql = READ.plans[frozenset({selectors.REFS_ONLY}), "default"].sql if switch else None
    mine, refused = connections["default"], []  # this thread's wrapper (`connection` is a per-thread proxy)

    def read_on_my_connection():
        try:
            if switch:  # the compiled read's run step, handed this thread's connection
                fetch_rows(mine, plan_sql, [account.pk, deal.pk])
            else:
                with mine.cursor() as cursor:
                    cursor.execute("SELECT 1")
        except DatabaseError as exc:
            refused.append(str(exc))
        finally:
            connections.close_all()

    # pytest-django's live server (session-scoped) shares an in-memory SQLite connection with its thread
    # for the rest of the session: a test that ran earlier in this process may have started it. Django's
    # check is what is tested here, so the sharing is set aside while the other thread tries.
    shared = 0
    while mine.allow_thread_sharing:
        mine.dec_thread_sharing()
        shared += 1
    try:
        worker = threading.Thread(target=read_on_my_connection)
        worker.start()
        worker.join()
    finally:
        for _ in range(shared):
            mine.inc_thread_sharing()
    assert len(refused) == 1 and "can only be used in that same thread" in refused[0]


def timestamptz_loader(cursor) -> type:
    return cursor.adapters.get_loader(1184, Format.TEXT)


def datetimes(deal: Deal) -> list:
    """Every datetime the read loaded (the deal's, its related rows', its financials'), with its tzinfo."""
    found = []
    for obj in (deal, *deal._state.fields_cache.values()):
        if obj is not None:
            deferred = obj.get_deferred_fields()
            found += [(type(obj).__name__, f.attname, exactly(getattr(obj, f.attname)))
                      for f in type(obj)._meta.concrete_fields
                      if f.attname not in deferred and isinstance(getattr(obj, f.attname), dt.datetime)]
    return found


@pytest.mark.parametrize("switch", [True, False], ids=["compiled", "orm"])
def test_datetimes_are_djangos_to_the_tzinfo_object(account, settings, switch):
    settings.LEV_COMPILED_READS = switch
    deal = full_deal(account)
    User.objects.filter(pk=deal.owner_id).update(last_login=timezone.now())
    shape = frozenset({"financials"})
    for _ in range(3):  # compiled; run through the kept cursor
        got = READ(shape, account_id=account.pk, deal_id=deal.pk) if switch else orm_read(account, deal.pk, shape)
    orm = orm_read(account, deal.pk, shape)
    assert len(datetimes(got[0])) == 11  # the deal's 3, the stage's 1, the owner's 2, the companies' 4, financials' 1
    assert datetimes(got[0]) == datetimes(orm[0])
    assert all(value.tzinfo is dt.UTC for _, _, (value, _) in datetimes(got[0]))
    if switch and connection.vendor == "postgresql":
        # Loaded by psycopg's own (C) loader on the kept cursor; Django's everywhere else.
        assert timestamptz_loader(held_cursor()) is psycopg.adapters.get_loader(1184, Format.TEXT)
        assert issubclass(timestamptz_loader(connection.connection), BaseTzLoader)
        with connection.cursor() as django_cursor:
            assert issubclass(timestamptz_loader(django_cursor.cursor), BaseTzLoader)


def test_a_session_time_zone_django_did_not_set_keeps_djangos_loader(account, settings):
    """A session switched to another time zone behind Django's back: Django's loader reads its values in
    that zone and labels them UTC; the compiled read answers exactly that, not psycopg's (correct) values."""
    postgresql_only()
    settings.LEV_COMPILED_READS = True
    deal = full_deal(account)
    for _ in range(2):
        READ(frozenset(), account_id=account.pk, deal_id=deal.pk)
    utc_values = datetimes(READ(frozenset(), account_id=account.pk, deal_id=deal.pk)[0])
    with connection.cursor() as cursor:
        cursor.execute("SET TIME ZONE 'Asia/Kolkata'")
    try:
        got = READ(frozenset(), account_id=account.pk, deal_id=deal.pk)
        assert issubclass(timestamptz_loader(held_cursor()), BaseTzLoader)
        assert datetimes(got[0]) == datetimes(orm_read(account, deal.pk, frozenset())[0]) != utc_values
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET TIME ZONE 'UTC'")
    assert datetimes(READ(frozenset(), account_id=account.pk, deal_id=deal.pk)[0]) == utc_values
    assert timestamptz_loader(held_cursor()) is psycopg.adapters.get_loader(1184, Format.TEXT)


def test_without_use_tz_the_datetimes_are_naive_as_djangos(account, settings):
    settings.LEV_COMPILED_READS = True
    deal = full_deal(account)
    for _ in range(2):
        aware = datetimes(READ(frozenset(), account_id=account.pk, deal_id=deal.pk)[0])
    settings.USE_TZ = False
    got = datetimes(READ(frozenset(), account_id=account.pk, deal_id=deal.pk)[0])
    assert got == datetimes(orm_read(account, deal.pk, frozenset())[0])
    assert all(value.tzinfo is None for _, _, (value, _) in got) and len(got) == len(aware)


# --- failures surface as before: a statement cancelled, a connection cut -------------------------------
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("switch", [True, False], ids=["compiled", "orm"])
def test_a_cancelled_read_is_an_outage_both_ways(account, api_key, settings, switch):
    """A deal read the database cancels (statement_timeout, LEV_DB_STATEMENT_TIMEOUT_MS) while another
    session locks the table: the API's 503, the compiled read as the ORM's; the connection reads again
    once the lock is gone (compiled: with a cursor of its own, not the one whose statement failed)."""
    if connection.vendor != "postgresql":
        pytest.skip("statement_timeout is PostgreSQL's")
    settings.LEV_COMPILED_READS = switch
    deal = full_deal(account)
    auth = {"Authorization": f"Bearer {api_key}"}
    assert Client().get(f"/api/v1/deals/{deal.pk}/", headers=auth).status_code == 200  # compiled, if on
    params = server_params()
    options = connections.databases["default"].setdefault("OPTIONS", {})
    before = options.get("options")
    options["options"] = "-c statement_timeout=100"
    connections.close_all()
    try:
        assert selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True).pk == deal.pk
        assert (held_cursor() is not None) == (switch and connection.vendor == "postgresql")
        with psycopg.connect(**params) as locker:
            locker.execute("LOCK TABLE deals_deal IN ACCESS EXCLUSIVE MODE")
            try:
                with pytest.raises(OperationalError) as cancelled:
                    selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True)
                if switch:  # dropped with the statement that failed
                    assert getattr(connection, _HELD_CURSOR) is None
                refused = Client().get(f"/api/v1/deals/{deal.pk}/", headers=auth)
            finally:
                locker.rollback()
        raw = connection.connection
        assert selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True).pk == deal.pk
        assert connection.connection is raw  # the same connection, still usable
        if switch:
            assert held_cursor().connection is raw
    finally:
        options["options"] = before
        connections.close_all()
    assert refused.status_code == 503 and refused.json()["code"] == "UPSTREAM_UNAVAILABLE"
    assert is_dependency_outage(cancelled.value)
    assert "canceling statement due to statement timeout" in str(cancelled.value)
    assert Client().get(f"/api/v1/deals/{deal.pk}/", headers=auth).status_code == 200
    assert READ.compilations == (1 if switch else 0)  # the API's and the selector's read: one shape


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


@pytest.mark.django_db(transaction=True)
def test_a_connection_ended_by_the_server_is_the_same_outage_both_ways(account, settings):
    """pg_terminate_backend from another session while the connection is in use (its health check done):
    the read fails as the ORM's does, twice (Django keeps the broken connection until the request ends),
    is an outage, and the next request's start replaces the connection."""
    postgresql_only()
    deal = full_deal(account)
    errors = {}
    for switch in (True, False):
        settings.LEV_COMPILED_READS = switch
        connections.close_all()
        for _ in range(2):
            selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True)
        assert (held_cursor() is not None) == switch
        terminate(connection.connection.info.backend_pid)
        errors[switch] = []
        for _ in range(2):
            with pytest.raises(OperationalError) as ended:
                selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True)
            assert is_dependency_outage(ended.value), repr(ended.value)
            errors[switch].append((type(ended.value.__cause__), str(ended.value)))
        assert connection.errors_occurred
        connection.close_if_unusable_or_obsolete()  # what request_started does
        assert selectors.deal_get(account=account, deal_id=deal.pk, refs_only=True).pk == deal.pk
    assert errors[True] == errors[False]
    assert errors[True][1] == (psycopg.OperationalError, "the connection is closed")


def test_properties_prefetched_on_built_instances_are_the_orms(account, settings):
    settings.LEV_COMPILED_READS = True
    deal = full_deal(account)
    got = selectors.deal_get(account=account, deal_id=deal.pk, include=frozenset({"properties"}))
    assert [p.pk for p in got.properties.all()] == list(
        DealProperty.objects.filter(deal=deal).order_by("id").values_list("pk", flat=True))
    assert all(p._state.db == "default" and not p._state.adding for p in got.properties.all())


# --- Instances built without Model.__init__'s loop (lev.compiled._Builder) ---------------------------------

def stored(obj, seen=None) -> dict | None:
    """All an instance holds, in the order it was stored: its __dict__ (datetimes to the tzinfo object),
    its state's, and the related objects cached on it, the same way (a link back to an object already
    described is named, not followed)."""
    if obj is None:
        return None
    seen = seen if seen is not None else set()
    if id(obj) in seen:
        return {"back to": type(obj).__name__}
    seen.add(id(obj))
    state = dict(obj._state.__dict__)
    cache = state.pop("fields_cache", {})
    return {"type": type(obj),
            "keys": list(obj.__dict__),
            "values": {k: exactly(v) for k, v in obj.__dict__.items()
                       if k not in ("_state", "_prefetched_objects_cache")},
            "state": state,
            "cached": {name: stored(related, seen) for name, related in cache.items()}}


@pytest.mark.parametrize("shape", SHAPES + LEAN_SHAPES, ids=shape_id)
def test_instances_hold_exactly_what_from_db_gives_them(account, settings, shape):
    """Every instance the compiled read builds (the deal, its stage, owner, sponsor, borrower, financials)
    holds the same attributes in the same order, with the same state, as the ORM's Model.from_db gives."""
    settings.LEV_COMPILED_READS = True
    for deal in (full_deal(account), bare_deal(account)):
        compiled = READ(shape, account_id=account.pk, deal_id=deal.pk)[0]
        assert stored(compiled) == stored(orm_read(account, deal.pk, shape)[0])
    plan = READ.plans[shape, "default"]
    assert plan.build.plain and all(related.build.plain for related in plan.populators)


@pytest.mark.parametrize("signal", [signals.pre_init, signals.post_init], ids=["pre_init", "post_init"])
def test_an_init_signals_receivers_hear_every_instance_as_from_the_orm(account, settings, signal):
    """A receiver of pre_init or post_init for a model (ImageField's, a package's) is called for each of its
    instances the compiled read builds, as from_db calls it: those are built by from_db. Disconnected, the
    instances are built directly again, holding the same."""
    settings.LEV_COMPILED_READS = True
    deal = full_deal(account)
    heard = []

    def receiver(sender, **kwargs):
        heard.append((sender.__name__, kwargs.get("args", ()), getattr(kwargs.get("instance"), "pk", None)))

    signal.connect(receiver, sender=User)
    try:
        orm = orm_read(account, deal.pk, frozenset())[0]
        from_orm = list(heard)
        heard.clear()
        compiled = READ(frozenset(), account_id=account.pk, deal_id=deal.pk)[0]
        assert heard == from_orm and len(heard) == 1  # the owner, a User
        assert stored(compiled) == stored(orm)
    finally:
        signal.disconnect(receiver, sender=User)
    heard.clear()
    assert stored(READ(frozenset(), account_id=account.pk, deal_id=deal.pk)[0]) == stored(orm)
    assert heard == []


def models_building_their_own_way() -> dict[str, type[Deal]]:
    """Two proxies of Deal, in a registry of their own (the app's is left as it is): one building its
    instances with its own from_db, one with its own __init__ (each noting that it did)."""

    class DealWithItsOwnFromDb(Deal):
        class Meta:
            proxy = True
            app_label = "deals"

        @classmethod
        def from_db(cls, db, field_names, values):
            built = super().from_db(db, field_names, values)
            built.built_by_from_db = True
            return built

    class DealWithItsOwnInit(Deal):
        class Meta:
            proxy = True
            app_label = "deals"

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.built_by_init = True

    return {"built_by_from_db": DealWithItsOwnFromDb, "built_by_init": DealWithItsOwnInit}


def test_a_model_with_its_own_from_db_or_init_is_built_by_them(account, settings):
    """Only a model that from_db builds by Model's own code is built directly; one defining from_db or
    __init__ (itself or a base) is built by them, holding what they give it."""
    from lev.compiled import _Builder, _plainly_built

    with isolate_apps("deals"):
        own_way = models_building_their_own_way()
    assert _plainly_built(Deal) and _plainly_built(User) and _plainly_built(Company)
    assert not any(_plainly_built(model) for model in own_way.values())
    deal = full_deal(account)
    row = Deal.objects.filter(pk=deal.pk).values_list("id", "title").get()
    for mark, model in own_way.items():
        built = _Builder(model, ["id", "title"], "default")(list(row))
        assert getattr(built, mark) is True
        assert stored(built) == stored(model.from_db("default", ["id", "title"], list(row)))
    plain = _Builder(Deal, ["id", "title"], "default")(list(row))
    assert stored(plain) == stored(Deal.from_db("default", ["id", "title"], list(row)))
    assert plain.get_deferred_fields() == {f.attname for f in Deal._meta.concrete_fields} - {"id", "title"}
