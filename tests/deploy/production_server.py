"""The production web server, started the way the image starts it: the Dockerfile's CMD (which
docker-compose.yml's `web` service runs), with the production profile (LEV_ENV=production, DEBUG off, a
long SECRET_KEY, ALLOWED_HOSTS=127.0.0.1), on this test run's PostgreSQL database and Redis.
Loopback only."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.db import connection

from lev.accounts.services import api_key_create

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"


def dockerfile_cmd() -> list[str]:
    """The Dockerfile's CMD (exec form), as the container runs it."""
    text = (ROOT / "Dockerfile").read_text()
    return json.loads(re.findall(r"^CMD\s+(\[.*\])\s*$", text, flags=re.MULTILINE)[-1])


def _free_port() -> int:
    """A free loopback port; within LEV_TEST_PORTS ("18200-18299") when that is set, so parallel runs on
    one machine each keep to their own range."""
    wanted = os.environ.get("LEV_TEST_PORTS", "")
    candidates = range(int(wanted.split("-")[0]), int(wanted.split("-")[1]) + 1) if "-" in wanted else [0]
    for port in candidates:
        with socket.socket() as s:
            try:
                s.bind((HOST, port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise RuntimeError(f"no free port in {wanted}")


class ProductionServer:
    def __init__(self, log_path: Path, **overrides: str):
        self.port = _free_port()
        self.url = f"http://{HOST}:{self.port}"
        db = connection.settings_dict
        metrics = log_path.parent / "metrics"
        metrics.mkdir(exist_ok=True)
        env = {
            **os.environ,
            "LEV_ENV": "production", "DEBUG": "false", "SECRET_KEY": secrets.token_urlsafe(64),
            "ALLOWED_HOSTS": HOST, "SECURE_SSL_REDIRECT": "false", "DJANGO_SETTINGS_MODULE": "lev.settings",
            "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
            "GUNICORN_BIND": f"{HOST}:{self.port}", "PROMETHEUS_MULTIPROC_DIR": str(metrics),
            **overrides,
        }
        command = dockerfile_cmd()
        assert command[0] == "gunicorn", command
        command[0] = str(Path(sys.executable).parent / "gunicorn")
        self.log_path = log_path
        with log_path.open("wb") as out:
            self.proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the production server did not start:\n{self.log()[-3000:]}")
            time.sleep(0.2)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@contextlib.contextmanager
def running(tmp_path: Path, **overrides: str) -> Iterator[ProductionServer]:
    """The production server for one test, stopped after it. PostgreSQL only: the server is a second
    process on the test database (skipped on SQLite, whose in-memory test database no other process sees)."""
    if connection.vendor != "postgresql":
        pytest.skip("a second process can share the test database only on PostgreSQL")
    server = ProductionServer(tmp_path / "server.log", **overrides)
    try:
        yield server
    finally:
        server.stop()


def member_key(name: str) -> tuple[Any, str]:
    """(account, raw API key) of a new account named `name` with one member: the caller the tests probe as."""
    from tests.factories import AccountFactory, MembershipFactory, UserFactory

    account = AccountFactory(slug=name)
    member = MembershipFactory(account=account, user=UserFactory(username=name))
    return account, api_key_create(user=member.user, account=account, name=name)[1]


def raw_request(port: int, request: bytes, *, half_close: bool = False, timeout: float = 10,
                then: bytes = b"", pause: float = 0) -> tuple[int | None, dict, bytes]:
    """Send bytes as they are (and `then`, `pause` seconds later); (status, headers, body) of the answer,
    status None when the server closed the connection without one."""
    with socket.create_connection((HOST, port), timeout=timeout) as sock:
        sock.sendall(request)
        if then:
            time.sleep(pause)
            sock.sendall(then)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except ConnectionResetError:
            pass
    if not data:
        return None, {}, b""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = _dechunk(body)
    return int(lines[0].split()[1]), headers, body


def _dechunk(body: bytes) -> bytes:
    out = b""
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out, body = out + rest[:size], rest[size + 2:]
    return out


def assert_no_500(server: ProductionServer) -> None:
    """No traceback and no 500 answered. gunicorn's ASGI worker writes "500 0" (nothing sent) in its
    access log for a request whose client went away before any answer, as a client that cuts its body
    off and closes does: that client was sent nothing, and the application never ran."""
    log = server.log()
    assert "Traceback" not in log and "Error in ASGI application" not in log, log[-3000:]
    assert not re.search(r'" 500 [1-9]', log), log[-3000:]
