"""Writes of lender discovery: starting, running, failing and recovering lender searches, and the
activity signals the ranking reads. Keyword-only; callers pass validated data."""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import time
import uuid

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from deals.models import Deal, DealFinancials, DealProperty
from deals.pipeline import services as pipeline
from deals.searches.errors import ArchivedDealNotSearchable, DealNotReadyForSearch
from deals.searches.metrics import SEARCH_QUEUE_WAIT, SEARCH_RUN
from deals.searches.models import LenderMatch, LenderSearch
from deals.searches.ranking import DealCriteria, criteria_from_deal, missing_for_search
from deals.searches.ranking.runner import LostOwnership, RankingRun, RunStats
from deals.searches.selectors import lender_search_reusable
from lev.celery_app import app as celery_app
from lev.errors import UPSTREAM_MESSAGE, ErrorCode
from lev.outages import TRANSIENT_DB_ERRORS, drop_broken_connection, is_dependency_outage, report_outage

logger = logging.getLogger(__name__)

Status = LenderSearch.Status
ACTIVE_STATUSES = (Status.RUNNING, Status.PARTIAL)
# Length of the owner (task id) part of a run token; the rest of its 32 characters is random.
OWNER_TAG_LEN = 16
# The job that runs a search (deals.searches.tasks), sent by its name: the tasks call these services, so
# this module does not import them (DealsConfig.ready() does, in every process).
RUN_SEARCH_TASK = "lenders.tasks.run_lender_search"


def _stale_cutoff(now: dt.datetime) -> dt.datetime:
    return now - dt.timedelta(seconds=settings.LEV_SEARCH_STALE_SECONDS)


def check_deal_searchable(*, deal: Deal, properties: list[DealProperty]) -> None:
    """Raise a BusinessRuleViolation naming exactly what keeps the deal from a lender search."""
    if deal.archived:
        raise ArchivedDealNotSearchable(deal)
    missing = missing_for_search(deal, properties)
    if missing:
        raise DealNotReadyForSearch(deal, missing)


def enqueue_search(search_id: int) -> None:
    """Queue the ranking job once the current transaction commits (at once outside one).

    A broker that cannot be reached is not an error of the caller: the search stays `pending`
    with `queued_at` cleared ("not queued"), which the API reports to the agent, and the
    stale-search sweep queues it as soon as the broker answers again."""
    def send() -> None:
        try:
            # The job's time limits travel in its message, read from the settings now (a setting is
            # never frozen at import; deals.searches.tasks).
            celery_app.tasks[RUN_SEARCH_TASK].apply_async(
                (search_id,), soft_time_limit=settings.LEV_SEARCH_SOFT_TIME_LIMIT,
                time_limit=settings.LEV_SEARCH_TIME_LIMIT,
            )
        except Exception as exc:
            if is_dependency_outage(exc):  # the broker is down: said once per interval, no traceback
                report_outage(exc, f"queueing lender search {search_id}; the sweep queues it when the broker is back")
            else:
                logger.exception("Could not queue lender search %s; the sweep queues it later", search_id)
            try:
                LenderSearch.objects.filter(pk=search_id, status=Status.PENDING).update(queued_at=None)
            except TRANSIENT_DB_ERRORS:
                # Still `pending` with its queued_at: the sweep finds it after the stale cutoff.
                logger.exception("Could not mark lender search %s as not queued", search_id)

    transaction.on_commit(send)


def lender_search_start(*, deal: Deal, user=None) -> tuple[LenderSearch, bool]:
    """Start a ranking of the deal, or return a recent search of the same deal version.

    Returns (search, created). The deal row is locked while deciding, so concurrent starts of one
    deal make one search. A new search moves the deal forward to the "in market" stage (recorded as
    automatic). Side effect: queues `run_lender_search` on commit.
    """
    with transaction.atomic():
        deal = Deal.objects.select_for_update().get(pk=deal.pk)
        properties = list(DealProperty.objects.filter(deal=deal).order_by("id"))
        check_deal_searchable(deal=deal, properties=properties)
        reusable = lender_search_reusable(deal=deal)
        if reusable is not None:
            return reusable, False
        financials = DealFinancials.objects.filter(deal=deal).first()
        criteria = criteria_from_deal(deal, properties, financials)
        search = LenderSearch.objects.create(
            account_id=deal.account_id,
            deal=deal,
            deal_version=deal.version,
            criteria=criteria.as_dict(),
            created_by=user if getattr(user, "pk", None) else None,
            queued_at=timezone.now(),
        )
        # The deal is in market now: forward only, under the same lock, in the same transaction.
        pipeline.deal_advance_stage(deal=deal, key=pipeline.SEARCH_STARTED, user=search.created_by,
                                    reason=f"Lender search {search.pk} started.")
        enqueue_search(search.pk)
    return search, True


