"""Evidence: what an account's own placements say of each lender, by the features of the deals placed.

Every placement that went out is one observation of a lender for the deal it carried. Its outcome, as
known at a moment `as_of`:

* **quoted** (`q`) — a live quote received before `as_of` (a won placement was quoted too, and counts
  as won besides);
* **declined** (`d`) — the lender declined (the placement's status, decided before `as_of`);
* **no answer** (`n`) — no quote and no decline `NO_ANSWER_DAYS` after it was sent (never answered,
  marked "no response", or reviewed and never quoted) — an outcome, not a gap;
* still open otherwise, and not counted yet.

Each observation is filed under every feature of its deal (`deal_features`): asset type, state, region,
loan size band, loan type, transaction type, business plan, leverage and coverage bands, asset type in
a state, and `all`; and under `box`: whether one of the lender's stated programs (its active ones, by
the hard filters: `filters.passes`) takes the deal — `outside` counts what it does beyond its box. It
weighs `0.5 ** (age / HALF_LIFE_DAYS)`, so last quarter counts more than three years ago; plain counts
over the last 12 months are kept beside the weights, for the insights' words.

Two uses of the same tallies (`learn`): `deals.searches.ranking.predict` updates the stated programs'
prior with them, and `refresh_lender_signals` stores them as `LenderSignal` rows, which a search reads
back for the deal's features only (`load`). The back-test learns in memory at a split date.

Privacy by construction: an account's tallies are built from its own deals' placements only (the query
filters by account before anything is counted). Other accounts count only through the pooled rows
(`account` null), written for a (lender, feature) only where at least `SIGNAL_MIN_ACCOUNTS` distinct
accounts placed such deals with the lender, each account weighing at most `POOL_CAP` placements and at
most a third of the whole (`pool`), so no one account's records, counts or made-up history show through
or move another account's ranking on their own.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from django.db import connection, transaction
from django.db.models import Min, Q
from django.utils import timezone

from deals.searches.ranking.criteria import DealCriteria
from deals.searches.ranking.filters import BOX_COLUMNS, passes

logger = logging.getLogger(__name__)

HALF_LIFE_DAYS = 365.0
NO_ANSWER_DAYS = 21
RECENT_KEPT = 5
YEAR = dt.timedelta(days=365)

# The pooled aggregate (docs/ranking.md, "Privacy").
SIGNAL_MIN_ACCOUNTS = 3
POOL_CAP = 5.0  # an account's weight in a pooled row: at most this many (decayed) placements...
POOL_MAX_SHARE_OF_OTHERS = 0.5  # ...and at most half of all the others' together (a third of the whole)

QUOTED, DECLINED, NO_ANSWER = "q", "d", "n"

ALL = "all"
ALL_KEY = (ALL, "")
# Whether the lender's stated programs took the deal (its current active programs, by the hard filters):
# a lender that quotes outside its box shows as ("box", "outside") quotes.
BOX, INSIDE, OUTSIDE = "box", "inside", "outside"
DIMENSIONS = ("all", "box", "asset_type", "state", "region", "size", "loan_type", "transaction_type", "business_plan",
              "leverage", "coverage", "asset_state")

# US Census regions: a lender's appetite often follows a region rather than one state.
_REGION_STATES = {
    "northeast": "CT ME MA NH RI VT NJ NY PA",
    "midwest": "IL IN MI OH WI IA KS MN MO NE ND SD",
    "south": "DE FL GA MD NC SC VA DC WV AL KY MS TN AR LA OK TX",
    "west": "AZ CO ID MT NV NM UT WY AK CA HI OR WA",
}
REGIONS = {state: region for region, states in _REGION_STATES.items() for state in states.split()}

# Loan size bands (upper bound exclusive, label as a broker writes it).
SIZE_BANDS = ((5e6, "under_5m", "under $5M"), (10e6, "5_10m", "$5-10M"), (20e6, "10_20m", "$10-20M"),
              (50e6, "20_50m", "$20-50M"), (100e6, "50_100m", "$50-100M"), (float("inf"), "100m_plus", "$100M+"))
SIZE_LABELS = {key: label for _, key, label in SIZE_BANDS}


def size_band(amount: float | None) -> str | None:
    if not amount or amount <= 0:
        return None
    return next(key for bound, key, _ in SIZE_BANDS if amount < bound)


def leverage_band(ltv: float | None) -> str | None:
    if ltv is None:
        return None
    return "ltv_55" if ltv <= 55 else "ltv_65" if ltv <= 65 else "ltv_75" if ltv <= 75 else "ltv_over_75"


def coverage_band(dscr: float | None) -> str | None:
    if dscr is None:
        return None
    return "dscr_under_1_20" if dscr < 1.20 else "dscr_1_20_1_40" if dscr < 1.40 else "dscr_1_40_up"


def deal_features(*, asset_types: Iterable[str], states: Iterable[str], loan_amount: float | None,
                  loan_type: str = "", transaction_type: str = "", business_plan: str = "",
                  ltv: float | None = None, dscr: float | None = None) -> list[tuple[str, str]]:
    """Every (dimension, value) a deal is filed under (a deal of two asset types under both)."""
    asset_types, states = sorted(set(asset_types)), sorted(set(states))
    features = [(ALL, "")]
    features += [("asset_type", a) for a in asset_types]
    features += [("state", s) for s in states]
    features += [("region", r) for r in sorted({REGIONS[s] for s in states if s in REGIONS})]
    features += [("asset_state", f"{a}:{s}") for a in asset_types for s in states]
    for dimension, value in (("size", size_band(loan_amount)), ("loan_type", loan_type),
                             ("transaction_type", transaction_type), ("business_plan", business_plan),
                             ("leverage", leverage_band(ltv)), ("coverage", coverage_band(dscr))):
        if value and value != "tbd":
            features.append((dimension, value))
    return features


def criteria_features(criteria) -> list[tuple[str, str]]:
    """`deal_features` of a search's DealCriteria."""
    return deal_features(asset_types=criteria.asset_types, states=criteria.states, loan_amount=criteria.loan_amount,
                         loan_type=criteria.loan_type, transaction_type=criteria.transaction_type,
                         business_plan=criteria.business_plan, ltv=criteria.ltv, dscr=criteria.dscr)


