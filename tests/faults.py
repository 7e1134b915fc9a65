"""Real faults for tests: a TCP proxy the test can cut and restore (put between the app and
PostgreSQL or Redis), so an outage is a refused or reset connection, not a raised exception.
The machine's shared services are never stopped."""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from collections.abc import Iterator


class TcpProxy:
    """Forwards 127.0.0.1:<port> to a target. `cut()` resets every open connection and refuses new
    ones (the listener closes); `restore()` listens again on the same port."""

    def __init__(self, target_host: str, target_port: int):
        self.target = (target_host, target_port)
        self.port = 0
        self._listener: socket.socket | None = None
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
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
            with self._lock:
                self._conns.update((client, upstream))
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()

    def _pipe(self, a: socket.socket, b: socket.socket) -> None:
        pair = {a: b, b: a}
        try:
            while True:
                readable, _, _ = select.select(list(pair), [], [], 1.0)
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    pair[sock].sendall(data)
        except (OSError, ValueError):
            return
        finally:
            self._drop(a, b)

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
            conns = list(self._conns)
        self._drop(*conns)

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