def _owner_tag(owner: str) -> str:
    return hashlib.sha256(owner.encode()).hexdigest()[:OWNER_TAG_LEN]


def _claim(search_id: int, owner: str | None = None) -> str | None:
    """Take the search for a run: pending; active with a stale heartbeat (its worker died); or
    active under a token of the same `owner` (the Celery task id, which a retry or a redelivery
    keeps) — that run is known dead, as one task runs one attempt at a time, e.g. a run whose
    database connection was lost before it could put the search back to pending.

    Returns the run token, or None when there is nothing to do (finished, failed, or another
    live run has it) — which makes a repeated or redelivered job of another task a no-op. The
    token is the owner's tag plus a random part, so a run that lost the search still stops at
    its next write even when a newer run of the same task took it over."""
    now = timezone.now()
    if owner:
        tag = _owner_tag(owner)
        token = tag + uuid.uuid4().hex[OWNER_TAG_LEN:]
    else:
        tag, token = None, uuid.uuid4().hex
    claimable = Q(status=Status.PENDING) | Q(status__in=ACTIVE_STATUSES, heartbeat_at__lt=_stale_cutoff(now))
    if tag:
        claimable |= Q(status__in=ACTIVE_STATUSES, run_token__startswith=tag)
    claimed = (
        LenderSearch.objects.filter(pk=search_id)
        .filter(claimable)
        .update(status=Status.RUNNING, run_token=token, attempts=F("attempts") + 1, started_at=now,
                heartbeat_at=now, finished_at=None, progress=0, error_code="", error_message="")
    )
    return token if claimed else None


def _finish_failed(search_id: int, token: str | None, code: str, message: str) -> bool:
    qs = LenderSearch.objects.filter(pk=search_id)
    qs = qs.filter(run_token=token) if token is not None else qs
    return bool(
        qs.exclude(status__in=(Status.COMPLETED, Status.FAILED)).update(
            status=Status.FAILED, error_code=code, error_message=message[:500], finished_at=timezone.now(),
            heartbeat_at=timezone.now(), run_token="",
        )
    )


def lender_search_run(*, search_id: int, owner: str | None = None) -> RunStats | None:
    """Run the ranking of one search, if it is there to run. Idempotent: a finished search is
    left alone and a re-run replaces the matches of an interrupted one. `owner` is the Celery
    task id: a retry of the same task takes over a search its previous attempt left `running`.

    Failures are recorded on the search (status failed, error code and message), except
    transient database errors, which reconnect, put the search back to pending (when the
    database answers again) and propagate so the task can retry."""
    token = _claim(search_id, owner)
    if token is None:
        logger.info("Lender search %s: nothing to run (finished, failed or owned by a live run)", search_id)
        return None
    started = time.monotonic()
    outcome = "failed"
    try:
        raw, queued_at, created_at, claimed_at, deal_id, account_id = LenderSearch.objects.values_list(
            "criteria", "queued_at", "created_at", "started_at", "deal_id", "account_id").get(pk=search_id)
        SEARCH_QUEUE_WAIT.observe(max(0.0, (claimed_at - (queued_at or created_at)).total_seconds()))
        stats = RankingRun(search_id, token, DealCriteria.from_dict(raw), account_id=account_id).run()
        outcome = "completed"
    except LostOwnership:
        outcome = "taken_over"
        logger.warning("Lender search %s was taken over by another run; this run stops", search_id)
        return None
    except SoftTimeLimitExceeded:
        outcome = "timed_out"
        logger.error("Lender search %s hit its time limit", search_id)
        _finish_failed(search_id, token, ErrorCode.UPSTREAM_UNAVAILABLE,
                       f"{UPSTREAM_MESSAGE} Lender search {search_id} took too long and was stopped.")
        return None
    except TRANSIENT_DB_ERRORS:
        outcome = "database_unavailable"
        drop_broken_connection()
        try:
            LenderSearch.objects.filter(pk=search_id, run_token=token).update(
                status=Status.PENDING, run_token="", progress=0, queued_at=timezone.now())
        except TRANSIENT_DB_ERRORS:
            # The database is still away: the search stays `running` under this task's token,
            # which the task's retry (same owner) takes over without waiting for the sweep.
            drop_broken_connection()
            logger.warning("Lender search %s: database unavailable; the task's retry takes it over", search_id)
        raise
    except Exception:
        logger.exception("Lender search %s failed", search_id)
        _finish_failed(search_id, token, ErrorCode.INTERNAL_ERROR,
                       f"Internal error: lender search {search_id} failed unexpectedly.")
        return None
    finally:
        SEARCH_RUN.labels(outcome).observe(time.monotonic() - started)
    logger.info("Lender search %s completed: %d candidates, %d eligible lenders, top %d stored, %s", search_id,
                stats.candidates, stats.matches, stats.ranked, stats.timings_ms)
    _purge_after_completion(deal_id)
    return stats


