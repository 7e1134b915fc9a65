"""One process of a rate-limit test across processes (tests/lev/test_throttling_lease.py): started
with `python -m tests.lev.throttle_hammer USER_PK CALLS THREADS`, it prints READY and waits for a
line on its standard input (sent to every process of the test at once), then makes CALLS reads as
user USER_PK through
the API's read throttle, from THREADS threads at once, and prints a JSON line: how many were admitted
and the window(s) they fell in. The settings are the environment's (REDIS_URL, CACHE_KEY_PREFIX,
LEV_RATE_LIMIT_READS, LEV_RATE_LIMIT_LEASE): nothing is patched."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from types import SimpleNamespace

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lev.settings")

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402

from lev.throttling import UserReadThrottle  # noqa: E402


def main() -> None:
    user_pk, calls, threads = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    user = get_user_model()(pk=user_pk)  # authenticated; the throttle only reads its primary key
    request = SimpleNamespace(method="GET", user=user)
    _limit, period = UserReadThrottle.rate()
    admitted = [0] * threads
    todo = [calls // threads + (1 if i < calls % threads else 0) for i in range(threads)]

    def hammer(i: int) -> None:
        for _ in range(todo[i]):
            if UserReadThrottle().allow_request(request, None):
                admitted[i] += 1

    workers = [threading.Thread(target=hammer, args=(i,)) for i in range(threads)]
    print("READY", flush=True)
    sys.stdin.readline()
    first_window = int(time.time() // period)
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    print(json.dumps({"admitted": sum(admitted), "windows": [first_window, int(time.time() // period)]}), flush=True)


if __name__ == "__main__":
    main()