@dataclass
class Tally:
    """Outcomes of a lender's placements under one feature: decayed weights and 12-month counts."""

    sent: float = 0.0
    quoted: float = 0.0
    declined: float = 0.0
    no_answer: float = 0.0
    won: float = 0.0
    sent_12m: int = 0
    quoted_12m: int = 0
    declined_12m: int = 0
    no_answer_12m: int = 0
    won_12m: int = 0
    recent: str = ""  # newest first
    accounts: int = 1
    _recent: list[tuple[dt.datetime, str]] = field(default_factory=list, repr=False)

    def add(self, outcome: str, won: bool, weight: float, recent_year: bool, sent_at: dt.datetime | None) -> None:
        """One placement's outcome; `sent_at` given: kept for `recent` (the `all` tally only shows it)."""
        self.sent += weight
        self.sent_12m += recent_year
        if outcome == QUOTED:
            self.quoted += weight
            self.quoted_12m += recent_year
        elif outcome == DECLINED:
            self.declined += weight
            self.declined_12m += recent_year
        else:
            self.no_answer += weight
            self.no_answer_12m += recent_year
        if won:
            self.won += weight
            self.won_12m += recent_year
        if sent_at is not None:
            self._recent.append((sent_at, outcome))

    def plus(self, other: Tally, share: float) -> Tally:
        """These weights plus `share` of `other`'s (the counts and recent outcomes are not pooled)."""
        return Tally(self.sent + share * other.sent, self.quoted + share * other.quoted,
                     self.declined + share * other.declined, self.no_answer + share * other.no_answer,
                     self.won + share * other.won)

    def close(self) -> None:
        if self._recent:
            self._recent.sort(key=lambda item: item[0], reverse=True)
            self.recent = "".join(outcome for _, outcome in self._recent[:RECENT_KEPT])
            self._recent = []


