"""How the suite is shared between the pytest-xdist workers ``make test`` runs it on (``PYTEST_WORKERS``).

Each test module goes to one worker whole, so its module fixtures (a broker, a cluster, a
ZooKeeper) start once.  Modules that hold a machine-wide resource take a lock on it for as long as
they run, so two of them never run side by side: the deploy tests (podman's storage, and the compose
file's fixed host ports 9092-9094, 8081, 8082, 9644) with `make cluster`'s fixed ports, and the fault
injector's network namespaces.  Free ports are split between the workers by
``compat_tests.loopback_ports``.

The slow directories go first and the unit tests last, so that the run ends on short tests that
fill in whichever worker is free, not on a long one that one worker runs alone.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from pathlib import Path

import pytest

# Machine-wide resources, by the path prefixes of the modules that hold them.
MACHINE_WIDE = {
    "deploy_tests/": "fixed-host-ports",
    "cluster_tests/test_make_cluster.py": "fixed-host-ports",
    "cluster_tests/faults/": "network-namespaces",
}
LOCK_DIR = Path("/tmp")

# Scheduling order by path prefix; anything else comes after these.
SLOW_FIRST = ("deploy_tests/", "benchmarks/", "cluster_tests/", "spark_tests/", "compat_tests/")


def _resource(path: str) -> str | None:
    for prefix, resource in MACHINE_WIDE.items():
        if path.startswith(prefix):
            return resource
    return None


def _rank(path: str) -> int:
    for rank, prefix in enumerate(SLOW_FIRST):
        if path.startswith(prefix):
            return rank
    return len(SLOW_FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker; elsewhere the order does not matter
        items.sort(key=lambda item: _rank(item.nodeid))  # stable: a module's tests keep their order


@pytest.fixture(scope="module", autouse=True)
def _machine_wide_resource(request: pytest.FixtureRequest) -> Iterator[None]:
    """The lock on what this module holds of the machine, for as long as it runs."""
    resource = _resource(request.node.nodeid.split("::", 1)[0])
    if resource is None:
        yield
        return
    with open(LOCK_DIR / f"pykafkad-tests-{resource}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        yield
