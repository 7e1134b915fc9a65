"""One ranking run of one LenderSearch: scores in the database → the top N described → written.

The run owns the search through its `run_token`: every write first updates the search row where
the token still matches, in the same transaction as the write, so a run that lost the search (the
sweep re-queued it while its worker stalled) stops at its next write instead of mixing its
matches with the new run's. Heartbeat and progress ride on those same updates.

Speed at directory scale (bench/bench_ranking.py, docs/benchmarks.md): the hard filters and the
scores of every candidate program run in one SQL statement (`sql_scoring.top_lenders`), which
returns only the best LEV_RANKING_TOP_N lenders and the count of all eligible ones. Only those N
are described in Python (their best programs and insights, from the pure `scoring` functions) and
written (COPY on PostgreSQL, bulk_create elsewhere), best first, one chunk per transaction —
after the first chunk of a large top N the search is `partial` and its top ranks can be read.
Before, every candidate came back to Python and every eligible lender was written: at 1M
programs that was 4-6 s, two thirds of it writing ~100k matches nobody pages through.
"""

from __future__ import annotations

import gc
import json
import logging
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from deals.searches.models import LenderMatch, LenderSearch
from deals.searches.ranking import insights, scoring
from deals.searches.ranking.criteria import DealCriteria
from deals.searches.ranking.filters import candidate_programs
from deals.searches.ranking.scoring import ProgramFit, ProgramRow
from deals.searches.ranking.sql_scoring import TopLenders, top_lenders
from lenders.models import LenderActivity
from lev.enums import LOAN_TYPES

logger = logging.getLogger(__name__)

PROGRAM_TITLE_MAX = 80


class LostOwnership(Exception):
    """Another run took the search over (or it was finished/failed elsewhere): stop quietly."""


@dataclass
class RunStats:
    candidates: int = 0  # programs that passed the hard filters
    matches: int = 0  # eligible lenders (the search's total_matches)
    ranked: int = 0  # of them, the top N stored (ranked_matches)
    chunks: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)


@dataclass
class ScoredLender:
    lender_id: int
    raw: float
    programs: list[tuple[ProgramFit, ProgramRow]]
    insights: list[str]


@lru_cache(maxsize=512)
def loan_types_of(mask: int) -> tuple[str, ...]:
    return tuple(name for bit, name in enumerate(LOAN_TYPES) if mask >> bit & 1)


def compact_program(row: ProgramRow) -> dict[str, Any]:
    title = row.title if len(row.title) <= PROGRAM_TITLE_MAX else row.title[: PROGRAM_TITLE_MAX - 1] + "…"
    return {
        "id": row.id,
        "title": title,
        "loan_types": list(loan_types_of(row.loan_type_mask)),
        "min_loan_amount": None if row.min_loan_amount is None else round(row.min_loan_amount),
        "max_loan_amount": None if row.max_loan_amount is None else round(row.max_loan_amount),
        "max_ltv": row.max_ltv,
        "min_dscr": row.min_dscr,
    }


# Ids per IN list: well under SQLite's variable limit, and a plain index lookup on PostgreSQL.
IDS_PER_QUERY = 900


def _chunks(ids: list[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), IDS_PER_QUERY):
        yield ids[start:start + IDS_PER_QUERY]


def fetch_candidates(criteria: DealCriteria, lender_ids: list[int]) -> list[ProgramRow]:
    """The candidate programs (every hard filter passed) of the given lenders."""
    rows: list[ProgramRow] = []
    for ids in _chunks(lender_ids):
        # Amounts and limits as their float copies, so every column arrives as a plain Python
        # value: the ORM's query, run on a raw cursor to skip its per-row converters.
        query = (
            candidate_programs(criteria).filter(lender_id__in=ids)
            .values_list("id", "lender_id", "title", "min_loan_float", "max_loan_float", "loan_type_mask",
                         "state_mask", "capital_source_type", "max_ltv_float", "min_dscr_float")
            .query
        )
        sql, params = query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows += [ProgramRow._make(row) for row in cursor.fetchall()]
    return rows


