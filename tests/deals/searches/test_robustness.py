"""Lender searches under real faults: a ranking run whose database connection is lost (killed by
the server, or cut on the network) is finished by the task's own retry; a broker that cannot be
reached when a search starts leaves a pending search the sweep queues later; and a search no
worker picks up tells the agent so."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from deals.demo.directory import seed_directory
from deals.models import DealProperty
from deals.searches import services, tasks
from deals.searches.models import LenderMatch, LenderSearch
from deals.searches.ranking import criteria_from_deal
from deals.searches.ranking.sql_scoring import top_lenders
from lev.celery_app import app as celery_app
from tests.deals.searches.factories import LenderFactory, make_deal, refresh
from tests.deals.searches.worker_process import celery_worker, database_url, require_worker_setup, wait_for
from tests.faults import RedisServer, TcpProxy, broker, free_port
from tests.mcp_helpers import McpCaller

pytestmark = pytest.mark.django_db(transaction=True)

# Well inside LEV_SEARCH_STALE_SECONDS (120 s): a search finished within it was not rescued by
# the stale-heartbeat rules (and no sweep runs in these tests).
RECOVERY_DEADLINE_S = 60


def ranks(search: LenderSearch) -> list[int]:
    return list(LenderMatch.objects.filter(search=search).order_by("rank").values_list("rank", flat=True))


@contextlib.contextmanager
def programs_locked() -> Iterator[psycopg.Connection]:
    """Hold an exclusive lock on the programs table from a connection of our own, so a ranking
    run blocks at its candidate query (outside any transaction of the run) until released."""
    holder = psycopg.connect(**connection.get_connection_params())
    try:
        holder.execute("LOCK TABLE lenders_lenderprogram IN ACCESS EXCLUSIVE MODE")
        yield holder
    finally:
        holder.close()


def backend_blocked_on_programs() -> int | None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND wait_event_type = 'Lock' AND query ILIKE %s",
            ["%lenders_lenderprogram%"],
        )
        row = cursor.fetchone()
    return row[0] if row else None


def finished_search(search: LenderSearch):
    def check():
        current = refresh(search)
        return current if current.status in ("completed", "failed") else None
    return check


def assert_ranked_once(search: LenderSearch, top_n: int | None = None) -> None:
    """Completed with ranks 1..N stored exactly once: N = every eligible lender, or `top_n` of
    them (LEV_RANKING_TOP_N of the run), which the directory must then exceed."""
    assert search.status == "completed" and search.error_code == ""
    assert search.total_matches > 0
    stored = search.total_matches
    if top_n is not None:
        assert search.total_matches > top_n, "the test directory must have more eligible lenders than the top N"
        stored = top_n
    assert search.ranked_matches == stored
    assert ranks(search) == list(range(1, stored + 1))  # no duplicates, no gaps
    lenders = LenderMatch.objects.filter(search=search).values_list("lender_id", flat=True)
    assert len(set(lenders)) == stored


# --- §3: a real connection loss inside a ranking run ----------------------------------------------------
@pytest.mark.slow
def test_a_run_whose_backend_is_terminated_is_finished_by_the_task_retry(account):
    require_worker_setup()
    seed_directory(120, seed=5)
    deal = make_deal(account)
    with programs_locked() as holder, celery_worker(env={"LEV_SEARCH_STALE_SECONDS": "120"}) as worker:
        search, created = services.lender_search_start(deal=deal)
        assert created
        pid = wait_for(backend_blocked_on_programs, "the run to block on its candidate query", worker)
        assert refresh(search).status == "running"
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])  # the server kills the connection
        holder.rollback()
        done = wait_for(finished_search(search), "the retry to finish the search", worker, RECOVERY_DEADLINE_S)
    assert_ranked_once(done)
    assert done.attempts == 2  # the lost run, then its retry


@pytest.mark.slow
def test_a_run_cut_off_from_the_database_is_taken_over_by_its_own_retry(account):
    """The network to the database is cut: the run cannot even put the search back to pending,
    so it stays `running` with a fresh heartbeat under the task's token — which the retry of the
    same task takes over instead of waiting for the stale-heartbeat sweep."""
    require_worker_setup()
    seed_directory(120, seed=5)
    deal = make_deal(account)
    db = connection.settings_dict
    proxy = TcpProxy(db.get("HOST") or "127.0.0.1", int(db.get("PORT") or 5432)).start()
    try:
        with programs_locked() as holder, celery_worker(db_url=database_url(port=proxy.port),
                                                        env={"LEV_SEARCH_STALE_SECONDS": "120"}) as worker:
            search, _ = services.lender_search_start(deal=deal)
            orphan = wait_for(backend_blocked_on_programs, "the run to block on its candidate query", worker)
            proxy.cut()
            wait_for(lambda: "retry: Retry in" in worker.log.read_text(errors="replace"),
                     "the task to schedule its retry after the cut", worker)
            cut_off = refresh(search)
            assert cut_off.status == "running"  # nothing could reset it: the database was unreachable
            assert cut_off.heartbeat_at > timezone.now() - dt.timedelta(seconds=settings.LEV_SEARCH_STALE_SECONDS)
            proxy.restore()
            holder.rollback()
            with connection.cursor() as cursor:  # the server side of the cut connection, still waiting
                cursor.execute("SELECT pg_terminate_backend(%s)", [orphan])
            done = wait_for(finished_search(search), "the retry to take the search over", worker,
                            RECOVERY_DEADLINE_S)
    finally:
        proxy.close()
    assert_ranked_once(done)
    assert done.attempts == 2


@contextlib.contextmanager
def lender_row_locked(lender_id: int) -> Iterator[psycopg.Connection]:
    """Lock one lender row FOR UPDATE from a connection of our own: a match that references it
    waits at its foreign-key check (FOR KEY SHARE), so a run blocks in writing the chunk holding
    that lender, after the chunks before it were committed. Reads are not blocked."""
    holder = psycopg.connect(**connection.get_connection_params())
    try:
        holder.execute("SELECT 1 FROM lenders_lender WHERE id = %s FOR UPDATE", [lender_id])
        yield holder
    finally:
        holder.close()


def backend_blocked_by(holder: psycopg.Connection):
    """A check for wait_for: the pid of a backend waiting for a lock `holder` holds."""
    def check() -> int | None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                           "AND %s = ANY(pg_blocking_pids(pid))", [holder.info.backend_pid])
            row = cursor.fetchone()
        return row[0] if row else None
    return check


@pytest.mark.slow
def test_a_run_whose_database_goes_away_mid_write_ends_with_exactly_the_top_n(account, api):
    """The connection is killed while the second chunk of the top N is being written (the first is
    committed and readable: the search is partial): the task's retry re-runs the search from a
    clean slate and it ends with exactly LEV_RANKING_TOP_N ranks, none twice, none missing."""
    require_worker_setup()
    seed_directory(120, seed=5)
    deal = make_deal(account)
    top_n, chunk = 10, 4
    ranking = top_lenders(criteria_from_deal(deal, list(DealProperty.objects.filter(deal=deal)), None), top_n)
    assert ranking.total_lenders > top_n
    sixth = ranking.lenders[5][0]  # written by the second chunk (ranks 5-8)
    env = {"LEV_SEARCH_STALE_SECONDS": "120", "LEV_RANKING_TOP_N": str(top_n), "LEV_SEARCH_WRITE_CHUNK": str(chunk)}
    with lender_row_locked(sixth) as holder, celery_worker(env=env) as worker:
        search, _ = services.lender_search_start(deal=deal)
        # Django's foreign keys are deferred: the chunk waits for the lender's row at its commit.
        pid = wait_for(backend_blocked_by(holder), "the run to block writing its second chunk", worker)
        blocked = refresh(search)
        assert blocked.status == "partial" and ranks(blocked) == [1, 2, 3, 4]
        assert (blocked.total_matches, blocked.ranked_matches) == (ranking.total_lenders, top_n)
        page = api.get(f"/api/v1/lender-searches/{search.pk}/", {"page_size": 4}).json()
        assert page["status"] == "partial" and [m["rank"] for m in page["results"]] == [1, 2, 3, 4]
        assert page["count"] == ranking.total_lenders and page["ranked_count"] == top_n
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])  # the database goes away mid-write
        holder.rollback()
        done = wait_for(finished_search(search), "the retry to finish the search", worker, RECOVERY_DEADLINE_S)
    assert_ranked_once(done, top_n)
    assert done.attempts == 2
    assert [lender for lender, _raw, _n in ranking.lenders] == list(
        LenderMatch.objects.filter(search=done).order_by("rank").values_list("lender_id", flat=True))


def test_the_purge_waits_out_a_database_outage(account, db_proxy, settings):
    """The database is unreachable when the periodic purge runs: it reports the outage and
    purges nothing (no exception for beat to log as a crash); the next run, with the database
    back, purges what is due, and only that."""
    settings.LEV_SEARCH_MATCH_RETENTION_SECONDS = 60
    lender = LenderFactory(name="Only Lender")
    deal = make_deal(account)
    long_ago = timezone.now() - dt.timedelta(hours=1)
    old, latest = (LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version,
                                               status="completed", total_matches=1, ranked_matches=1,
                                               finished_at=long_ago) for _ in range(2))
    LenderMatch.objects.bulk_create([LenderMatch(search=s, rank=1, lender=lender, score=50) for s in (old, latest)])
    db_proxy.cut()
    assert tasks.purge_superseded_matches() == 0
    db_proxy.restore()
    assert tasks.purge_superseded_matches() == 1
    assert ranks(old) == [] and ranks(latest) == [1]
    assert refresh(old).matches_purged_at is not None and refresh(latest).matches_purged_at is None


# --- §7: the broker is down when a search starts ---------------------------------------------------------
def test_a_search_started_while_the_broker_is_down_is_kept_and_queued_by_the_sweep(live_server, api_key, account):
    seed_directory(40, seed=3)
    deal = make_deal(account)
    mcp = McpCaller(live_server.url, api_key)
    with broker(f"redis://127.0.0.1:{free_port()}/0"):  # nothing listens there
        started = mcp.ok("search_lenders_for_deal", {"deal_id": deal.pk})
        assert started["status"] == "pending" and started["queue_status"] == "not_queued"
        assert "could not be queued" in started["message"] and "queued automatically" in started["message"]
        search = LenderSearch.objects.get(pk=started["search_id"])
        assert search.queued_at is None and search.attempts == 0

        page = mcp.ok("get_lender_search_results", {"search_id": search.pk})
        assert page["status"] == "pending" and page["queue_status"] == "not_queued"
        assert "could not be queued" in page["message"] and page["hint"]

        # Still down: the sweep tries, and the search stays pending and not queued.
        assert tasks.sweep_stale_searches() == {"requeued": 1, "failed": 0}
        assert refresh(search).status == "pending" and refresh(search).queued_at is None

    if settings.REDIS_URL:
        # The broker is back: the next sweep hands the job over (no worker here, so it waits).
        queue = f"lev-test-back-{search.pk}-{free_port()}"
        with broker(settings.REDIS_URL):
            celery_app.conf.task_default_queue, saved_queue = queue, celery_app.conf.task_default_queue
            try:
                assert tasks.sweep_stale_searches() == {"requeued": 1, "failed": 0}
                with celery_app.connection_for_write() as conn:
                    _name, messages, _consumers = conn.default_channel.queue_declare(queue, passive=True)
                    conn.default_channel.queue_delete(queue)
            finally:
                celery_app.conf.task_default_queue = saved_queue
        assert messages == 1
        back = refresh(search)
        assert back.status == "pending" and back.queued_at is not None
        assert "queue_status" not in mcp.ok("get_lender_search_results", {"search_id": search.pk})
    else:
        # No Redis for this run: jobs run in-process, so the sweep's job runs the search at once.
        assert tasks.sweep_stale_searches() == {"requeued": 1, "failed": 0}
        assert refresh(search).status == "completed"


def test_a_search_started_while_the_broker_is_frozen_is_kept_not_hung(live_server, api_key, account):
    """A broker that accepts connections and never answers (SIGSTOP): queuing gives up after its
    bounded timeouts, so the agent gets its answer (not_queued) instead of a request that hangs."""
    seed_directory(20, seed=3)
    deal = make_deal(account)
    frozen = RedisServer().start()
    try:
        frozen.freeze()
        with broker(frozen.url):
            started = McpCaller(live_server.url, api_key).ok("search_lenders_for_deal", {"deal_id": deal.pk})
        assert started["status"] == "pending" and started["queue_status"] == "not_queued"
    finally:
        frozen.stop()


# --- §6: a search no worker picks up tells the agent so ------------------------------------------------
def test_a_search_no_worker_picked_up_says_so_and_stays_pending(live_server, api_key, account, settings):
    settings.LEV_SEARCH_PENDING_WARN_SECONDS = 30
    # Jobs run in-process in this test: a stale cutoff past the wait keeps reading the search from
    # re-queuing (and so running) it, as a broker with no worker would leave it.
    settings.LEV_SEARCH_STALE_SECONDS = 120
    deal = make_deal(account)
    mcp = McpCaller(live_server.url, api_key)
    fresh = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version,
                                        queued_at=timezone.now())
    page = mcp.ok("get_lender_search_results", {"search_id": fresh.pk})
    assert page["status"] == "pending" and "hint" not in page and "queue_status" not in page

    waiting = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version)
    queued = timezone.now() - dt.timedelta(seconds=45)
    LenderSearch.objects.filter(pk=waiting.pk).update(created_at=queued, queued_at=queued)
    page = mcp.ok("get_lender_search_results", {"search_id": waiting.pk})
    assert page["status"] == "pending" and page["queue_status"] == "not_picked_up"
    assert "no ranking worker has picked it up after 45 s" in page["message"]
    assert "not been picked up" in page["hint"] and "Poll less often" in page["hint"]
    assert refresh(waiting).status == "pending"  # only told, not changed
