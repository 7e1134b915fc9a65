"""Django's PostgreSQL backend, its connection health check without a query per request in steady use.

With CONN_HEALTH_CHECKS on (lev.settings), Django checks a reused connection at a request's first query
with `SELECT 1` (BaseDatabaseWrapper.close_if_health_check_failed): a round trip on every request, so
that a connection the server dropped (PostgreSQL restarted, a backend killed, the network reset it) is
replaced before the request uses it, rather than failing that request with a 503.

A connection between requests is idle: the server sends nothing on it unless it ends it. When PostgreSQL
ends a session (a restart, pg_terminate_backend, idle_session_timeout) it sends an error message and
closes the socket; when the network resets the connection the kernel marks the socket readable too. So
here the check first asks the kernel, with no round trip, whether the idle connection's socket has
anything to read or has hung up, and runs Django's `SELECT 1` (which closes a connection that fails it;
Django then opens a new one for the query) only when:
* the socket has something to say (an error message, EOF, a reset, a notice), or is not idle; or
* the connection was last vouched for (checked, or found quiet) LEV_DB_HEALTH_CHECK_IDLE_SECONDS ago or
  more: a connection not used for a while may have been dropped silently on the way (a NAT or load
  balancer forgetting an idle flow answers the next packet with a reset, which only a round trip sees).
A connection in steady use (requests back to back) thus costs no query; exactly when a check may run is
unchanged (once per request, on a reused connection). A server dying between the check and the query
fails that request with either check.
tests/lev/test_db_health_check.py ends a real backend and cuts a real TCP proxy in front of PostgreSQL.
"""

from __future__ import annotations

import select
import time

from django.conf import settings
from django.db.backends.postgresql.base import DatabaseWrapper as PostgresDatabaseWrapper
from psycopg.pq import TransactionStatus

_POLL_FLAGS = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP | select.POLLNVAL


class DatabaseWrapper(PostgresDatabaseWrapper):
    _lev_vouched_at = 0.0

    def connect(self) -> None:
        super().connect()
        self._lev_vouched_at = time.monotonic()

    def close_if_health_check_failed(self) -> None:
        if self.connection is None or not self.health_check_enabled or self.health_check_done:
            return
        now = time.monotonic()
        if now - self._lev_vouched_at < settings.LEV_DB_HEALTH_CHECK_IDLE_SECONDS and self._idle_and_quiet():
            self.health_check_done = True
        else:
            super().close_if_health_check_failed()  # SELECT 1; the connection is closed when it fails
        self._lev_vouched_at = now

    def _idle_and_quiet(self) -> bool:
        """The open connection is idle and its socket has nothing to read and has not hung up."""
        conn = self.connection
        try:
            if conn.closed or conn.broken or conn.info.transaction_status != TransactionStatus.IDLE:
                return False
            fd = conn.fileno()
        except Exception:  # any doubt: Django's own check decides
            return False
        poller = select.poll()
        poller.register(fd, _POLL_FLAGS)
        return not poller.poll(0)
