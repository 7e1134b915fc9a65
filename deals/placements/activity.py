"""Lender activity signals computed from the work recorded through Lev: placements and term sheets.

For each account, lender and market (a state of a placed deal's properties), over the last 90 days — an
account's figures from its own placements only, never another account's (issue 37):

* `quotes_90d` — placements of the lender that received a quote (a live term sheet) in the window;
* `closings_90d` — placements the lender won in the window (a winning quote chosen);
* `avg_response_hours` — the MEDIAN hours from sending the deal to the lender's first answer
  (reviewing, a quote or a decline), over first answers in the window, to 0.1 h. The column keeps
  its historical name (the activity list reads it, per market); what it holds is the median, which
  one slow outlier cannot move. A lender's one figure over all its markets (the lender page's) is
  `lender_response_time`: the same definition over each placement once, never an average of the
  markets' medians.

`lender_activity_recompute` replaces the whole LenderActivity table with these figures in one
transaction and one INSERT … SELECT over placements and term sheets, scored in the same statement
with the ranking's formula (`lenders.activity.activity_score_expression`, compiled for the new
rows). The median is PostgreSQL's `percentile_cont` in the same aggregation as the counts; SQLite,
which has no ordered-set aggregates, takes the middle row(s) with window functions. Readers see the
old table until the new one commits.
"""

from __future__ import annotations

import datetime as dt
import logging
import statistics
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from lenders.activity import activity_score_expression
from lenders.models import LenderActivity

logger = logging.getLogger(__name__)

WINDOW_DAYS = 90
FRESH = "fresh"  # the name of the recomputed rows in the statement (a CTE)

# What happened to each placement in the window (rows only for placements with an event in it).
_EVENTS = """
markets AS (
    SELECT DISTINCT deal_id, state FROM {dealproperty} WHERE state <> ''
),
quoted AS (
    SELECT DISTINCT placement_id FROM {termsheet} WHERE deleted_at IS NULL AND received_at >= %s
),
events AS (
    SELECT p.deal_id, d.account_id, p.lender_id,
           CASE WHEN q.placement_id IS NULL THEN 0 ELSE 1 END AS quoted,
           CASE WHEN p.status = 'won' AND p.decided_at >= %s THEN 1 ELSE 0 END AS closed,
           CASE WHEN p.first_response_at >= %s AND p.first_response_at >= p.sent_at THEN {hours} END AS hours
    FROM {placement} p JOIN {deal} d ON d.id = p.deal_id LEFT JOIN quoted q ON q.placement_id = p.id
    WHERE q.placement_id IS NOT NULL OR p.decided_at >= %s OR p.first_response_at >= %s
)"""

# The recomputed rows, named FRESH, with the columns of LenderActivity.
_FRESH = {
    "postgresql": """
fresh AS (
    SELECT e.account_id, e.lender_id, m.state, SUM(e.quoted) AS quotes_90d, SUM(e.closed) AS closings_90d,
           ROUND(CAST(percentile_cont(0.5) WITHIN GROUP (ORDER BY e.hours) AS numeric), 1)::float
               AS avg_response_hours
    FROM events e JOIN markets m ON m.deal_id = e.deal_id
    GROUP BY e.account_id, e.lender_id, m.state
)""",
    "sqlite": """
per_market AS (
    SELECT e.account_id, e.lender_id, m.state, e.quoted, e.closed, e.hours
    FROM events e JOIN markets m ON m.deal_id = e.deal_id
),
counts AS (
    SELECT account_id, lender_id, state, SUM(quoted) AS quotes, SUM(closed) AS closings
    FROM per_market GROUP BY account_id, lender_id, state
),
ranked AS (
    SELECT account_id, lender_id, state, hours,
           ROW_NUMBER() OVER (PARTITION BY account_id, lender_id, state ORDER BY hours) AS position,
           COUNT(*) OVER (PARTITION BY account_id, lender_id, state) AS answered
    FROM per_market WHERE hours IS NOT NULL
),
medians AS (
    SELECT account_id, lender_id, state, AVG(hours) AS hours
    FROM ranked WHERE position IN ((answered + 1) / 2, (answered + 2) / 2)
    GROUP BY account_id, lender_id, state
),
fresh AS (
    SELECT c.account_id, c.lender_id, c.state, c.quotes AS quotes_90d, c.closings AS closings_90d,
           ROUND(md.hours, 1) AS avg_response_hours
    FROM counts c LEFT JOIN medians md
        ON md.account_id = c.account_id AND md.lender_id = c.lender_id AND md.state = c.state
)""",
}

# Hours between two timestamps, per database.
_HOURS = {
    "postgresql": "EXTRACT(EPOCH FROM ({later} - {earlier})) / 3600.0",
    "sqlite": "(julianday({later}) - julianday({earlier})) * 24.0",
}

