#!/usr/bin/env python3
"""Can the site listen on HOST:PORT? `make run` asks first, so a taken port is reported at once
instead of after the virtualenv, the migrations and the demo seed. Standard library only (it runs
before the virtualenv exists).

    python3 deploy/check_port.py HOST PORT    # exit 0: free; 1: cannot listen there (says why); 2: usage
"""

from __future__ import annotations

import errno
import socket
import sys

USAGE = "usage: check_port.py HOST PORT"


def problem(host: str, port: int) -> str | None:
    """Why the site could not listen on host:port, or None when it can."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except socket.gaierror:
        return f"HOST={host} is not an address of this machine; try HOST=127.0.0.1."
    with socket.socket(family, kind, proto) as sock:
        # As Django's runserver does: a port whose last connections are closing (TIME_WAIT) is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (f"Port {port} on {host} is already in use (another server, or an earlier `make run`). "
                        f"Stop it, or choose another port: make run PORT={8001 if port == 8000 else 8000}")
            if exc.errno == errno.EACCES:
                return f"Port {port} needs administrator rights here; choose one above 1023: make run PORT=8001"
            if exc.errno == errno.EADDRNOTAVAIL:
                return f"HOST={host} is not an address of this machine; try HOST=127.0.0.1."
            return f"Cannot listen on {host}:{port}: {exc.strerror}."
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[1].isdigit() or not 1 <= int(argv[1]) <= 65535:
        print(USAGE + " (PORT a number from 1 to 65535)", file=sys.stderr)
        return 2
    why = problem(argv[0], int(argv[1]))
    if why:
        print(why, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
