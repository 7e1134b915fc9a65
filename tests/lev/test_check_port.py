"""deploy/check_port.py, which `make run` runs before its set-up: a taken port is reported at once."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "check_port.py"


def check(*args: str) -> subprocess.CompletedProcess:
    # The system's python, as `make run` uses it before the virtualenv exists: standard library only.
    return subprocess.run([sys.executable, "-I", str(SCRIPT), *args], capture_output=True, text=True, timeout=30)


def test_a_port_another_server_listens_on_is_reported_with_what_to_do():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        taken = check("127.0.0.1", str(port))
        assert taken.returncode == 1
        assert f"Port {port} on 127.0.0.1 is already in use" in taken.stderr
        assert "make run PORT=8000" in taken.stderr
        # Listening on every address takes it for 127.0.0.1 too... and the other way round.
        assert check("0.0.0.0", str(port)).returncode == 1
    free = check("127.0.0.1", str(port))
    assert (free.returncode, free.stdout, free.stderr) == (0, "", "")


def test_a_stopped_servers_closing_connections_do_not_make_its_port_look_taken():
    # An earlier runserver (which sets SO_REUSEADDR, as Python's socketserver does) just stopped: its
    # connections wait in TIME_WAIT, and a new runserver may listen there, so the check says free.
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = server.accept()
        accepted.close()  # the server side closes first: its end waits in TIME_WAIT
        client.close()
    assert check("127.0.0.1", str(port)).returncode == 0


def test_bad_arguments_and_hosts_are_refused_plainly():
    for args in ((), ("127.0.0.1",), ("127.0.0.1", "eighty"), ("127.0.0.1", "0"), ("127.0.0.1", "70000")):
        done = check(*args)
        assert done.returncode == 2 and done.stderr.startswith("usage: check_port.py HOST PORT"), args
    unknown = check("no-such-host.invalid", "8000")
    assert unknown.returncode == 1 and "HOST=no-such-host.invalid is not an address" in unknown.stderr
    foreign = check("192.0.2.1", "8000")  # TEST-NET-1: never an address of this machine
    assert foreign.returncode == 1 and "is not an address of this machine" in foreign.stderr
    assert "Traceback" not in unknown.stderr + foreign.stderr
