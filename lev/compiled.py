"""Compiled reads: a queryset's SQL compiled by the ORM once per process and database alias, then run
with each call's parameters (issue 24: compiling the deal read's five-table select_related cost a
fifth of an MCP `get_deal`; running it, prepared by PostgreSQL, cost far less).

A read is declared once, with a function building its queryset from integer parameters (ids):

    deal_read = CompiledRead("deals.deal_get", Deal, build, params=("account_id", "deal_id"))
    deals = deal_read(shape, account_id=account.pk, deal_id=7)   # list(build(shape, ...)), faster

`shape` is the caller's key for one SQL text (e.g. the set of related data included); `build(shape,
**params)` must use the parameters only as values of the query (never to choose its shape). The first
call of a shape on an alias builds the queryset twice with stand-in values and compiles it with the
ORM's own compiler; the SQL must come back the same both times, and its parameters must be exactly the
stand-ins (where a parameter went) or the same constants (where none did). Anything else, or a
queryset this module does not reproduce (values(), known related objects, select_for_update, a
combinator, composite fields), and the shape is read by the ORM itself from then on, with a warning in
the log: a shape is never answered wrongly, at worst the long way.

A call then runs the cached SQL (`fetch_rows`) and builds the instances as
django.db.models.query.ModelIterable does, with Django's own pieces: the compiler's select and
klass_info, the related populators' columns and setters (select_related objects, None for a null foreign
key, the reverse caches), `Model.from_db` (state.db, adding=False), the backend's and fields' converters,
annotations; prefetch_related lookups run through `prefetch_related_objects` on the built instances, as
QuerySet does. An instance is built as `Model.from_db` builds it, without running `Model.__init__`'s
loop over every field, where that loop would only store each value (`_Builder`: no pre_init or post_init
receiver for the model, no `__init__`, `__new__` or `from_db` of its own, every field's attribute
Django's plain one); any other model is built by its `from_db`.

Running the SQL is part of the shortcut too. On PostgreSQL with psycopg 3, while nothing observes
queries, it runs on one psycopg cursor kept per raw connection (`_reused_cursor_rows`: Django's cursor
path step by step — health check, connection, thread check, broken-transaction check, errors re-raised
as django.db's — without making and closing two cursors a query), and timestamptz columns are loaded
there by psycopg's own C loader where that gives Django's values to the tzinfo object (UTC connection and
session); statement timeouts and prepared statements are the connection's and apply alike. While queries
are logged (DEBUG, CaptureQueriesContext, django_assert_num_queries) or an execute wrapper is installed,
and on every other database, the SQL runs through `connection.cursor()` exactly as the ORM's queries do.

Values that are not plain ints within a bigint, and every call while the switch `LEV_COMPILED_READS` is
off, go the long way: `list(build(shape, **params))`, run by the ORM on Django's cursor.
"""

from __future__ import annotations

import datetime as dt
import inspect
import logging
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, TypeVar

from django.apps import apps
from django.conf import settings
from django.core.exceptions import EmptyResultSet
from django.db import DatabaseError, connections, router
from django.db.models import Model, QuerySet, signals
from django.db.models.base import ModelState
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.db.models.query import ModelIterable, get_related_populators, prefetch_related_objects
from django.db.models.query_utils import DeferredAttribute
from django.dispatch.dispatcher import NO_RECEIVERS

logger = logging.getLogger("lev.compiled")

M = TypeVar("M", bound=Model)

BIGINT_MIN, BIGINT_MAX = -(2**63), 2**63 - 1
# Two sets of stand-in values, parameter k being base + k: inside every integer column's range (an
# out-of-range value makes the ORM drop the condition or the query), and unlikely as constants.
_STAND_INS = (1_987_650_001, 1_987_651_001)
_LONG_WAY = object()  # a shape that is read by the ORM


# The connection wrapper's attribute holding the compiled reads' cursor: (the raw connection it belongs to,
# the wrapper's timezone and the session's TimeZone when it was made, the psycopg cursor).
_HELD_CURSOR = "_lev_compiled_reads_cursor"
_TIMESTAMPTZ_OID = 1184  # PostgreSQL's, fixed


