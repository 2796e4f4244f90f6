"""Free loopback ports for the brokers, registries and servers a test starts.

``make test`` runs the suite on several pytest-xdist workers at once.  A port is picked by binding
port 0 and closing the socket, and the server that will listen on it starts a moment later, so two
workers could be handed one port in that moment.  Each worker therefore takes only the ports that
fall to it (port modulo the worker count), and never hands one out twice itself: a port chosen for a
broker's HTTP endpoint is not bound until the broker starts, so the kernel may offer it again for the
broker's own listener (seen once in CI).  Processes a test starts inherit the worker's share through
``PYTEST_XDIST_WORKER``.
"""

from __future__ import annotations

import os
import socket

_HANDED_OUT: set[int] = set()


def _share() -> tuple[int, int]:
    """(this worker's index, the number of workers); (0, 1) outside pytest-xdist."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if worker.startswith("gw") and worker[2:].isdigit() and count.isdigit() and int(count) > 1:
        return int(worker[2:]) % int(count), int(count)
    return 0, 1


def free_port() -> int:
    """A loopback TCP port that nothing listens on right now, that falls to this worker, and that
    this process has not handed out before."""
    index, count = _share()
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port % count == index and port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port
