"""Real faults for tests: a TCP proxy the test can cut and restore (put between the app and
PostgreSQL or Redis), so an outage is a refused or reset connection, not a raised exception; a
redis-server of the test's own to kill or freeze; and this process's jobs sent to a broker URL
(one where nothing listens is a broker that is down). The machine's shared services are never
stopped."""

from __future__ import annotations

import contextlib
import select
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator

from lev.celery_app import app as celery_app


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it gets (a fetch that should not happen
    would be one)."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self):
        self.sock.close()


class TcpProxy:
    """Forwards 127.0.0.1:<port> to a target. `cut()` resets every open connection and refuses new
    ones (the listener closes); `restore()` listens again on the same port."""

    def __init__(self, target_host: str, target_port: int):
        self.target = (target_host, target_port)
        self.port = 0
        self._listener: socket.socket | None = None
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._pipes: set[threading.Thread] = set()
        self._stopping = False

    def start(self) -> TcpProxy:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed by cut()
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            pipe = threading.Thread(target=self._pipe, args=(client, upstream), daemon=True)
            with self._lock:
                self._conns.update((client, upstream))
                self._pipes.add(pipe)
            pipe.start()

    def _pipe(self, a: socket.socket, b: socket.socket) -> None:
        pair = {a: b, b: a}
        try:
            while True:
                readable, _, _ = select.select(list(pair), [], [], 0.2)
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    pair[sock].sendall(data)
        except (OSError, ValueError):
            return
        finally:
            self._drop(a, b)
            with self._lock:
                self._pipes.discard(threading.current_thread())

    def _drop(self, *socks: socket.socket) -> None:
        with self._lock:
            for sock in socks:
                self._conns.discard(sock)
                with contextlib.suppress(OSError):
                    # RST, not FIN: the peer sees the connection reset, as when a server dies.
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    sock.close()

    def cut(self) -> None:
        if self._listener is not None:
            # shutdown() wakes the thread blocked in accept(); close() alone would not, and the
            # kernel would go on accepting connections for it.
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
            self._listener = None
        with self._lock:
            conns, pipes = list(self._conns), list(self._pipes)
        self._drop(*conns)
        # A socket closed while its pipe thread waits in select() is torn down (the reset sent) only
        # when that wait ends: once cut() returns, the peers have been reset.
        for pipe in pipes:
            if pipe is not threading.current_thread():
                pipe.join(timeout=5)

    def restore(self) -> None:
        if self._listener is None:
            self.start()

    def close(self) -> None:
        self.cut()


@contextlib.contextmanager
def tcp_proxy(host: str, port: int) -> Iterator[TcpProxy]:
    proxy = TcpProxy(host, port).start()
    try:
        yield proxy
    finally:
        proxy.close()


@contextlib.contextmanager
def broker(url: str) -> Iterator[None]:
    """Send this process's jobs to `url` (not run in-process) until the block ends. The Celery
    app caches its broker connection pools, so they are dropped on the way in and out."""
    conf = celery_app.conf
    saved = conf.broker_url, conf.task_always_eager

    def drop_pools() -> None:
        celery_app._pool = None
        celery_app.amqp._producer_pool = None

    conf.broker_url, conf.task_always_eager = url, False
    drop_pools()
    try:
        yield
    finally:
        conf.broker_url, conf.task_always_eager = saved
        drop_pools()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A redis-server of the test's own on a free port, to kill (SIGKILL) and start again on the
    same port; the machine's shared Redis is never touched."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return self
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
            self.process = None

    def freeze(self) -> None:
        """SIGSTOP: the port accepts connections but nothing answers (a hung Redis)."""
        if self.process is not None:
            self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        self.thaw()
        self.kill()
