"""gunicorn settings for the Lev web site (admin, REST API, /mcp, /health).

Every value can be overridden from the environment, so the same file serves the `web` and the
split `mcp` services of docker-compose.yml and a bare-metal run. The application comes from this file
too (it goes with the worker class), so the command is only:

    gunicorn --config deploy/gunicorn.conf.py
"""

from __future__ import annotations

import os


def _int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    return int(value) if value.strip() else default


bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")

# --- Workers: chosen from measurements (bench/bench_gunicorn.py; numbers in docs/benchmarks.md,
# "Hot path and gunicorn") on the machine size this targets, 2 cores, PostgreSQL and Redis beside it.
#
# * Sync workers, not threads. A request here is CPU-bound Python between short database and Redis
#   round trips, so threads mostly add GIL hand-offs. Against 2 sync workers (p50, two runs of
#   interleaved rounds, REST / MCP get_deal, 6 clients): 4 processes x 4 gthreads 0.80-1.21x /
#   1.09-1.32x, 2 x 4 gthreads 0.90-1.13x / 0.98-1.33x: no better within the machine's noise (about
#   +-20 % on this shared machine), sometimes a third worse, and each thread holds its own database
#   connection. (The measurement: 4 x 4 gthreads slower than 2 sync workers.)
# * Two per core. 4 sync workers served the same requests/s at the same p50 as 2 (1.01-1.10x), and a
#   slow request (a statement up to LEV_DB_STATEMENT_TIMEOUT_MS, a split MCP service waiting on its
#   backend up to LEV_API_TIMEOUT_SECONDS) then holds one of four processes rather than one of two,
#   so /health and everyone else keep being answered. Each is a whole Django process (about 100 MB,
#   less with preload, below) with one database connection (DB_CONN_MAX_AGE): set WEB_CONCURRENCY
#   when the container's CPU limit is below the machine's cores.
def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


workers = _int("WEB_CONCURRENCY", 2 * _cores())

