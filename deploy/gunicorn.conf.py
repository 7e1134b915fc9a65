"""gunicorn settings for the Lev web site (admin, REST API, /mcp, /health).

Every value can be overridden from the environment, so the same file serves the `web` and the
split `mcp` services of docker-compose.yml and a bare-metal run:

    gunicorn --config deploy/gunicorn.conf.py lev.wsgi:application
"""

from __future__ import annotations

import os


def _int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    return int(value) if value.strip() else default


bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")

# Processes per container (gunicorn's own convention). Scale a host with this; MCP is stateless, so
# any number of processes or containers can serve it behind a load balancer.
workers = _int("WEB_CONCURRENCY", 4)
# Threaded workers: a slow request (an MCP tool call waiting on the API) holds one thread, not a
# whole process. Each thread keeps its own database connection (DB_CONN_MAX_AGE), so the database
# sees up to workers x threads connections per container.
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gthread")
threads = _int("GUNICORN_THREADS", 4)

# A tool call is bounded by LEV_RETRY_BUDGET_MS (15 s) plus one LEV_API_TIMEOUT_SECONDS (10 s).
timeout = _int("GUNICORN_TIMEOUT", 60)
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 30)
keepalive = _int("GUNICORN_KEEPALIVE", 5)
# Recycle workers now and then so a slow leak cannot grow forever; jitter avoids restarting all at once.
max_requests = _int("GUNICORN_MAX_REQUESTS", 1000)
max_requests_jitter = _int("GUNICORN_MAX_REQUESTS_JITTER", 100)

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