def fetch_activity(states: tuple[str, ...], lender_ids: list[int]
                   ) -> dict[int, dict[str, tuple[float, int, int, float | None]]]:
    """lender id → state → (score, quotes, closings, avg response hours), for the deal's markets."""
    activity: dict[int, dict[str, tuple[float, int, int, float | None]]] = defaultdict(dict)
    if not states:
        return activity
    for ids in _chunks(lender_ids):
        rows = LenderActivity.objects.filter(state__in=states, lender_id__in=ids).values_list(
            "lender_id", "state", "score", "quotes_90d", "closings_90d", "avg_response_hours"
        )
        for lender_id, state, score, quotes, closings, hours in rows:
            activity[lender_id][state] = (score, quotes, closings, hours)
    return activity


def describe_top(criteria: DealCriteria, top: list[tuple[int, float, int]], rows: list[ProgramRow],
                 activity: dict[int, dict[str, tuple[float, int, int, float | None]]]) -> list[ScoredLender]:
    """The ranked lenders of `top` (best first, as the database ranked them), each with its
    candidate programs best first and the insights of its best one.

    The score and the order are the database's (`sql_scoring`); the programs' fits are computed
    again here with `scoring.program_fit` (the same formula) for the few programs of these lenders,
    to order them and to word the insights."""
    amount, plan, ltv, dscr = criteria.loan_amount, criteria.business_plan, criteria.ltv, criteria.dscr
    by_lender: dict[int, list[tuple[ProgramFit, ProgramRow]]] = defaultdict(list)
    fit_of = scoring.program_fit
    for row in rows:
        by_lender[row.lender_id].append((fit_of(amount=amount, business_plan=plan, ltv=ltv, dscr=dscr, row=row), row))

    writer = insights.InsightWriter(amount=amount, business_plan=plan, ltv=ltv, dscr=dscr, states=criteria.states,
                                    asset_types=criteria.asset_types, debt_yield=criteria.debt_yield,
                                    dscr_basis=criteria.dscr_basis, dscr_interest_only=criteria.dscr_interest_only,
                                    dscr_amortizing=criteria.dscr_amortizing)
    no_activity: dict[str, tuple[float, int, int, float | None]] = {}
    described: list[ScoredLender] = []
    for lender_id, raw, _count in top:
        programs = by_lender[lender_id]  # read in the same snapshot as `top` (RankingRun._rank)
        programs.sort(key=lambda item: (-item[0].fit, item[1].id))
        best_fit, best_row = programs[0]
        markets = activity.get(lender_id, no_activity)
        if markets:
            top_state = max(markets, key=lambda s: (markets[s][0], s))
            reasons = writer.write(best_row, best_fit, top_state, markets[top_state][1:])
        else:
            reasons = writer.write(best_row, best_fit, None, None)
        described.append(ScoredLender(lender_id, raw, programs, reasons))
    return described


_compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

MATCH_COLUMNS = ("search_id", "rank", "lender_id", "score", "match_insights", "programs", "program_count")