# --- The worker class: gunicorn's ASGI worker running lev.asgi (issue #19), not sync. Measured with
# bench/bench_gunicorn.py, the old and the new configuration interleaved in one run (docs/benchmarks.md,
# "Slow clients and the ASGI worker"):
#
# * Slow clients. A sync worker reads its request itself, blocking, until the body ends; a trickle is
#   not silence, so gunicorn's `timeout` never frees it. Eight connections sending a byte a second held
#   every sync worker (the issue: 40 s of timeouts for every account and /health). With 50 held for
#   20 s, the sync default answered 0 of the /health and MCP get_deal probes within 5 s, in every run;
#   so did gthread (4 threads a worker): it waits for a connection's first byte off-thread, then a
#   thread reads the rest blocking. The ASGI worker reads every connection on an event loop (a waiting
#   client costs a socket and a coroutine): 78 of 78 probes answered in each of four runs, p50
#   10-12 ms, worst 19-42 ms (gthread: 0/4, 0/4, 3/6, 0/4).
#   tests/deploy/test_slow_clients.py holds the Dockerfile's CMD to that.
# * Still one request at a time per process. lev.asgi runs the WSGI site (lev.wsgi) on one thread per
#   process, only once a request is complete: one database connection per process, as before. Not
#   Django's own ASGI handler (2.2x the server CPU per request: a thread hand-off per signal) nor
#   a2wsgi (REST p99 4.4x); numbers in lev/asgi.py and docs/benchmarks.md.
# * Bounds. lev.asgi.BodyGuard reads each body first (through ASGI's receive() alone): over
#   LEV_MCP_MAX_BODY_BYTES (/mcp) or DATA_UPLOAD_MAX_MEMORY_SIZE (elsewhere) is 413 before it is read, and
#   the whole body must arrive within LEV_REQUEST_BODY_TIMEOUT_SECONDS (30 s) of the headers, else 408.
#   gunicorn bounds the headers of a kept-alive connection's later requests (keepalive, below) but not the
#   first's, nor does its ASGI worker enforce worker_connections, and no setting or hook does: the worker
#   is lev.adapters.gunicorn.ASGIWorker, which closes a connection whose first request headers take over
#   LEV_REQUEST_HEADER_TIMEOUT_SECONDS (20 s).
# * Malformed chunked framing is refused by the worker's parser before the site sees it, and answered
#   400 in the path's shape by the same adapter (the sync worker raised it inside Django: 500);
#   lev.wsgi gives the same answer under the WSGI workers.
# * The hot path (REST and MCP get_deal, four runs). On a quiet machine a small cost: 0.96x / 0.98x
#   the requests/s of the sync workers, the same p50, p99 +3 ms (1.19x), 6-12 % more server CPU per
#   request (the hand-off from the event loop to the request thread). Under the other sessions' load
#   a gain: 0.67-0.92x the CPU per request, 0.91-2.60x the requests/s (sync workers never keep a
#   connection alive and contend for accept). Worth it: the sync workers stop answering anyone while
#   eight clients send a byte a second. The C parser and uvloop (gunicorn-h1c, uvloop: gunicorn picks
#   them up) were level or ahead of the plain ones.
# * What changes: a process accepts connections while it is busy, so a slow request (up to
#   LEV_DB_STATEMENT_TIMEOUT_MS) delays the requests queued behind it in that process, where a busy
#   sync worker left them to the others; and gunicorn's `timeout` no longer kills a worker stuck in one
#   request (the event loop keeps reporting). Every wait in a request is bounded already (statement
#   timeout, LEV_API_TIMEOUT_SECONDS, the retry budget).
#
# GUNICORN_WORKER_CLASS=sync (or gthread) still works and runs lev.wsgi instead (GUNICORN_APP overrides).
# lev.adapters.gunicorn.ASGIWorker is gunicorn's `asgi` worker with a time bound on a connection's first
# request headers and malformed chunked bodies answered in the path's shape: the one place the product
# relies on gunicorn's internals (pinned to the version it was read from by a test; docs/architecture.md).
# GUNICORN_WORKER_CLASS=asgi runs gunicorn's own, without those two.
ADAPTED_WORKER = "lev.adapters.gunicorn.ASGIWorker"
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "").strip() or ADAPTED_WORKER  # set but empty: default
_asgi = worker_class in {"asgi", ADAPTED_WORKER} or "uvicorn" in worker_class.lower()
wsgi_app = os.environ.get("GUNICORN_APP", "").strip() or ("lev.asgi:application" if _asgi else "lev.wsgi:application")
# Threads per worker, for GUNICORN_WORKER_CLASS=gthread only (the others ignore it).
threads = _int("GUNICORN_THREADS", 1)
# Connections one gthread worker holds at once (gunicorn 27's ASGI worker does not enforce it: there the
# header and body time bounds are what limit how long a connection is held).
worker_connections = _int("GUNICORN_WORKER_CONNECTIONS", 1000)
# lev.asgi does not speak the lifespan protocol (nothing to start): do not probe it at every start.
asgi_lifespan = "off"
# "auto": uvloop and the C parser (gunicorn-h1c) when installed (they are dependencies); "asyncio" and
# "python" for the plain ones (bench/bench_gunicorn.py compares them).
asgi_loop = os.environ.get("GUNICORN_ASGI_LOOP", "auto")
http_parser = os.environ.get("GUNICORN_HTTP_PARSER", "auto")

# A tool call is bounded by LEV_RETRY_BUDGET_MS (15 s) plus one LEV_API_TIMEOUT_SECONDS (10 s).
timeout = _int("GUNICORN_TIMEOUT", 60)
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 30)
keepalive = _int("GUNICORN_KEEPALIVE", 5)

