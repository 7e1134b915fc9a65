"""bench/peers' reading of how a load's connections sit on a server's processes, and the rule that runs a
pass again when one process held them all (`connections_per_process`, `one_process`)."""

from __future__ import annotations

import shutil
import socket

import pytest

from bench.peers import run as peers


@pytest.mark.skipif(shutil.which("ss") is None, reason="ss (iproute2) is not installed")
def test_connections_held_by_one_process_read_as_all_on_one():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
        accepted = [server.accept()[0] for _ in clients]
        try:
            assert peers.connections_per_process(port) == "3/0"  # this test's process holds all three
        finally:
            for s in clients + accepted:
                s.close()
    assert peers.connections_per_process(port) == "?"  # nothing connected


def test_only_a_pass_with_every_connection_on_one_process_runs_again():
    assert peers.one_process(f"{peers.WRK_CONNECTIONS}/0")
    for split in ("4/4", "7/1", "?", "1/0", "1/1"):
        assert not peers.one_process(split)
