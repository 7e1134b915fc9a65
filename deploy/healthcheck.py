"""Container health check of a gunicorn service, standard library only (the slim image has no curl).

    python deploy/healthcheck.py http [URL]    # default URL: http://127.0.0.1:8000/health

Exit status 0 = healthy, 1 = unhealthy (the reason goes to stdout, which `docker inspect` shows).

It sends the Host header of the first ALLOWED_HOSTS entry, so the check passes exactly when a real
request to that host would (Django answers 400 to a Host it does not serve), and expects 200 with
{"status": "ok"}, or "degraded" with the database reachable (a worker outage is not web's).
(Celery worker and beat are checked with `celery inspect ping`: docker-compose.yml.)
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8000/health"


def host_header() -> str | None:
    for entry in os.environ.get("ALLOWED_HOSTS", "").split(","):
        entry = entry.strip()
        if not entry or entry == "*":
            continue
        return entry.lstrip(".")  # ".example.com" allows example.com itself too
    return None


def check_http(url: str) -> str | None:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    host = host_header()
    if host:
        request.add_unredirected_header("Host", host)
    try:
        with urllib.request.urlopen(request, timeout=float(os.environ.get("HEALTH_TIMEOUT_S", "5"))) as response:
            status, body = response.status, response.read()
    except urllib.error.HTTPError as exc:
        return f"{url} answered {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        return f"{url} unreachable: {exc}"
    if status != 200:
        return f"{url} answered {status}"
    try:
        data = json.loads(body)
    except ValueError:
        return f"{url} did not answer JSON"
    # A web process is healthy while it and its database answer; `degraded` for a missing worker
    # (or searches waiting for one) is the worker's problem, which restarting web would not fix.
    if data.get("status") != "ok" and data.get("database", "reachable") != "reachable":
        return f"{url} reports {data!r}"
    return None


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[1] != "http":
        print("usage: healthcheck.py http [URL]")
        return 2
    problem = check_http(argv[2] if len(argv) > 2 else DEFAULT_URL)
    if problem:
        print(f"unhealthy: {problem}")
        return 1
    print("healthy")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