def fetch_rows(connection, sql: str, params: list) -> list[tuple]:
    """All rows of `sql` with `params` on `connection`, as Django's cursor would fetch them.

    On PostgreSQL with psycopg 3, when nothing observes queries (no query logging: DEBUG, a
    CaptureQueriesContext, django_assert_num_queries; no execute wrappers), through one psycopg cursor
    kept per raw connection (`_reused_cursor_rows`); otherwise, and on every other database, through
    `connection.cursor()` as the ORM does."""
    if (connection.vendor == "postgresql" and connection.Database.__name__ == "psycopg"
            and not connection.queries_logged and not connection.execute_wrappers and apps.ready):
        return _reused_cursor_rows(connection, sql, params)
    # (Before the apps are ready too: Django's cursor warns about a query made then.)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _timestamptz_loader(connection, raw) -> type | None:
    """psycopg's own (C, with psycopg_binary) timestamptz loader where it loads exactly what Django's does,
    else None (keep Django's). Django's loader (psycopg_any.BaseTzLoader, pure Python) parses the value in
    the session's time zone, then replaces its tzinfo by `connection.timezone`: the same value and the
    same tzinfo object as psycopg's loader when both are `datetime.timezone.utc` (psycopg answers that
    object for a session in "UTC", which Django sets when DATABASES' TIME_ZONE is unset)."""
    if connection.timezone is not dt.UTC or raw.info.timezone is not dt.UTC:
        return None
    import psycopg
    from psycopg.pq import Format

    return psycopg.adapters.get_loader(_TIMESTAMPTZ_OID, Format.TEXT)


def _reused_cursor_rows(connection, sql: str, params: list) -> list[tuple]:
    """Django's cursor path, step by step (BaseDatabaseWrapper._cursor, then CursorWrapper's execute and
    fetchall), with one psycopg cursor kept for the raw connection instead of a Django cursor and a psycopg
    cursor made and closed per query (about 20 us of CPU a query, measured), and timestamptz loaded by
    psycopg's C loader where that gives Django's values (`_timestamptz_loader`; Django's pure-Python one
    costs 2.5-3 us a value, measured).

    Kept from Django's path: the health check (lev.postgresql's socket check) and a new connection when
    there is none (`ensure_connection`, which also refuses an event loop's thread), the thread check, the
    refusal inside a broken atomic block, and database errors re-raised as django.db's (lev.outages
    counts a cut connection or a cancelled statement as an outage). The cursor belongs to one raw
    connection and one time zone: after a reconnect (`connection.close()`, a failed health check) or a
    change of `connection.timezone` or of the session's TimeZone, a new one is made; a query that raised
    drops it. Connections are per thread in Django, and so is the wrapper holding the cursor. (A cursor
    kept for a connection since closed stays on the wrapper, with its closed connection, until the next
    compiled read on that thread replaces it.)"""
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    raw, tz = connection.connection, connection.timezone
    session_tz = raw.pgconn.parameter_status(b"TimeZone")
    held = getattr(connection, _HELD_CURSOR, None)
    if held is None or held[0] is not raw or held[1] is not tz or held[2] != session_tz or held[3].closed:
        setattr(connection, _HELD_CURSOR, None)
        with connection.wrap_database_errors:
            cursor = connection.create_cursor()  # Django's, with its own timestamptz loader where needed
            loader = _timestamptz_loader(connection, raw)
            if loader is not None:
                cursor.adapters.register_loader(_TIMESTAMPTZ_OID, loader)
        held = (raw, tz, session_tz, cursor)
        setattr(connection, _HELD_CURSOR, held)
    connection.validate_no_broken_transaction()
    try:
        with connection.wrap_database_errors:
            held[3].execute(sql, params)
            return held[3].fetchall()
    except BaseException:
        setattr(connection, _HELD_CURSOR, None)  # a new cursor next time, as Django's path would make
        raise


# The attribute types of a concrete field whose storing by Model.__init__ (setattr) is putting the value in
# the instance's __dict__: DeferredAttribute has no __set__, and ForeignKeyDeferredAttribute's only drops a
# cached related object first, which a new instance has none of.
_PLAIN_ATTRIBUTES = (DeferredAttribute, ForeignKeyDeferredAttribute)


def _plainly_built(model: type[Model]) -> bool:
    """Whether `model.from_db` builds an instance by Model's own code with nothing but plain stores: its
    class and its bases define no `__init__`, `__new__` or `from_db` of their own (Model's and object's
    only) and no metaclass `__call__`, and each concrete field's attribute is Django's plain one."""
    if type(model).__call__ is not type.__call__ or model.__new__ is not object.__new__:
        return False
    for klass in model.__mro__:
        if klass is Model or klass is object:
            continue
        if "__init__" in klass.__dict__ or "from_db" in klass.__dict__:
            return False
    attnames = [f.attname for f in model._meta.concrete_fields]
    return len(set(attnames)) == len(attnames) and all(
        type(inspect.getattr_static(model, name, None)) in _PLAIN_ATTRIBUTES for name in attnames)