def _purge_after_completion(deal_id: int) -> None:
    """The search just completed supersedes the deal's older ones: purge those past retention now
    (the beat task does it for every deal anyway, so a failure here only logs)."""
    try:
        lender_matches_purge(deal_id=deal_id)
    except Exception as exc:
        if isinstance(exc, TRANSIENT_DB_ERRORS):
            drop_broken_connection()
        if is_dependency_outage(exc):
            report_outage(exc, f"purging superseded matches of deal {deal_id}")
        else:
            logger.exception("Could not purge superseded matches of deal %s; the periodic purge retries", deal_id)


def lender_search_give_up(*, search_id: int, owner: str | None = None) -> bool:
    """After the task's retries ran out on transient errors: fail the search if nobody is
    running it (pending, or still `running` under this task's own token)."""
    mine = Q(status=Status.PENDING)
    if owner:
        mine |= Q(status__in=ACTIVE_STATUSES, run_token__startswith=_owner_tag(owner))
    return bool(
        LenderSearch.objects.filter(mine, pk=search_id).update(
            status=Status.FAILED, error_code=ErrorCode.UPSTREAM_UNAVAILABLE,
            error_message=f"{UPSTREAM_MESSAGE} Lender search {search_id} could not reach the database.",
            finished_at=timezone.now(), run_token="",
        )
    )


def _is_stale(search: LenderSearch, now: dt.datetime, *, unqueued_now: bool = False) -> bool:
    """Whether the sweep should act on the search. `unqueued_now`: a pending search whose job
    could not be handed to the broker (queued_at cleared) is due at once, not after the cutoff."""
    cutoff = _stale_cutoff(now)
    if search.status in ACTIVE_STATUSES:
        return search.heartbeat_at is None or search.heartbeat_at < cutoff
    if search.status == Status.PENDING:
        if search.queued_at is None and unqueued_now:
            return True
        return (search.queued_at or search.created_at) < cutoff
    return False


def _recover(search: LenderSearch, now: dt.datetime, *, unqueued_now: bool = False) -> str | None:
    """Re-queue a stale search, or fail it once it has used its attempts. Returns what was done.

    The update is conditional on the state that was judged stale, so a run that heartbeats in
    the meantime keeps its search."""
    if not _is_stale(search, now, unqueued_now=unqueued_now):
        return None
    same = LenderSearch.objects.filter(pk=search.pk, status=search.status, heartbeat_at=search.heartbeat_at,
                                       queued_at=search.queued_at)
    max_attempts = settings.LEV_SEARCH_MAX_ATTEMPTS
    waited_too_long = search.created_at < now - dt.timedelta(seconds=settings.LEV_SEARCH_PENDING_GIVE_UP_SECONDS)
    if search.attempts >= max_attempts or (search.status == Status.PENDING and waited_too_long):
        done = same.update(
            status=Status.FAILED, run_token="", finished_at=now, error_code=ErrorCode.UPSTREAM_UNAVAILABLE,
            error_message=f"{UPSTREAM_MESSAGE} Lender search {search.pk} stopped before finishing "
                          f"(ranking worker lost after {search.attempts} attempt(s)).",
        )
        return "failed" if done else None
    with transaction.atomic():
        done = same.update(status=Status.PENDING, run_token="", progress=0, heartbeat_at=None, queued_at=now)
        if done:
            enqueue_search(search.pk)
    return "requeued" if done else None


