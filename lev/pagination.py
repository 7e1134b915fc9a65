"""Pages of lists.

* `KeysetPagination` — the deal list and the lender directory, which grow with an account or the
  directory: a page is found by key (the last row's sort value and id), never by counting the rows
  before it, so every page costs the same at 1,000 or 100,000 rows; the count stops at
  LIST_COUNT_MAX.
* `StandardPagination` — page numbers, for lists bounded by what they belong to (a deal's
  placements).

Written by hand and not DRF's CursorPagination: that one orders by one field and steps over ties by
an offset, does not sort missing values, and neither signs nor scopes its cursors to an account
and a set of filters.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import zlib
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.core import signing
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import models
from django.db.models import F, Func, Value
from django.db.models.lookups import GreaterThan, LessThan
from drf_spectacular.utils import inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from lev.errors import ValidationFailed
from lev.limits import LIST_COUNT_MAX, MAX_ID, PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX


class StandardPagination(PageNumberPagination):
    """`?page=N&page_size=M` (max 100); body `{"count", "next", "previous", "results"}`."""

    page_size = PAGE_SIZE_DEFAULT
    page_size_query_param = "page_size"
    max_page_size = PAGE_SIZE_MAX


def paginated(item: type[serializers.Serializer], name: str) -> serializers.Serializer:
    """The OpenAPI shape of a StandardPagination page of `item`s, as it is returned (the list views
    are plain APIViews, which drf-spectacular does not paginate by itself)."""
    return inline_serializer(name=name, fields={
        "count": serializers.IntegerField(help_text="Items in all pages."),
        "next": serializers.URLField(allow_null=True, help_text="The next page, or null on the last."),
        "previous": serializers.URLField(allow_null=True, help_text="The previous page, or null on the first."),
        "results": item(many=True),
    })


def keyset_paginated(item: type[serializers.Serializer], name: str) -> serializers.Serializer:
    """The OpenAPI shape of a KeysetPagination page of `item`s."""
    return inline_serializer(name=name, fields={
        "count": serializers.IntegerField(help_text=f"Items in all pages, counted up to {LIST_COUNT_MAX:,}: "
                                                    "with count_capped, there are more than this."),
        "count_capped": serializers.BooleanField(
            required=False, help_text=f"Present (true) only when there are more than {LIST_COUNT_MAX:,} items."),
        "next": serializers.URLField(allow_null=True, help_text="The next page (a `cursor` link), or null on "
                                                                "the last."),
        "previous": serializers.URLField(allow_null=True, help_text="The previous page (a `cursor` link), or "
                                                                    "null on the first."),
        "results": item(many=True),
    })


def results_list(item: type[serializers.Serializer], name: str) -> serializers.Serializer:
    """`{"results": [...]}`: a short list returned whole, in the same envelope as a page."""
    return inline_serializer(name=name, fields={"results": item(many=True)})


# --- keys ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Keyset:
    """The order a list is paged in: `expression` (a column, or Coalesce(column, a value past every
    real one) so that a missing value sorts as the largest and a row comparison never meets NULL),
    then the id, both in the same direction. `field` turns the sort values to and from cursor text.
    An index on (its filters' columns, expression, id) makes every page one index range scan."""

    expression: Any
    field: models.Field
    descending: bool = False

    def order_by(self, *, reverse: bool = False) -> list[Any]:
        descending = self.descending != reverse
        return [expr.desc() if descending else expr.asc() for expr in (self.expression, F("id"))]

    def after(self, value: Any, row_id: int, *, reverse: bool = False):
        """Rows that come after (value, id) in this order (before it with `reverse`): one row
        comparison, which PostgreSQL reads as a range of the index."""
        lookup = LessThan if self.descending != reverse else GreaterThan
        key = Row(Value(value, output_field=self.field), Value(row_id, output_field=models.BigIntegerField()))
        return lookup(Row(self.expression, F("id")), key)


class Row(Func):
    """`(a, b)`: a row value, compared as a whole (`(a, b) > (x, y)`; SQLite ≥ 3.15 and PostgreSQL)."""

    template = "(%(expressions)s)"
    output_field = models.Field()


def list_scope(name: str, **values: Any) -> str:
    """A short digest of which list a cursor pages: its name, the account, the filters and the
    ordering. Equal filters give equal digests however they were spelled (10000000 and 1E+7)."""

    def canonical(value: Any) -> Any:
        if isinstance(value, Decimal):
            return format(value.normalize(), "f")
        if isinstance(value, dt.date):
            return value.isoformat()
        return value

    text = json.dumps({k: canonical(v) for k, v in sorted(values.items())}, sort_keys=True, default=str)
    return hashlib.blake2b(f"{name}|{text}".encode(), digest_size=9).hexdigest()


# --- cursors ---------------------------------------------------------------------------------------
class _CompactJSON:
    # UTF-8, not \u escapes: a 200-character title stays within LIST_CURSOR_MAX.
    def dumps(self, obj: Any) -> bytes:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()

    def loads(self, data: bytes) -> Any:
        return json.loads(data.decode())


_SALT = "lev.pagination.keyset"
BAD_CURSOR = "is not a cursor this server issued; pass it back unchanged, or omit it for the first page"
CURSOR_WITH_PAGE = "cannot be combined with page; pass one or the other"
OTHER_LIST = ("was issued for another list (other filters, ordering or account); pass it with the filters and "
              "ordering it came with, or omit it to start again from the first page")


def _bad_cursor(reason: str = BAD_CURSOR) -> ValidationFailed:
    return ValidationFailed({"cursor": [reason]})


@dataclass(frozen=True)
class Position:
    before: bool  # the page ends just before this row (a previous link), else starts just after it
    value: Any
    row_id: int


def _value_text(value: Any) -> str:
    if isinstance(value, dt.date):  # and datetimes: ISO 8601 keeps microseconds and the offset
        return value.isoformat()
    return str(value)


def encode_position(position: Position, *, scope: str) -> str:
    payload = {"s": scope, "b": int(position.before), "k": _value_text(position.value), "i": position.row_id}
    return signing.Signer(salt=_SALT).sign_object(payload, serializer=_CompactJSON, compress=True)


def decode_position(cursor: str, *, scope: str, keyset: Keyset) -> Position:
    """The position a cursor names, or a VALIDATION_ERROR naming `cursor`: for anything this server
    did not sign (forged or edited), and for a cursor of another list (another account, other filters
    or another ordering) — which is refused before it is read, so it reveals nothing."""
    try:
        payload = signing.Signer(salt=_SALT).unsign_object(cursor, serializer=_CompactJSON)
    except (signing.BadSignature, ValueError, TypeError, zlib.error):
        raise _bad_cursor() from None
    if not isinstance(payload, dict) or set(payload) != {"s", "b", "k", "i"}:
        raise _bad_cursor()  # signed, but by a version of this code with another shape
    if payload["s"] != scope:
        raise _bad_cursor(OTHER_LIST)
    row_id, before, text = payload["i"], payload["b"], payload["k"]
    # type() and not isinstance(): true is an int to Python. Ids stay within a bigint.
    if (type(row_id) is not int or not 0 <= row_id <= MAX_ID or type(before) is not int or before not in (0, 1)
            or not isinstance(text, str)):
        raise _bad_cursor()
    try:
        value = keyset.field.to_python(text)
        keyset.field.run_validators(value)  # e.g. a number too long for the column is no sort value
    except DjangoValidationError:
        raise _bad_cursor() from None
    if isinstance(value, dt.datetime) and value.utcoffset() is None:
        raise _bad_cursor()  # the cursors it issues carry their offset
    return Position(bool(before), value, row_id)


# --- the paginator ---------------------------------------------------------------------------------
class KeysetPagination:
    """One page of a list by key. `cursor` (from a next or previous link) positions it; without one,
    `page` (kept for clients that built page numbers before cursors; it reads the rows before the
    page, so deep pages by number cost more) or the first page. Links are always cursors.

    Body `{"count", "next", "previous", "results"}` plus `"count_capped": true` when the list has
    more than LIST_COUNT_MAX items; a page costs two queries (the count, bounded, and the rows),
    plus whatever the queryset prefetches for its rows."""

    def __init__(self, *, keyset: Keyset, scope: str, page_size: int | None = None, cursor: str | None = None,
                 page: int | None = None):
        if cursor is not None and page is not None:
            raise _bad_cursor(CURSOR_WITH_PAGE)
        self.keyset, self.scope = keyset, scope
        self.size = min(page_size or PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX)
        self.position = decode_position(cursor, scope=scope, keyset=keyset) if cursor is not None else None
        self.page = page

    def paginate_queryset(self, queryset: models.QuerySet, request: Request) -> list[Any]:
        self.request = request
        counted = queryset.order_by().values("pk")[: LIST_COUNT_MAX + 1].count()
        self.count, self.capped = min(counted, LIST_COUNT_MAX), counted > LIST_COUNT_MAX
        keyset, size, position = self.keyset, self.size, self.position
        rows = queryset.annotate(keyset_value=keyset.expression)
        backwards = position is not None and position.before
        if position is not None:
            rows = rows.filter(keyset.after(position.value, position.row_id, reverse=backwards))
        rows = rows.order_by(*keyset.order_by(reverse=backwards))
        offset = (self.page - 1) * size if self.page and position is None else 0
        items = list(rows[offset: offset + size + 1])
        more = len(items) > size
        items = items[:size]
        if backwards:
            items.reverse()
            self.has_next, self.has_previous = True, more
        else:
            self.has_next, self.has_previous = more, position is not None or offset > 0
        if not items and offset:
            raise NotFound("Invalid page.")  # a page number past the end, as page numbers always answered
        self.items, self.anchor = items, position
        return items

    def _link(self, position: Position) -> str:
        url = remove_query_param(self.request.build_absolute_uri(), "page")
        url = replace_query_param(url, "page_size", self.size)
        return replace_query_param(url, "cursor", encode_position(position, scope=self.scope))

    def _around_anchor(self, *, before: bool) -> Position:
        """A position whose page starts (or, `before`, ends) with the cursor's own row: the links of
        a page that came back empty (every row past the cursor removed since)."""
        anchor, step = self.anchor, -1 if self.keyset.descending else 1
        return Position(before, anchor.value, anchor.row_id + step if before else anchor.row_id - step)

    def get_paginated_response(self, data: list[Any]) -> Response:
        items = self.items
        next_link = previous = None
        if self.has_next:
            last = items[-1] if items else None
            next_link = self._link(Position(False, last.keyset_value, last.pk) if last
                                   else self._around_anchor(before=False))
        if self.has_previous:
            first = items[0] if items else None
            previous = self._link(Position(True, first.keyset_value, first.pk) if first
                                  else self._around_anchor(before=True))
        body: dict[str, Any] = {"count": self.count}
        if self.capped:
            body["count_capped"] = True
        body.update({"next": next_link, "previous": previous, "results": data})
        return Response(body)