# --- Recycling. A worker is replaced after max_requests (+ up to jitter) requests, so a slow leak
# cannot grow forever; the jitter keeps the workers from being replaced together. Each replacement
# leaves the others to carry the load while the new one starts. Measured with recycling every
# 1,000 (+-100) requests on 2 sync workers (2 restarts in each 2-minute run): REST p99 from 161 to
# 3,080 ms (worst round 6 s) and from 81 to 114 ms without preload, the new worker importing Django
# on a busy machine; 898 and 756 ms with preload; MCP p99 1.3-12.8x the p99 without recycling. At
# that rate (1,000 requests is a few seconds of load) every p99 window holds a restart. At 100,000
# (+-10 %) requests a worker is replaced every few minutes at full load (a few hundred requests/s
# per worker here), and the requests one restart slows (about a second at half capacity: a few
# hundred) are well under 1 % of the requests between restarts, so the p99 does not show them.
# 0 turns recycling off.
max_requests = _int("GUNICORN_MAX_REQUESTS", 100_000)
max_requests_jitter = _int("GUNICORN_MAX_REQUESTS_JITTER", max_requests // 10)
# The application is loaded once in the master and workers are forked from it: a replacement starts in
# milliseconds instead of importing Django again (seconds on a loaded machine), and the workers share
# the loaded code's memory. Nothing opens a connection at import (the database, Redis and the breaker
# connect on first use, in each worker). Code changes need a restart, not a HUP (containers restart).
preload_app = os.environ.get("GUNICORN_PRELOAD", "1").strip().lower() in {"1", "true", "yes", "on"}


def when_ready(server) -> None:
    """In the master, after the preloaded application and before the first fork: build what every
    worker would otherwise build on its first request (the URL resolver, the MCP server with its
    tools' schemas), so a new worker's first requests are not the slow
    ones. None of it opens a connection."""
    if not preload_app:
        return
    from django.urls import get_resolver

    from mcp_tools.server import get_server

    get_resolver().url_patterns  # noqa: B018  (imports every URLconf and view module)
    get_server().tools_list_result  # noqa: B018


# The collector in each worker: a request's cyclic garbage is collected right after its response is sent
# (lev.asgi.BufferedWSGI, under the ASGI worker), so automatic collections are made rare. Python's
# default (a young collection every 700 allocations) ran them in the middle of requests, promoting a
# request's live objects to the older generations, whose full collections then took 50-200 ms at a time
# (the p99; docs/benchmarks.md "Garbage collected between requests"). 50,000 is a safety net for a
# request that allocates a great deal. The sync and gthread workers keep Python's defaults (nothing
# collects between their requests).
GC_YOUNG_THRESHOLD = 50_000


# Stop signals that reach a worker between its fork and its own signal handlers. Until gunicorn's worker
# installs those (Worker.init_signals, at the end of its start), a forked worker still has the master's
# handler, which queues the signal in the master's memory, not the worker's: a stop sent then (a deploy's
# restart while workers boot) was lost, and the worker served on until the master's graceful_timeout (30 s)
# ran out and it was killed. From its first moment a worker takes a stop as its own handlers do: `alive`
# (gunicorn's flag for "keep serving") is False, so its loop ends as soon as it starts, its in-flight work
# none. tests/deploy/test_gunicorn_stop_at_boot.py sends each signal to a worker that has only this hook.
STOP_SIGNALS = ("SIGTERM", "SIGINT", "SIGQUIT")


def _stop_at_boot(worker):
    def stop(signum, frame) -> None:
        worker.alive = False
    return stop


def post_fork(server, worker) -> None:
    import gc
    import signal

    for name in STOP_SIGNALS:
        signal.signal(getattr(signal, name), _stop_at_boot(worker))
    if not _asgi:
        return
    _young, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, older, oldest)


# Heartbeat files on tmpfs when there is one (a container's /tmp may be on a slow overlay).
if os.path.isdir("/dev/shm"):
    worker_tmp_dir = "/dev/shm"

# Logs to stdout/stderr, where `docker compose logs` reads them. The access line carries the
# request id the site echoes in X-Request-Id, the same id as in the application's log lines.
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-")
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
access_log_format = (
    '%(h)s "%({x-forwarded-for}i)s" "%(r)s" %(s)s %(B)s %(M)sms rid=%({x-request-id}o)s "%(a)s"'
)

# Front ends whose X-Forwarded-* headers gunicorn trusts (the TLS proxy in front of the stack).
# "*" is right only when the port is reachable from that proxy alone. Django itself trusts
# X-Forwarded-Proto through SECURE_PROXY_SSL_HEADER in the production profile.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")

proc_name = os.environ.get("GUNICORN_PROC_NAME", "lev-web")

# gunicorn >= 25.1 opens a control socket for `gunicornc` under $XDG_RUNTIME_DIR or $HOME, which a
# container's service account does not have (and processes sharing a HOME would share one path).
# Off unless GUNICORN_CONTROL_SOCKET names a path; older gunicorn ignores both settings.
control_socket = os.environ.get("GUNICORN_CONTROL_SOCKET", "")
control_socket_disable = not control_socket

# Prometheus: with several worker processes, /metrics adds up every process's counters through
# files in PROMETHEUS_MULTIPROC_DIR (emptied when gunicorn starts; a dead worker's gauges dropped).
_metrics_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")


def on_starting(server) -> None:
    if _metrics_dir:
        os.makedirs(_metrics_dir, exist_ok=True)
        for name in os.listdir(_metrics_dir):
            if name.endswith(".db"):
                os.remove(os.path.join(_metrics_dir, name))


def child_exit(server, worker) -> None:
    if _metrics_dir:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
