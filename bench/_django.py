"""The bench scripts' one start: the project's root on the import path, then (for those that read the
site in-process) the environment they measure under and `django.setup()`.

A script run as a file (`python bench/<name>.py`) has only bench/ on its path, so it puts the root
there itself, in its one line before importing this (`from bench._django import setup`); imported
as `bench.<name>` (bench/run.py, the tests) it already is. Nothing here runs on import: a test that
imports a script's module must not change its process's environment (the Celery workers the suite
starts inherit it, LOG_LEVEL included)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
# Hundreds of timed reads in a minute: the per-user limits are not what is measured.
UNTHROTTLED = {"LEV_RATE_LIMIT_READS": "1000000/min", "LEV_RATE_LIMIT_WRITES": "1000000/min"}


def setup(*, sqlite_file: str | None = None, unthrottled: bool = False, statement_timeout: bool = True,
          django: bool = True) -> None:
    """Lev's settings with warnings only in the log (per-request INFO lines would interleave with the
    tables). `sqlite_file`: the script's own SQLite file under bench/results/ unless DATABASE_URL is
    given. `unthrottled`: no per-user rate limits. `statement_timeout=False`: no statement time limit
    (seeding a million rows in one statement takes longer than a web request may). `django=False`:
    only the environment (a script that calls django.setup() later, or never)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lev.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    if unthrottled:
        os.environ.update(UNTHROTTLED)
    if not statement_timeout:
        os.environ["LEV_DB_STATEMENT_TIMEOUT_MS"] = "0"
    if sqlite_file and not os.environ.get("DATABASE_URL"):
        RESULTS.mkdir(parents=True, exist_ok=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{RESULTS / sqlite_file}"
    if django:
        import django as django_

        django_.setup()


def mcp_environ(key: str, body: bytes) -> dict:
    """The WSGI environ of a POST /mcp as gunicorn's worker hands it to the application (a JSON-RPC `body`,
    the bearer `key`), for the in-process benches."""
    import io

    return {"REQUEST_METHOD": "POST", "PATH_INFO": "/mcp", "SCRIPT_NAME": "", "QUERY_STRING": "",
            "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)), "SERVER_NAME": "localhost",
            "SERVER_PORT": "80", "HTTP_HOST": "localhost", "HTTP_ACCEPT": "application/json, text/event-stream",
            "HTTP_AUTHORIZATION": f"Bearer {key}", "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http",
            "wsgi.errors": io.StringIO(), "REMOTE_ADDR": "127.0.0.1", "wsgi.input_terminated": True}


def wsgi_call(app, environ: dict) -> tuple[str, list, bytes]:
    """(status, headers, body) of one request through a WSGI `app`, its iterable closed as a server would."""
    started: list = []
    result = app(environ, lambda status, headers, exc_info=None: started.append((status, headers)))
    try:
        body = b"".join(result)
    finally:
        result.close()
    return started[0][0], started[0][1], body
