"""One ranking run of one LenderSearch: scores in the database → the top N described → written.

The run owns the search through its `run_token`: every write first updates the search row where
the token still matches, in the same transaction as the write, so a run that lost the search (the
sweep re-queued it while its worker stalled) stops at its next write instead of mixing its
matches with the new run's. Heartbeat and progress ride on those same updates.

Speed at directory scale (bench/bench_ranking.py, docs/benchmarks.md): the hard filters and the
fit of every candidate program run in one SQL statement (`sql_scoring.top_lenders`), which
returns only the best LEV_RANKING_TOP_N lenders by the stated programs and the count of all eligible
ones. Only those N, and the lenders the account's stored evidence names, are re-scored in Python
(`predict`: the evidence, the sizing), described (insights) and
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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from deals.searches.models import LenderMatch, LenderSearch
from deals.searches.ranking import evidence, insights
from deals.searches.ranking.criteria import DealCriteria
from deals.searches.ranking.predict import Prediction, Ranking, rank_search
from deals.searches.ranking.scoring import ProgramRow
from deals.searches.ranking.sizing import index_rates_today
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


def describe_top(criteria: DealCriteria, ranked: list[Prediction]) -> list[list[str]]:
    """The insights of each ranked lender (best first, as ranked): what separates it first — what its
    best program would lend, what the account's own record with it says — then its best program's fit
    against the deal (coverage, leverage, capital, loan size), and last what every row shares (asset
    type, geography)."""
    amount, plan, ltv, dscr = criteria.loan_amount, criteria.business_plan, criteria.ltv, criteria.dscr
    writer = insights.InsightWriter(amount=amount, business_plan=plan, ltv=ltv, dscr=dscr, states=criteria.states,
                                    asset_types=criteria.asset_types, debt_yield=criteria.debt_yield,
                                    dscr_basis=criteria.dscr_basis, dscr_interest_only=criteria.dscr_interest_only,
                                    dscr_amortizing=criteria.dscr_amortizing)
    reasons = decline_reasons(criteria, [item.lender_id for item in ranked if item.tallies])
    described = []
    for item in ranked:
        lead = insights.evidence_lines(item.tallies, item.pooled, criteria, outside_box=item.outside_box,
                                       decline_reason=reasons.get(item.lender_id))
        if item.sizing is not None:
            lead.insert(0, insights.sizing_line(item.sizing))
        if item.programs:
            fit, row = item.programs[0]
            described.append(writer.write(row, fit, lead))
        else:
            described.append([*lead, writer.asset])
    return described


def decline_reasons(criteria: DealCriteria, lender_ids: list[int]) -> dict[int, str]:
    """lender id -> the latest reason the account recorded for a decline by it of a deal of this deal's
    asset types (the account's own placements only: a reason is one team's words about one deal)."""
    from deals.models import Placement

    if criteria.account_id is None or not lender_ids:
        return {}
    found: dict[int, str] = {}
    for ids in evidence.chunks(lender_ids):
        rows = (Placement.objects.filter(deal__account_id=criteria.account_id, lender_id__in=ids,
                                         status=Placement.Status.DECLINED,
                                         deal__properties__asset_type__in=criteria.asset_types)
                .exclude(decline_reason="").order_by("lender_id", F("decided_at").desc(nulls_last=True), "-id")
                .values_list("lender_id", "decline_reason"))
        for lender_id, reason in rows:
            found.setdefault(lender_id, reason)
    return found


_compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

MATCH_COLUMNS = ("search_id", "rank", "lender_id", "score", "match_insights", "programs", "program_count", "sizing",
                 "score_parts", "capital_source", "outside_box")


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
            for search_id, rank, lender_id, score, reasons, programs, count, sized, parts, source, outside in rows:
                copy.write_row((search_id, rank, lender_id, score, dumps(reasons), dumps(programs), count,
                                dumps(sized), dumps(parts), source, outside))
        return
    LenderMatch.objects.bulk_create([LenderMatch(**dict(zip(MATCH_COLUMNS, row, strict=True))) for row in rows])


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the run. A run allocates some 10^5 small acyclic
    objects (rows, fits, insight lists) that the collector would otherwise traverse again and
    again, for nearly half the scoring time (docs/benchmarks.md). Nothing the
    run makes has cycles, so nothing waits for the collector; it resumes right after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class RankingRun:
    def __init__(self, search_id: int, token: str, criteria: DealCriteria, *, account_id: int | None = None):
        self.search_id = search_id
        self.account_id = account_id
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

        ranked, ranking = self._rank()
        self.stats.candidates, self.stats.matches, self.stats.ranked = (
            ranking.total_candidates, ranking.total_lenders, len(ranked))
        t = time.perf_counter()
        self._update(progress=50, total_candidates=ranking.total_candidates, total_matches=ranking.total_lenders,
                     ranked_matches=len(ranked))

        self._write(ranked)
        t = self._timed("write", t)
        with transaction.atomic():
            self._update(status=LenderSearch.Status.COMPLETED, progress=100, finished_at=timezone.now(),
                         error_code="", error_message="")
        self._timed("total", started)
        return self.stats

    def _rank(self) -> tuple[list[tuple[Prediction, list[str]]], Ranking]:
        """The top N: every candidate program's fit scored in the database, the best lenders by it and
        those the account's evidence names re-scored with the evidence and the sizing (`predict`), then
        described. All the reads see one snapshot (REPEATABLE READ on PostgreSQL; a SQLite transaction
        is one already), so an edit of the directory or a signal refresh in between cannot leave a
        ranked lender without its programs, or mix old signals with new. Reads only: no lock is taken."""
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
            learned = evidence.load(self.account_id, evidence.criteria_features(self.criteria))
            t = self._timed("evidence", t)
            ranking = rank_search(self.criteria, evidence=learned, limit=max(1, settings.LEV_RANKING_TOP_N),
                                  index_rates=index_rates_today())
            t = self._timed("score", t)
        described = describe_top(self.criteria, ranking.predictions)
        self._timed("describe", t)
        return list(zip(ranking.predictions, described, strict=True)), ranking

    def _write(self, ranked: list[tuple[Prediction, list[str]]]) -> None:
        chunk = max(1, settings.LEV_SEARCH_WRITE_CHUNK)
        keep = max(1, settings.LEV_SEARCH_PROGRAMS_PER_MATCH)
        total = len(ranked)
        for start in range(0, total, chunk):
            rows = [
                (self.search_id, start + offset + 1, item.lender_id, min(100, max(0, round(item.score))),
                 reasons, [compact_program(row) for _fit, row in item.programs[:keep]], len(item.programs),
                 {} if item.sizing is None else item.sizing.as_dict(), item.score_parts(), item.capital_source,
                 item.outside_box)
                for offset, (item, reasons) in enumerate(ranked[start:start + chunk])
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
