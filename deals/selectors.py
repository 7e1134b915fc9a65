"""Reads of deals, always scoped to one account (tenancy lives here, in one place)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from functools import cache, lru_cache
from typing import Any

from django.db import connections, router
from django.db.models import IntegerField, OuterRef, Prefetch, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce

from deals.models import DEAL_SORT_VALUES, Deal, DealFinancials, DealProperty
from deals.pipeline.models import deal_status_q
from deals.searches.ranking.criteria import READINESS_FIELDS
from lev.accounts.models import Account
from lev.errors import DealNotFound, NotFound
from lev.limits import MAX_ID
from lev.pagination import Keyset, list_scope

DEAL_ORDERINGS = (
    "created_at", "-created_at", "updated_at", "-updated_at", "loan_amount", "-loan_amount",
    "title", "-title", "estimated_close_date", "-estimated_close_date",
)


@dataclass(frozen=True)
class DealFilters:
    loan_type: str | None = None
    transaction_type: str | None = None
    business_plan: str | None = None
    min_loan_amount: Decimal | None = None
    max_loan_amount: Decimal | None = None
    status: str | None = None  # lev.enums.DEAL_STATUSES; None: deal_list says
    archived: bool = False
    search: str | None = None
    stage: str | None = None
    ordering: str = "-created_at"


def stage_matches(text: str) -> Q:
    """Deals in the stage a filter names: its id, or its key (in_market) or name, in any case."""
    text = text.strip()
    if text.isdigit():
        return Q(stage_id=int(text)) if int(text) <= MAX_ID else Q(pk__in=[])
    return Q(stage__key=text.lower().replace(" ", "_")) | Q(stage__name__iexact=text)


def deal_list_keyset(*, ordering: str) -> Keyset:
    """How the deal list is ordered and paged for an `ordering` of DEAL_ORDERINGS: by that value
    (a missing loan amount or closing date as the largest), then by id in the same direction."""
    name = ordering.removeprefix("-")
    value = DEAL_SORT_VALUES[name]
    field = value.output_field if isinstance(value, Coalesce) else Deal._meta.get_field(name)
    return Keyset(value, field, descending=ordering.startswith("-"))


def deal_list_scope(*, account: Account, filters: DealFilters) -> str:
    """Which list a deal-list cursor belongs to: the account, every filter and the ordering."""
    return list_scope("deals", account=account.pk, **vars(filters))


def deal_status_filter(filters: DealFilters) -> Q:
    """Which deals a list shows by their status (deals.pipeline.models.deal_status_q): the status
    asked for (`archived` true is status archived); without one, a stage's deals that are not archived
    when a stage is named (its column of the pipeline), else the active deals."""
    status = filters.status or ("archived" if filters.archived else None)
    if status is None:
        return Q(archived=False) if filters.stage else deal_status_q("active")
    return deal_status_q(status)


def deal_list(*, account: Account, filters: DealFilters) -> QuerySet[Deal]:
    qs = Deal.objects.filter(deal_status_filter(filters), account=account)
    if filters.loan_type:
        qs = qs.filter(loan_type=filters.loan_type)
    if filters.transaction_type:
        qs = qs.filter(transaction_type=filters.transaction_type)
    if filters.business_plan:
        qs = qs.filter(business_plan=filters.business_plan)
    if filters.min_loan_amount is not None:
        qs = qs.filter(loan_amount__gte=filters.min_loan_amount)
    if filters.max_loan_amount is not None:
        qs = qs.filter(loan_amount__lte=filters.max_loan_amount)
    if filters.search:
        qs = qs.filter(title__icontains=filters.search)
    if filters.stage:
        qs = qs.filter(stage_matches(filters.stage))
    # Each deal of a page comes with the few property fields its lender-search readiness reads
    # (one more query per page, for that page's deals only), which also give its property count.
    # The order (and the page) is the keyset's: deal_list_keyset(ordering=filters.ordering).
    properties = DealProperty.objects.only(*READINESS_FIELDS).order_by("id")
    return qs.select_related("stage", "owner").prefetch_related(Prefetch("properties", queryset=properties))


def deals_with_property_summary(deals: QuerySet[Deal]) -> QuerySet[Deal]:
    """Deals with `units_total` (sum over their properties, sortable) and their properties'
    states and asset types prefetched (one query for a whole page, not one per deal)."""
    units = (
        DealProperty.objects.filter(deal=OuterRef("pk")).order_by().values("deal")
        .annotate(total=Sum("units")).values("total")
    )
    light = DealProperty.objects.only("id", "deal_id", "state", "asset_type").order_by("id")
    return deals.annotate(units_total=Subquery(units, output_field=IntegerField())).prefetch_related(
        Prefetch("properties", queryset=light, to_attr="property_summary")
    )


# What DealSerializer writes of the deal's related rows (StageRefSerializer, UserRefSerializer,
# CompanyRefSerializer): a read for a caller that reads no more of those rows (`refs_only`) loads just
# these columns of them; the deal's own columns, and its financials', are always read whole.
DEAL_REF_FIELDS = {
    "stage": ("id", "key", "name", "kind"),
    "owner": ("id", "username"),
    "sponsor": ("id", "name", "kind"),
    "borrower": ("id", "name", "kind"),
}


@cache
def _unread_ref_columns() -> tuple[str, ...]:
    """Every other column of the stage, owner, sponsor and borrower (the owner's password hash among them)."""
    return tuple(
        f"{relation}__{field.name}"
        for relation, kept in DEAL_REF_FIELDS.items()
        for field in Deal._meta.get_field(relation).related_model._meta.concrete_fields
        if field.name not in kept
    )


def deal_get(*, account: Account, deal_id: int, include: frozenset[str] = frozenset(),
             refs_only: bool = False) -> Deal:
    """The account's deal, or DealNotFound — the same answer for another account's deal.

    `include`: `financials` (joined) and `properties` (prefetched), for DealSerializer's `include`.
    `refs_only`: the deal's stage, owner, sponsor and borrower carry only DEAL_REF_FIELDS, what
    DealSerializer writes of them (the deal's own columns are all read): for a caller that reads no more
    of them (writes the deal out, or only needs the deal). Any other column of theirs read afterwards
    costs a query each."""
    # Past the largest bigint id no deal exists (what the ORM's lookup answers, too).
    if not 0 < deal_id <= MAX_ID:
        raise DealNotFound(deal_id)
    # The stage, owner, sponsor and borrower are named in every answer: joined, not read one by one.
    qs = Deal.objects.filter(account=account.pk).select_related("stage", "owner", "sponsor", "borrower")
    if refs_only:
        qs = qs.defer(*_unread_ref_columns())
    if "financials" in include:
        qs = qs.select_related("financials")
    if "properties" in include:
        qs = qs.prefetch_related("properties")
    found = list(qs.filter(pk=deal_id).order_by()[:1])
    if not found:
        raise DealNotFound(deal_id)
    return found[0]


# The deal detail's answer, column by column (DealSerializer's fields; the related rows' DEAL_REF_FIELDS as
# `<relation>__<field>`): what `deal_row` reads and deals.serializers.deal_output writes.
DEAL_OWN_FIELDS = ("id", "title", "loan_amount", "loan_type", "transaction_type", "business_plan", "description",
                   "estimated_close_date", "archived", "archived_at", "created_at", "updated_at")
DEAL_ROW_FIELDS = (
    *DEAL_OWN_FIELDS,
    *(f"{relation}__{field}" for relation, fields in DEAL_REF_FIELDS.items() for field in fields),
)


@cache
def deal_row_sql() -> str:
    """The deal detail's one query, written for it: the deal's DEAL_OWN_FIELDS and its stage's, owner's,
    sponsor's and borrower's DEAL_REF_FIELDS (as `<relation>__<field>`; a missing one's all NULL), joined,
    for the account's deal by id. Standard SQL (SQLite and PostgreSQL), its names taken from the models.

    Hand-written rather than a `values()` queryset because the ORM builds and compiles a 4-join
    `values()` query on every call (docs/benchmarks.md, issue 40); run on a cursor and read by position
    (`deal_row`), its values converted as the ORM converts them (`deal_row_converters`)."""
    def column(model: Any, name: str) -> str:
        return f'"{model._meta.get_field(name).column}"'

    select = [f"d.{column(Deal, name)}" for name in DEAL_OWN_FIELDS]
    joins = []
    for n, (relation, fields) in enumerate(DEAL_REF_FIELDS.items()):
        key = Deal._meta.get_field(relation)
        model, alias = key.related_model, f"r{n}"
        joins.append(f'{"LEFT JOIN" if key.null else "JOIN"} "{model._meta.db_table}" {alias} '
                     f'ON {alias}.{column(model, model._meta.pk.name)} = d."{key.column}"')
        select += [f'{alias}.{column(model, name)} AS "{relation}__{name}"' for name in fields]
    account = Deal._meta.get_field("account").column
    return (f'SELECT {", ".join(select)} FROM "{Deal._meta.db_table}" d {" ".join(joins)} '
            f'WHERE d."{account}" = %s AND d."{Deal._meta.pk.column}" = %s')


def _row_fields() -> list[Any]:
    """The model field of each column of deal_row_sql, in its order."""
    fields = [Deal._meta.get_field(name) for name in DEAL_OWN_FIELDS]
    for relation in DEAL_REF_FIELDS:
        model = Deal._meta.get_field(relation).related_model
        fields += [model._meta.get_field(name) for name in DEAL_REF_FIELDS[relation]]
    return fields


@lru_cache(maxsize=16)
def deal_row_converters(connection: Any) -> tuple[tuple[int, tuple[Callable, ...], Any], ...]:
    """(position, converters, column) of each column of deal_row_sql that the ORM converts on this
    connection's database (SQLite's dates, decimals and booleans; nothing on PostgreSQL): what the ORM's
    compiler asks of the backend and the field for a column, worked out once per connection."""
    found = []
    for position, field in enumerate(_row_fields()):
        column = field.get_col(field.model._meta.db_table)
        converters = (*connection.ops.get_db_converters(column), *field.get_db_converters(connection))
        if converters:
            found.append((position, tuple(converters), column))
    return tuple(found)


def deal_row(*, account: Account, deal_id: int) -> dict[str, Any]:
    """The account's deal as one row of DEAL_ROW_FIELDS (`stage__name`, `owner__username`, ...; a missing
    owner, sponsor or borrower reads as None in each of its columns), or DealNotFound, the same answer as
    `deal_get`. One query (deal_row_sql) on a cursor, its values read by position and converted as the ORM
    would (deal_row_converters): the deal detail's read, which deals.serializers.deal_output writes."""
    if not 0 < deal_id <= MAX_ID:
        raise DealNotFound(deal_id)
    connection = connections[router.db_for_read(Deal)]
    with connection.cursor() as cursor:
        cursor.execute(deal_row_sql(), [account.pk, deal_id])
        found = cursor.fetchone()
    if found is None:
        raise DealNotFound(deal_id)
    values = list(found)
    for position, converters, column in deal_row_converters(connection):
        value = values[position]
        for converter in converters:
            value = converter(value, column, connection)
        values[position] = value
    return dict(zip(DEAL_ROW_FIELDS, values, strict=True))


def deal_row_financials(*, row: dict[str, Any]) -> DealFinancials:
    """The financials of the deal `row` (deal_row), or an unsaved empty one (every figure null): what
    DealSerializer's `include=financials` writes. The deal comes along with only what the ratios read of
    it (its loan amount and type); anything else of it read afterwards costs a query, never a wrong value."""
    own = [field.name for field in DealFinancials._meta.concrete_fields]
    found = list(DealFinancials.objects.select_related("deal").only(*own, "deal__loan_amount", "deal__loan_type")
                 .filter(deal_id=row["id"]).order_by()[:1])
    if found:
        return found[0]
    return DealFinancials(deal=Deal.objects.only("loan_amount", "loan_type").get(pk=row["id"]))


def deal_scope(*, account: Account, deal_id: int) -> Deal:
    """The account's deal with its id alone, or DealNotFound (as `deal_get` answers): the scope of a read
    of what hangs off the deal (its properties' page, MCP get_deal's second read), which writes nothing
    of the deal itself. Any other field of it read afterwards costs a query."""
    if not 0 < deal_id <= MAX_ID:
        raise DealNotFound(deal_id)
    found = list(Deal.objects.filter(account=account.pk, pk=deal_id).only("id").order_by()[:1])
    if not found:
        raise DealNotFound(deal_id)
    return found[0]


def deal_property_list(*, deal: Deal) -> QuerySet[DealProperty]:
    """The deal's properties, oldest first: the order of the deal's detail and of every page."""
    return DealProperty.objects.filter(deal=deal).order_by("id")


def deal_property_get(*, deal: Deal, property_id: int) -> DealProperty:
    prop = DealProperty.objects.filter(deal=deal, pk=property_id).first()
    if prop is None:
        raise NotFound("Property", property_id)
    return prop


def deal_financials_get(*, deal: Deal) -> DealFinancials | None:
    return DealFinancials.objects.select_related("deal").filter(deal=deal).first()
