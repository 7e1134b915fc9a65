"""A stop signal that reaches a gunicorn worker while it starts is not lost (deploy/gunicorn.conf.py
post_fork): until the worker's own handlers are in place, a forked worker had the master's handler, which
queued the signal in memory the worker does not read, so a worker booting when the master stopped served on
until the master's graceful_timeout (30 s) ran out (seen in CI: a test's server took 30 s to stop). Each
signal is sent for real to a process that has run only the hook, as a freshly forked worker has."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

WORKER = """
import os, runpy, signal, sys, types
conf = runpy.run_path(sys.argv[1])
worker = types.SimpleNamespace(alive=True)
conf["post_fork"](None, worker)
os.kill(os.getpid(), getattr(signal, sys.argv[2]))
print("alive" if worker.alive else "stopping")
"""


@pytest.mark.parametrize("worker_class", ["", "sync"])
@pytest.mark.parametrize("name", ["SIGTERM", "SIGQUIT", "SIGINT"])
def test_a_stop_sent_while_a_worker_starts_stops_it(name, worker_class):
    import os

    done = subprocess.run([sys.executable, "-c", WORKER, str(ROOT / "deploy" / "gunicorn.conf.py"), name],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "GUNICORN_WORKER_CLASS": worker_class})
    # The process lives to say so (the default action of SIGTERM and SIGQUIT would have ended it without
    # gunicorn's shutdown; the master's handler would have left it serving) and its worker is stopping.
    assert (done.returncode, done.stdout.strip()) == (0, "stopping"), done.stderr[-2000:]
