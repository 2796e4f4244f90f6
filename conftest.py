"""How ``make test`` shares the suite between its pytest-xdist workers (``-n 2 --dist loadgroup``).

Each test module is one unit of work, so a module's fixtures (a broker, a cluster, a ZooKeeper) are
started once, on one worker.  Modules that hold a machine-wide resource share a unit and so never run
at the same time: the deploy tests (podman's storage, and the compose file's fixed host ports
9092-9094, 8081, 8082, 9644) with `make cluster`'s fixed ports, and the fault injector's network
namespaces.  Free ports are split between the workers by ``compat_tests.loopback_ports``.

The slow directories go first and the unit tests last, so that the run ends on short tests that
fill in whichever worker is free, not on a long one that one worker runs alone.
"""

from __future__ import annotations

import pytest

# Units of work shared by modules, by path prefix.
SHARED_UNITS = {
    "deploy_tests/": "fixed-host-ports",
    "cluster_tests/test_make_cluster.py": "fixed-host-ports",
    "cluster_tests/faults/": "network-namespaces",
}

# Scheduling order by path prefix; anything else comes after these.
SLOW_FIRST = ("deploy_tests/", "benchmarks/", "cluster_tests/", "spark_tests/", "compat_tests/")


def _unit(path: str) -> str:
    for prefix, unit in SHARED_UNITS.items():
        if path.startswith(prefix):
            return unit
    return path


def _rank(path: str) -> int:
    for rank, prefix in enumerate(SLOW_FIRST):
        if path.startswith(prefix):
            return rank
    return len(SLOW_FIRST)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not hasattr(config, "workerinput"):
        return  # not an xdist worker: the order and the groups do not matter
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_unit(item.nodeid.split("::", 1)[0])))
    items.sort(key=lambda item: _rank(item.nodeid))  # stable: a module's tests keep their order
