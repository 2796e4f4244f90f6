"""Free loopback ports for the brokers, registries and servers a test starts.

``make test`` runs the suite on two pytest-xdist workers (``conftest.py``). A port is picked free
and closed again, and the server that will listen on it starts a moment later, so two workers could
be handed one port in that moment. Each worker therefore takes only the ports that fall to it (port
modulo the worker count), tried at random in ``WORKER_RANGE``, not left to ``bind(0)``: Linux hands
``bind(0)`` even ports only while it can, so a worker of the odd ones would wait for ever. The range
lies below the kernel's ephemeral range (32768-60999) because there Linux gives the odd ports to
outgoing connections as their source ports, and one of them took a port picked for a broker's
listener in the moment before it listened (seen in a two-worker run). No process hands out one port
twice: a port chosen for a broker's HTTP endpoint is not bound until the broker starts, so it could
otherwise be offered again for the broker's own listener (seen once in CI). Processes a test starts
inherit the worker's share through ``PYTEST_XDIST_WORKER``.
"""

from __future__ import annotations

import os
import random
import socket

_HANDED_OUT: set[int] = set()
# Below the ephemeral range, and above the fixed ports some tests use (9092, 8081, and
# cluster_tests/test_make_cluster.py's block, which it keeps under 20000).
WORKER_RANGE = (20000, 32767)


def _share() -> tuple[int, int]:
    """(this worker's index, the number of workers); (0, 1) outside pytest-xdist."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if worker.startswith("gw") and worker[2:].isdigit() and count.isdigit() and int(count) > 1:
        return int(worker[2:]) % int(count), int(count)
    return 0, 1


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback TCP port that nothing is bound to right now, that falls to this worker, and that
    this process has not handed out before."""
    index, count = _share()
    if count == 1:
        while True:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", 0))
                port = int(s.getsockname()[1])
            if port not in _HANDED_OUT:
                _HANDED_OUT.add(port)
                return port
    low, high = WORKER_RANGE
    for _ in range(100_000):
        port = random.randrange(low, high + 1)
        port -= (port - index) % count
        if port >= low and port not in _HANDED_OUT and _bindable(port):
            _HANDED_OUT.add(port)
            return port
    raise RuntimeError(f"no free loopback port in {low}-{high} for pytest-xdist worker {index} of {count}")