def write_matches(rows: list[tuple]) -> None:
    """Insert LenderMatch rows given as tuples in MATCH_COLUMNS order.

    On PostgreSQL this is one COPY: measured at 100k programs (8-12k matches), bulk_create took
    1.0-1.4 s — Django 5.2 sends PostgreSQL bulk inserts as UNNEST arrays and escapes every jsonb
    element through a regex — and COPY about a quarter of that, most of it the server's own work
    (jsonb parsing, four indexes, foreign-key checks). Elsewhere, bulk_create."""
    if not rows:
        return
    if connection.vendor == "postgresql":
        table = LenderMatch._meta.db_table
        columns = ", ".join(connection.ops.quote_name(c) for c in MATCH_COLUMNS)
        dumps = _compact_json
        with connection.cursor() as cursor, cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for search_id, rank, lender_id, score, reasons, programs, count in rows:
                copy.write_row((search_id, rank, lender_id, score, dumps(reasons), dumps(programs), count))
        return
    LenderMatch.objects.bulk_create([LenderMatch(**dict(zip(MATCH_COLUMNS, row, strict=True))) for row in rows])


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the run. A run allocates some 10^5 small acyclic
    objects (rows, fits, insight lists) that the collector would otherwise traverse again and
    again: measured at 100k programs, scoring took 179 ms with it and 97 ms without. Nothing the
    run makes has cycles, so nothing waits for the collector; it resumes right after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class RankingRun:
    def __init__(self, search_id: int, token: str, criteria: DealCriteria):
        self.search_id = search_id
        self.token = token
        self.criteria = criteria
        self.stats = RunStats()

    def _update(self, **fields: Any) -> None:
        """Heartbeat plus `fields`, only while this run still owns the search."""
        fields["heartbeat_at"] = timezone.now()
        owned = LenderSearch.objects.filter(
            pk=self.search_id, run_token=self.token,
            status__in=(LenderSearch.Status.RUNNING, LenderSearch.Status.PARTIAL),
        ).update(**fields)
        if not owned:
            raise LostOwnership(self.search_id)

    def _timed(self, name: str, started: float) -> float:
        now = time.perf_counter()
        self.stats.timings_ms[name] = round((now - started) * 1000, 1)
        return now

    def run(self) -> RunStats:
        with gc_paused():
            return self._run()

    def _run(self) -> RunStats:
        started = t = time.perf_counter()
        with transaction.atomic():
            self._update(progress=5)
            # A re-run (after a crash) starts from a clean slate, so it writes the same matches.
            LenderMatch.objects.filter(search_id=self.search_id).delete()
        t = self._timed("reset", t)

        ranked, top = self._rank()
        self.stats.candidates, self.stats.matches, self.stats.ranked = (
            top.total_candidates, top.total_lenders, len(ranked))
        t = time.perf_counter()
        self._update(progress=50, total_candidates=top.total_candidates, total_matches=top.total_lenders,
                     ranked_matches=len(ranked))

        self._write(ranked)
        t = self._timed("write", t)
        with transaction.atomic():
            self._update(status=LenderSearch.Status.COMPLETED, progress=100, finished_at=timezone.now(),
                         error_code="", error_message="")
        self._timed("total", started)
        return self.stats

    def _rank(self) -> tuple[list[ScoredLender], TopLenders]:
        """The top N, scored in the database, then described from their programs and activity.
        All three reads see one snapshot (REPEATABLE READ on PostgreSQL; a SQLite transaction
        is one already), so an edit of the directory in between cannot leave a ranked lender
        without its programs. Reads only: no lock is taken, nothing waits on it."""
        # (Inside an outer transaction, a test's, the snapshot is that transaction's business.)
        own_snapshot = connection.vendor == "postgresql" and not connection.in_atomic_block
        t = time.perf_counter()
        with transaction.atomic():
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    if own_snapshot:
                        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                    # For this transaction only. JIT compiled the scoring expressions on every run
                    # (0.7 s at 1M programs) for a statement that runs once; the per-lender hash
                    # aggregates spill to disk in the default 4 MB (bench/bench_ranking.py).
                    cursor.execute("SET LOCAL jit = off")
                    cursor.execute("SELECT set_config('work_mem', %s, true)",
                                   [f"{max(4, settings.LEV_RANKING_WORK_MEM_MB)}MB"])
            top = top_lenders(self.criteria, max(1, settings.LEV_RANKING_TOP_N))
            t = self._timed("score_sql", t)
            ids = [lender_id for lender_id, _raw, _n in top.lenders]
            rows = fetch_candidates(self.criteria, ids)
            activity = fetch_activity(self.criteria.states, ids)
        ranked = describe_top(self.criteria, top.lenders, rows, activity)
        self._timed("describe", t)
        return ranked, top

    def _write(self, ranked: list[ScoredLender]) -> None:
        chunk = max(1, settings.LEV_SEARCH_WRITE_CHUNK)
        keep = max(1, settings.LEV_SEARCH_PROGRAMS_PER_MATCH)
        total = len(ranked)
        for start in range(0, total, chunk):
            rows = [
                (self.search_id, start + offset + 1, item.lender_id, min(100, max(0, round(item.raw))),
                 item.insights, [compact_program(row) for _fit, row in item.programs[:keep]], len(item.programs))
                for offset, item in enumerate(ranked[start:start + chunk])
            ]
            written = start + len(rows)
            fields: dict[str, Any] = {"progress": 50 + (49 * written) // total}
            if written < total:
                # The top ranks are final once written: readers may page through them now.
                fields["status"] = LenderSearch.Status.PARTIAL
            with transaction.atomic():
                if connection.vendor == "postgresql":
                    # No fsync wait per chunk: a chunk lost in a database crash is redone when
                    # the sweep re-runs the stale search, and the final, synchronous commit of
                    # the completed status flushes the WAL of every chunk before it.
                    with connection.cursor() as cursor:
                        cursor.execute("SET LOCAL synchronous_commit TO OFF")
                self._update(**fields)
                write_matches(rows)
            self.stats.chunks += 1