def _no_receivers(signal: signals.ModelSignal, model: type[Model]) -> bool:
    """No receiver of `signal` for `model`: none connected at all, or Django's cache of the answer for the
    model (filled by asking once; a receiver connected or disconnected empties it)."""
    if not signal.receivers:  # none at all, for any model (as Signal.send asks first)
        return True
    known = signal.sender_receivers_cache.get(model)
    if known is NO_RECEIVERS:
        return True
    return known is None and not signal.has_listeners(model)


class _Builder:
    """Builds `model` instances from rows of the `init_list` columns (in the select's order) as
    `model.from_db(alias, init_list, values)` does: Model.__init__ takes the values in the order of the model's
    concrete fields whose attnames `init_list` names, stores each in the instance's __dict__ (the others are
    deferred: not stored), after a new ModelState; from_db then marks it not adding and of `alias`. Done
    directly while the model qualifies (`_plainly_built`, checked once) and no pre_init or post_init receiver
    is connected for it (checked per instance, from Django's cache); else by `from_db` itself."""

    __slots__ = ("alias", "attnames", "init_list", "model", "plain")

    def __init__(self, model: type[Model], init_list: list[str], alias: str):
        self.model, self.init_list, self.alias = model, init_list, alias
        self.attnames = tuple(f.attname for f in model._meta.concrete_fields if f.attname in init_list)
        self.plain = _plainly_built(model)

    def __call__(self, values: Sequence[Any]) -> Model:
        model = self.model
        if not (self.plain and _no_receivers(signals.pre_init, model) and _no_receivers(signals.post_init, model)):
            return model.from_db(self.alias, self.init_list, values)
        obj = object.__new__(model)
        state = ModelState()
        state.adding = False
        state.db = self.alias
        stored = obj.__dict__
        stored["_state"] = state
        stored.update(zip(self.attnames, values, strict=True))
        return obj


class _Related:
    """django.db.models.query.RelatedPopulator.populate, its instances built by a `_Builder`: the related
    object of one select_related relation (None when its primary key column is null), its own related
    objects, and the caches that link it and the object it belongs to."""

    __slots__ = ("build", "children", "populator")

    def __init__(self, populator, alias: str):
        self.populator = populator
        self.build = _Builder(populator.model_cls, populator.init_list, alias)
        self.children = tuple(_Related(child, alias) for child in populator.related_populators)

    def populate(self, row: list, from_obj: Model) -> None:
        populator = self.populator
        if populator.reorder_for_init:
            data = populator.reorder_for_init(row)
        else:
            data = row[populator.cols_start:populator.cols_end]
        if data[populator.pk_idx] is None:
            obj = None
        else:
            obj = self.build(data)
            for child in self.children:
                child.populate(row, obj)
        populator.local_setter(from_obj, obj)
        if obj is not None:
            populator.remote_setter(obj, from_obj)


class _Plan:
    """One shape's SQL on one alias and how its rows become instances (what ModelIterable computes
    from the compiler on each query, computed once)."""

    __slots__ = ("alias", "annotations", "build", "col_count", "compiler", "converters", "end", "fields",
                 "init_list", "model", "populators", "prefetch", "slots", "sql", "start")

    def __init__(self, compiler, sql: str, slots: tuple[tuple[int, Any], ...], prefetch: tuple, alias: str):
        select, klass_info = compiler.select, compiler.klass_info
        self.alias, self.sql, self.slots, self.prefetch, self.compiler = alias, sql, slots, prefetch, compiler
        self.model = klass_info["model"]
        select_fields = klass_info["select_fields"]
        self.start, self.end = select_fields[0], select_fields[-1] + 1
        self.init_list = [f[0].target.attname for f in select[self.start:self.end]]
        self.build = _Builder(self.model, self.init_list, alias)
        related = get_related_populators(klass_info, select, alias)
        self.populators = tuple(_Related(populator, alias) for populator in related)
        self.annotations = tuple((compiler.annotation_col_map or {}).items())
        self.col_count = compiler.col_count
        self.fields = [s[0] for s in select[0:self.col_count]]
        # (connection, converters): the backend's converters are methods of a connection's operations,
        # and each thread has its own connection: they are looked up again for another connection.
        self.converters: tuple[Any, list] = (None, [])

    def converters_for(self, connection) -> list:
        owner, converters = self.converters
        if owner is not connection:
            compiler = self.compiler.query.get_compiler(connection=connection)
            converters = [(pos, convs, expr) for pos, (convs, expr) in compiler.get_converters(self.fields).items()]
            self.converters = (connection, converters)
        return converters

    def run(self, values: Sequence[int]) -> list:
        connection = connections[self.alias]
        params = [values[index] if index >= 0 else constant for index, constant in self.slots]
        rows = fetch_rows(connection, self.sql, params)
        converters = self.converters_for(connection) if rows else ()
        found = []
        for fetched in rows:
            row = list(fetched[:self.col_count])
            for pos, convs, expression in converters:
                value = row[pos]
                for converter in convs:
                    value = converter(value, expression, connection)
                row[pos] = value
            obj = self.build(row[self.start:self.end])
            for populator in self.populators:
                populator.populate(row, obj)
            for attname, pos in self.annotations:
                setattr(obj, attname, row[pos])
            found.append(obj)
        if self.prefetch and found:
            prefetch_related_objects(found, *self.prefetch)
        return found