def lender_search_sweep() -> dict[str, int]:
    """Find searches whose worker died (no heartbeat), whose job never started, or whose job
    could not be queued (broker down when they were started: queued at once now), and re-queue
    them — or fail them after LEV_SEARCH_MAX_ATTEMPTS — so none stays pending/running forever."""
    now = timezone.now()
    cutoff = _stale_cutoff(now)
    stale = LenderSearch.objects.filter(
        Q(status__in=ACTIVE_STATUSES, heartbeat_at__lt=cutoff)
        | Q(status__in=ACTIVE_STATUSES, heartbeat_at__isnull=True)
        | Q(status=Status.PENDING, queued_at__lt=cutoff)
        | Q(status=Status.PENDING, queued_at__isnull=True)
    ).order_by("id")
    counts = {"requeued": 0, "failed": 0}
    for search in stale.iterator():
        outcome = _recover(search, now, unqueued_now=True)
        if outcome:
            counts[outcome] += 1
    if any(counts.values()):
        logger.warning("Stale lender searches: %s", counts)
    return counts


def lender_search_recover_if_stale(*, search: LenderSearch) -> LenderSearch:
    """The sweep for one search (reading a search whose worker died recovers it at once, also
    where no beat scheduler runs). Returns the search as it is now."""
    if _recover(search, timezone.now()):
        search.refresh_from_db()
    return search


# Searches whose matches one purge transaction deletes: a few thousand rows each at most.
PURGE_BATCH = 50


def purgeable_searches(*, now: dt.datetime, deal_id: int | None = None):
    """Searches whose stored matches nobody reads any more (ids, oldest first):

    * a completed search superseded by a newer completed search of the same deal (newer by
      creation, as `lender_search_latest_completed` orders them), when both finished more than
      LEV_SEARCH_MATCH_RETENTION_SECONDS ago;
    * a failed search (its results are never served) that finished more than that ago.

    Never the latest completed search of a deal (the deal page, placements and agents read it),
    nor a pending, running or partial one."""
    cutoff = now - dt.timedelta(seconds=max(0, settings.LEV_SEARCH_MATCH_RETENTION_SECONDS))
    newer_completed = LenderSearch.objects.filter(
        Q(created_at__gt=OuterRef("created_at")) | Q(created_at=OuterRef("created_at"), pk__gt=OuterRef("pk")),
        deal_id=OuterRef("deal_id"), status=Status.COMPLETED, finished_at__lt=cutoff,
    )
    searches = LenderSearch.objects.filter(matches_purged_at__isnull=True, finished_at__lt=cutoff).filter(
        Q(status=Status.FAILED) | Q(Exists(newer_completed), status=Status.COMPLETED))
    if deal_id is not None:
        searches = searches.filter(deal_id=deal_id)
    return searches.order_by("finished_at", "id").values_list("pk", flat=True)


def lender_matches_purge(*, deal_id: int | None = None, now: dt.datetime | None = None) -> int:
    """Delete the stored matches of the searches `purgeable_searches` names (of one deal, or of
    all), a batch of searches per transaction, and mark each `matches_purged_at` — which the
    results then report (`results_removed`, the newer search to read) instead of an empty list
    that would read as "no lender matched". Returns the number of searches purged."""
    now = now or timezone.now()
    purged = 0
    while True:
        with transaction.atomic():
            # Completed and failed are final statuses: a search judged purgeable stays so.
            ids = list(purgeable_searches(now=now, deal_id=deal_id)[:PURGE_BATCH])
            if not ids:
                break
            LenderMatch.objects.filter(search_id__in=ids).delete()
            LenderSearch.objects.filter(pk__in=ids).update(matches_purged_at=now)
        purged += len(ids)
    if purged:
        logger.info("Purged the stored matches of %d superseded or failed lender searches", purged)
    return purged