_INSERT = """
INSERT INTO {activity} (account_id, lender_id, state, quotes_90d, closings_90d, avg_response_hours, score,
                        updated_at)
SELECT fresh.account_id, fresh.lender_id, fresh.state, fresh.quotes_90d, fresh.closings_90d,
       fresh.avg_response_hours, {score}, %s
FROM fresh
WHERE fresh.quotes_90d > 0 OR fresh.closings_90d > 0 OR fresh.avg_response_hours IS NOT NULL
"""


def _score_sql() -> tuple[str, list]:
    """The activity score (one formula, lenders.activity) compiled over the FRESH rows."""
    query = LenderActivity.objects.annotate(activity=activity_score_expression()).query
    query.change_aliases({LenderActivity._meta.db_table: FRESH})
    return query.get_compiler(connection=connection).compile(query.annotations["activity"])


def _statement(since, stamp) -> tuple[str, list]:
    from deals.models import Deal, DealProperty, Placement, TermSheet

    vendor = "sqlite" if connection.vendor == "sqlite" else "postgresql"
    score, score_params = _score_sql()
    events = _EVENTS.format(
        dealproperty=DealProperty._meta.db_table, termsheet=TermSheet._meta.db_table,
        placement=Placement._meta.db_table, deal=Deal._meta.db_table,
        hours=_HOURS[vendor].format(later="p.first_response_at", earlier="p.sent_at"),
    )
    sql = ("WITH" + events + "," + _FRESH[vendor]
           + _INSERT.format(activity=LenderActivity._meta.db_table, score=score))
    return sql, [since] * 5 + list(score_params) + [stamp]


@dataclass(frozen=True)
class ResponseTime:
    """A lender's answer time: the median hours from sending a deal to its first answer, over the
    placements first answered in the last `days` days (`answers` of them, each placement once)."""

    median_hours: float
    answers: int
    days: int = WINDOW_DAYS

    def in_words(self) -> str:
        """"median 47 hours (12 answers in the last 90 days)"; days from 48 hours on."""
        figure = (f"median {self.median_hours:,.0f} hours" if self.median_hours < 48
                  else f"median {self.median_hours / 24:,.1f} days".replace(".0 days", " days"))
        return f"{figure} ({self.answers} answer{'s' if self.answers != 1 else ''} in the last {self.days} days)"


def lender_response_time(*, lender_id: int, account_ids: list[int], now: dt.datetime | None = None
                         ) -> ResponseTime | None:
    """The lender's one answer-time figure for these accounts (a lender page shows it): the same
    definition as the per-market `avg_response_hours` (the median of the hours from `sent_at` to
    `first_response_at`, over first answers in the last WINDOW_DAYS days, an answer before the send
    left out), over every market at once — each placement once, not an average of the markets'
    medians. None without an answer in the window. One query."""
    from deals.placements.models import Placement

    since = (now or timezone.now()) - dt.timedelta(days=WINDOW_DAYS)
    rows = (Placement.objects.filter(lender_id=lender_id, deal__account_id__in=account_ids,
                                     first_response_at__gte=since, sent_at__isnull=False)
            .filter(first_response_at__gte=F("sent_at")).values_list("sent_at", "first_response_at"))
    hours = [(answered - sent).total_seconds() / 3600 for sent, answered in rows]
    if not hours:
        return None
    return ResponseTime(round(statistics.median(hours), 1), len(hours))


def lender_activity_recompute(*, now: dt.datetime | None = None) -> int:
    """Recompute every lender's per-market activity signals from placements and term sheets (see
    the module docstring), scored. Idempotent: the same records give the same table. Returns the
    number of (lender, market) rows written."""
    now = now or timezone.now()
    since = connection.ops.adapt_datetimefield_value(now - dt.timedelta(days=WINDOW_DAYS))
    stamp = connection.ops.adapt_datetimefield_value(now)
    started = time.monotonic()
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One recompute at a time (two would insert the same rows); readers are not blocked.
            cursor.execute(f"LOCK TABLE {LenderActivity._meta.db_table} IN EXCLUSIVE MODE")
            # Set-based, but over every placement: give it the task's time, not a web request's.
            cursor.execute(f"SET LOCAL statement_timeout = {int(settings.LEV_ACTIVITY_STATEMENT_TIMEOUT_MS)}")
            # The median sorts every answered placement of the window: in memory, not in temporary files.
            cursor.execute(f"SET LOCAL work_mem = '{int(settings.LEV_ACTIVITY_WORK_MEM_MB)}MB'")
        cursor.execute(f"DELETE FROM {LenderActivity._meta.db_table}")
        cursor.execute(*_statement(since, stamp))
        # Counted, not cursor.rowcount: SQLite's driver reports -1 for a statement that starts with WITH.
        written = LenderActivity.objects.count()
    logger.info("Lender activity recomputed: %d lender markets in %.0f ms", written,
                (time.monotonic() - started) * 1000)
    return written