Tallies = dict[tuple[str, str], Tally]


@dataclass
class Evidence:
    """One account's tallies per lender (`own`), and the pooled aggregate's (`pooled`), each
    lender id → (dimension, value) → Tally. `as_of`: the moment the outcomes were read."""

    own: dict[int, Tallies] = field(default_factory=dict)
    pooled: dict[int, Tallies] = field(default_factory=dict)
    as_of: dt.datetime | None = None

    def lenders(self) -> set[int]:
        return set(self.own) | set(self.pooled)


@dataclass(frozen=True)
class Observation:
    account_id: int
    lender_id: int
    deal_id: int
    outcome: str
    won: bool
    sent_at: dt.datetime


def outcome_at(*, status: str, sent_at: dt.datetime, first_response_at: dt.datetime | None,
               decided_at: dt.datetime | None, first_quote_at: dt.datetime | None,
               as_of: dt.datetime) -> tuple[str, bool] | None:
    """(outcome, won) of one placement as known at `as_of`, or None while it is still open."""
    if first_quote_at is not None and first_quote_at < as_of:
        return QUOTED, status == "won" and decided_at is not None and decided_at < as_of
    decided = decided_at or first_response_at
    if status == "declined" and decided is not None and decided < as_of:
        return DECLINED, False
    if sent_at < as_of - dt.timedelta(days=NO_ANSWER_DAYS):
        return NO_ANSWER, False
    return None


def observations(*, as_of: dt.datetime, account_ids: Iterable[int] | None = None) -> Iterator[Observation]:
    """Every placement sent before `as_of` with an outcome known by then, of the given accounts (all
    when None). One query for the placements, one for their first quotes."""
    from deals.models import Placement, TermSheet

    placements = Placement.objects.filter(sent_at__isnull=False, sent_at__lt=as_of)
    if account_ids is not None:
        placements = placements.filter(deal__account_id__in=list(account_ids))
    rows = list(placements.values_list("id", "deal__account_id", "deal_id", "lender_id", "status", "sent_at",
                                       "first_response_at", "decided_at"))
    if not rows:
        return
    quotes = TermSheet.objects.filter(deleted_at__isnull=True, received_at__lt=as_of)
    if account_ids is not None:
        quotes = quotes.filter(deal__account_id__in=list(account_ids))
    first_quote = dict(quotes.values("placement_id").annotate(first=Min("received_at"))
                       .values_list("placement_id", "first"))
    for pk, account_id, deal_id, lender_id, status, sent_at, responded, decided in rows:
        known = outcome_at(status=status, sent_at=sent_at, first_response_at=responded, decided_at=decided,
                           first_quote_at=first_quote.get(pk), as_of=as_of)
        if known is not None:
            yield Observation(account_id, lender_id, deal_id, known[0], known[1], sent_at)


# Ids per IN list: well under SQLite's variable limit, and a plain index lookup on PostgreSQL.
IDS_PER_QUERY = 900


def chunks(ids: list[int]) -> Iterator[list[int]]:
    """`ids` in lists of at most IDS_PER_QUERY, one query's worth each."""
    for start in range(0, len(ids), IDS_PER_QUERY):
        yield ids[start:start + IDS_PER_QUERY]