class CompiledRead(Generic[M]):
    """A read whose SQL the ORM compiles once per shape and database alias (module docstring)."""

    def __init__(self, name: str, model: type[M], build: Callable[..., QuerySet[M]], *, params: Sequence[str]):
        self.name, self.model, self.build, self.params = name, model, build, tuple(params)
        self.plans: dict[tuple[Hashable, str], _Plan | object] = {}
        self.compilations = 0  # how many shapes were compiled (each once per alias): for tests

    def __call__(self, shape: Hashable, /, **values: int) -> list[M]:
        ordered = [values[name] for name in self.params]
        if not settings.LEV_COMPILED_READS or not all(
            type(value) is int and BIGINT_MIN <= value <= BIGINT_MAX for value in ordered
        ):
            return list(self.build(shape, **values))
        alias = router.db_for_read(self.model)
        plan = self.plans.get((shape, alias))
        if plan is None:
            plan = self.plans[shape, alias] = self._compile(shape, alias)
        if plan is _LONG_WAY:
            return list(self.build(shape, **values))
        return plan.run(ordered)

    def _stand_ins(self, base: int) -> dict[str, int]:
        return {name: base + k for k, name in enumerate(self.params)}

    def _compile(self, shape: Hashable, alias: str) -> _Plan | object:
        self.compilations += 1
        try:
            first, second = (self.build(shape, **self._stand_ins(base)) for base in _STAND_INS)
            why = self._unsupported(first, alias) or self._unsupported(second, alias)
            if why is None:
                compiler = first.query.get_compiler(using=alias)
                sql, params = compiler.as_sql()
                sql_again, params_again = second.query.get_compiler(using=alias).as_sql()
        except EmptyResultSet:
            why = "the ORM answers it without a query"
        except DatabaseError:
            raise  # (compiling may ask the database its version): an outage, as for the ORM; tried again
        except Exception as exc:  # with the stand-ins, not the call's values: the ORM will say
            why = f"building or compiling it with stand-in values raised {exc!r}"
        if why is None:
            slots = self._slots(params, params_again) if sql == sql_again else None
            if slots is None:
                why = "its SQL or parameters are not the stand-ins'"
            elif compiler.klass_info is None or compiler.has_composite_fields([s[0] for s in compiler.select]):
                why = "its columns are not one model's"
        if why is not None:
            logger.warning("compiled read %s, shape %r: read by the ORM (%s)", self.name, shape, why)
            return _LONG_WAY
        return _Plan(compiler, sql, slots, tuple(first._prefetch_related_lookups), alias)

    def _unsupported(self, qs: Any, alias: str) -> str | None:
        if not isinstance(qs, QuerySet) or qs.model is not self.model or qs._iterable_class is not ModelIterable:
            return "not a queryset of model instances"
        if qs._known_related_objects or qs._result_cache is not None or qs._fields is not None:
            return "a related manager's or evaluated queryset"
        if qs.query.select_for_update or qs.query.combinator:
            return "select_for_update or a combinator"
        if qs.db != alias:
            return "its database is not the router's"
        return None

    def _slots(self, first: Sequence, second: Sequence) -> tuple[tuple[int, Any], ...] | None:
        """Each SQL parameter as (index of the call's value, None) or (-1, a constant of the shape);
        None when the two compilations' parameters are not exactly that."""
        if len(first) != len(second):
            return None
        a, b = (list(self._stand_ins(base).values()) for base in _STAND_INS)
        slots, used = [], set()
        for x, y in zip(first, second, strict=True):
            if type(x) is int and x in a and y == b[a.index(x)] and type(y) is int:
                slots.append((a.index(x), None))
                used.add(a.index(x))
            elif x == y and type(x) is type(y) and x not in a + b:
                slots.append((-1, x))
            else:
                return None
        return tuple(slots) if used == set(range(len(self.params))) else None

    def clear(self) -> None:
        """Forget every compiled shape (tests; a deployment never needs to)."""
        self.plans.clear()
        self.compilations = 0