def features_of_deals(deal_ids: Iterable[int]) -> dict[int, tuple[list[tuple[str, str]], DealCriteria | None]]:
    """deal id → its features, and what the hard filters read of it (None without a loan amount), from
    the deal, its properties and its financials (a few queries)."""
    from deals.models import Deal, DealFinancials, DealProperty

    ids = list(set(deal_ids))
    deals: dict[int, Deal] = {}
    props: dict[int, tuple[set[str], set[str]]] = defaultdict(lambda: (set(), set()))
    ratios: dict[int, tuple[float | None, float | None]] = {}
    for chunk in chunks(ids):
        for deal in Deal.objects.filter(id__in=chunk).only("id", "loan_amount", "loan_type", "transaction_type",
                                                           "business_plan"):
            deals[deal.pk] = deal
        for deal_id, state, asset_type in DealProperty.objects.filter(deal_id__in=chunk).values_list(
                "deal_id", "state", "asset_type"):
            if state:
                props[deal_id][1].add(state)
            if asset_type:
                props[deal_id][0].add(asset_type)
        for financials in DealFinancials.objects.filter(deal_id__in=chunk):
            financials.deal = deals.get(financials.deal_id) or financials.deal
            ltv, dscr = financials.ltv, financials.dscr
            ratios[financials.deal_id] = (None if ltv is None else float(ltv), None if dscr is None else float(dscr))
    out = {}
    for deal_id, deal in deals.items():
        asset_types, states = props[deal_id]
        ltv, dscr = ratios.get(deal_id, (None, None))
        amount = None if not deal.loan_amount else float(deal.loan_amount)
        features = deal_features(
            asset_types=asset_types, states=states, loan_amount=amount, loan_type=deal.loan_type,
            transaction_type=deal.transaction_type, business_plan=deal.business_plan, ltv=ltv, dscr=dscr)
        box = None if amount is None else DealCriteria(
            loan_amount=amount, loan_type=deal.loan_type or "tbd", states=tuple(sorted(states)),
            asset_types=tuple(sorted(asset_types)))
        out[deal_id] = (features, box)
    return out


def stated_boxes(lender_ids: Iterable[int]) -> dict[int | tuple[int, int], list[tuple]]:
    """lender id → its directory active programs' hard-filter columns (filters.BOX_COLUMNS); (lender id,
    account id) → that account's own (an account's box is both: another account's own never counts)."""
    from lenders.models import LenderProgram

    ids = list(set(lender_ids))
    out: dict[int | tuple[int, int], list[tuple]] = defaultdict(list)
    for chunk in chunks(ids):
        for owner, *row in LenderProgram.objects.filter(status=LenderProgram.Status.ACTIVE, lender_id__in=chunk
                                                        ).values_list("account_id", *BOX_COLUMNS):
            out[row[0] if owner is None else (row[0], owner)].append(tuple(row))
    return out


def box_of(programs: list[tuple], criteria: DealCriteria | None) -> str | None:
    """("box", inside | outside): whether one of the lender's stated programs takes the deal."""
    if criteria is None:
        return None
    return INSIDE if any(passes(program, criteria) for program in programs) else OUTSIDE


def decay(age: dt.timedelta) -> float:
    return 0.5 ** (max(0.0, age.total_seconds()) / 86400.0 / HALF_LIFE_DAYS)


def tally(found: Iterable[Observation], *, as_of: dt.datetime) -> tuple[dict[int, dict[int, Tallies]], int]:
    """account id → lender id → (dimension, value) → Tally, and the number of observations."""
    found = list(found)
    features = features_of_deals(o.deal_id for o in found)
    boxes = stated_boxes(o.lender_id for o in found)
    out: dict[int, dict[int, Tallies]] = defaultdict(lambda: defaultdict(lambda: defaultdict(Tally)))
    year_ago = as_of - YEAR
    unknown = ([(ALL, "")], None)
    for o in found:
        weight, recent_year = decay(as_of - o.sent_at), o.sent_at >= year_ago
        lender = out[o.account_id][o.lender_id]
        keys, criteria = features.get(o.deal_id, unknown)
        box = box_of(boxes.get(o.lender_id, []) + boxes.get((o.lender_id, o.account_id), []), criteria)
        lender[ALL_KEY].add(o.outcome, o.won, weight, recent_year, o.sent_at)
        for key in (*keys, *(((BOX, box),) if box else ())):
            if key != ALL_KEY:
                lender[key].add(o.outcome, o.won, weight, recent_year, None)
    for lenders in out.values():
        for tallies in lenders.values():
            for t in tallies.values():
                t.close()
    return out, len(found)


def learn(account_id: int, *, as_of: dt.datetime | None = None) -> Evidence:
    """What `account_id`'s own placements say (outcomes known at `as_of`, default now), in memory —
    the back-test's learning step; no other account's record is read."""
    as_of = as_of or timezone.now()
    tallies, _ = tally(observations(as_of=as_of, account_ids=[account_id]), as_of=as_of)
    return Evidence(own={lender: dict(t) for lender, t in tallies.get(account_id, {}).items()}, as_of=as_of)


def pool(per_account: list[Tally]) -> Tally | None:
    """The pooled aggregate of one (lender, feature) from the accounts' own tallies, or None when fewer
    than SIGNAL_MIN_ACCOUNTS accounts contributed. Each account's rates enter with a weight of at most
    POOL_CAP placements and at most POOL_MAX_SHARE_OF_OTHERS of all the others' weight together, so one
    account can neither stand alone nor outweigh the rest. Only rates are pooled: the 12-month counts
    and the recent outcomes of a pooled row stay empty (no account's counts show through)."""
    contributors = [t for t in per_account if t.sent > 0]
    if len(contributors) < SIGNAL_MIN_ACCOUNTS:
        return None
    weights = [min(t.sent, POOL_CAP) for t in contributors]
    total = sum(weights)
    capped = [min(w, POOL_MAX_SHARE_OF_OTHERS * (total - w)) for w in weights]
    pooled = Tally(accounts=len(contributors))
    for t, w in zip(contributors, capped, strict=True):
        pooled.sent += w
        pooled.quoted += w * t.quoted / t.sent
        pooled.declined += w * t.declined / t.sent
        pooled.no_answer += w * t.no_answer / t.sent
        pooled.won += w * t.won / t.sent
    return pooled


def pooled_tallies(per_account: dict[int, dict[int, Tallies]]) -> dict[int, Tallies]:
    """lender id → (dimension, value) → pooled Tally, for the features enough accounts share."""
    grouped: dict[tuple[int, tuple[str, str]], list[Tally]] = defaultdict(list)
    for lenders in per_account.values():
        for lender_id, tallies in lenders.items():
            for key, t in tallies.items():
                grouped[(lender_id, key)].append(t)
    out: dict[int, Tallies] = defaultdict(dict)
    for (lender_id, key), tallies in grouped.items():
        pooled = pool(tallies)
        if pooled is not None:
            out[lender_id][key] = pooled
    return dict(out)


# --- stored signals -------------------------------------------------------------------------------

_FIGURES = ("sent", "quoted", "declined", "no_answer", "won")
SIGNAL_COLUMNS = ("account_id", "lender_id", "dimension", "value", *[f"{n}_weight" for n in _FIGURES],
                  *[f"{n}_12m" for n in _FIGURES], "recent", "accounts", "refreshed_at")


def signal_rows(per_account: dict[int, dict[int, Tallies]], pooled: dict[int, Tallies], *,
                now: dt.datetime) -> Iterator[tuple]:
    """The LenderSignal rows of a refresh, as tuples in SIGNAL_COLUMNS order: every account's, then the
    pooled ones (account null)."""
    for account_id, lenders in [*per_account.items(), (None, pooled)]:
        for lender_id, tallies in lenders.items():
            for (dimension, value), t in tallies.items():
                yield (account_id, lender_id, dimension, value[:48], round(t.sent, 4), round(t.quoted, 4),
                       round(t.declined, 4), round(t.no_answer, 4), round(t.won, 4), t.sent_12m, t.quoted_12m,
                       t.declined_12m, t.no_answer_12m, t.won_12m, t.recent, t.accounts, now)


def write_signal_rows(rows: Iterable[tuple]) -> int:
    """Insert LenderSignal rows given as tuples in SIGNAL_COLUMNS order; the number written. PostgreSQL:
    one COPY (bulk_create built a model object and packed arrays for each of a million rows: 90 % of a
    refresh over 100k placements, docs/benchmarks.md); elsewhere executemany in batches."""
    from lenders.models import LenderSignal

    table = LenderSignal._meta.db_table
    quote = connection.ops.quote_name
    columns = ", ".join(quote(c) for c in SIGNAL_COLUMNS)
    written = 0
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
                    written += 1
            return written
        insert = f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(SIGNAL_COLUMNS))})"
        batch: list[tuple] = []
        for row in rows:
            batch.append((*row[:-1], connection.ops.adapt_datetimefield_value(row[-1])))
            if len(batch) >= 5000:
                cursor.executemany(insert, batch)
                written += len(batch)
                batch = []
        if batch:
            cursor.executemany(insert, batch)
            written += len(batch)
    return written


@dataclass(frozen=True)
class RefreshStats:
    placements: int
    rows: int
    seconds: float


def refresh_lender_signals(*, now: dt.datetime | None = None) -> RefreshStats:
    """Recompute every account's LenderSignal rows and the pooled ones from placements, and replace the
    stored ones in one transaction: a search reads the old rows or the new, never a mix, and a refresh
    that fails (a lost database, a killed worker) leaves the old rows in place. Records the refresh in
    SignalRefresh in the same transaction."""
    from lenders.models import LenderSignal, SignalRefresh

    now = now or timezone.now()
    started = time.monotonic()
    per_account, count = tally(observations(as_of=now), as_of=now)
    pooled = pooled_tallies(per_account)

    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                # One refresh at a time; readers go on reading the old rows until this commits.
                cursor.execute(f"LOCK TABLE {LenderSignal._meta.db_table} IN EXCLUSIVE MODE")
        LenderSignal.objects.all().delete()
        written = write_signal_rows(signal_rows(per_account, pooled, now=now))
        seconds = round(time.monotonic() - started, 3)
        SignalRefresh.objects.update_or_create(pk=1, defaults={"finished_at": timezone.now(), "placements": count,
                                                               "rows": written, "seconds": seconds})
    logger.info("Lender signals refreshed: %d placements, %d rows in %.1f s", count, written, seconds)
    return RefreshStats(count, written, seconds)


def load(account_id: int | None, features: list[tuple[str, str]]) -> Evidence:
    """The stored signals of `account_id` and the pooled ones, for the given features only: per owner,
    one query whose every branch is a range of the (account, dimension, value) lookup index (an OR
    across owners made PostgreSQL scan all of an account's rows: docs/benchmarks.md, seventh round).
    `account_id` None (a search without an account): the pooled ones alone."""
    from lenders.models import LenderSignal

    by_dimension: dict[str, list[str]] = defaultdict(list, {BOX: [INSIDE, OUTSIDE]})
    for dimension, value in features:
        by_dimension[dimension].append(value)
    columns = ("lender_id", "dimension", "value", "recent", "accounts",
               *[f"{n}_weight" for n in _FIGURES], *[f"{n}_12m" for n in _FIGURES])
    evidence = Evidence()
    owners = [(None, evidence.pooled)] if account_id is None else [(account_id, evidence.own), (None, evidence.pooled)]
    for owner, target in owners:
        whose = {"account__isnull": True} if owner is None else {"account_id": owner}
        wanted = Q()
        for dimension, values in by_dimension.items():  # the owner in every branch: each one an index range
            wanted |= Q(dimension=dimension, value__in=values, **whose)
        rows = LenderSignal.objects.filter(wanted).values_list(*columns)
        for lender_id, dimension, value, recent, accounts, *figures in rows:
            target.setdefault(lender_id, {})[(dimension, value)] = Tally(*figures, recent=recent, accounts=accounts)
    return evidence
