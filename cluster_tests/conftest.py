"""Fixtures for the cluster tests: one ZooKeeper for the session, brokers that register in it.

* `zookeeper`: a real ZooKeeper server (`zookeeper_server.py`), started once.
* `cluster`: start pykafkad brokers with `zookeeper.connect` on a chroot of their own per test
  (`/test-N`), so tests never see each other's brokers, topics or controller; all are stopped at
  the end of the test.
* The compat suite's deadline and broker-log hooks apply here too.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cluster_tests.znode_watch import ZooKeeperView
from cluster_tests.zookeeper_server import ZooKeeperServer
from compat_tests.broker_process import BrokerProcess
from compat_tests.deadlines import attach_broker_logs, deadline_hook

DEFAULT_TEST_TIMEOUT_S = 180.0
# Short sessions: a killed broker's registration (and controller claim) expires in seconds.
SESSION_TIMEOUT_MS = "3000"

_chroots = itertools.count(1)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cluster_timeout(seconds): deadline for one cluster test body")


pytest_runtest_call = deadline_hook("cluster_timeout", DEFAULT_TEST_TIMEOUT_S)
pytest_runtest_makereport = attach_broker_logs


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperServer]:
    server = ZooKeeperServer(tmp_path_factory.mktemp("zookeeper") / "data").start()
    yield server
    server.stop()


class Cluster:
    """The brokers of one test, all on the test's own ZooKeeper chroot."""

    def __init__(self, zookeeper: ZooKeeperServer, root: Path) -> None:
        self.zookeeper = zookeeper
        self.chroot = f"/test-{next(_chroots)}"
        self.root = root
        self.brokers: dict[int, BrokerProcess] = {}

    @property
    def zk_connect(self) -> str:
        return self.zookeeper.connect + self.chroot

    def start_broker(self, node_id: int, overrides: dict[str, str] | None = None) -> BrokerProcess:
        """Start (or restart, on its old port and log dir) broker ``node_id``."""
        broker = self.brokers.get(node_id)
        if broker is None:
            settings = {"zookeeper.connect": self.zk_connect, "zookeeper.session.timeout.ms": SESSION_TIMEOUT_MS,
                        "broker.id": str(node_id), "node.id": str(node_id), **(overrides or {})}
            broker = BrokerProcess(self.root / f"broker-{node_id}" / "logs", settings, name=f"broker-{node_id}")
            self.brokers[node_id] = broker
        return broker.start()

    def start_brokers(self, overrides: dict[str, str] | None = None, node_ids: tuple[int, ...] = (1, 2, 3)) -> None:
        """Start brokers ``node_ids`` with the same ``overrides``, and return once all are registered
        in ZooKeeper (the opening of most cluster tests)."""
        for node_id in node_ids:
            self.start_broker(node_id, overrides)
        wanted = sorted(str(n) for n in node_ids)
        view = ZooKeeperView(self.zk_connect)
        try:
            view.wait_children("/brokers/ids", lambda ids: sorted(ids) == wanted)
        finally:
            view.close()

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers.values() if b.is_alive())

    def close(self) -> None:
        """Stop every broker at once (SIGTERM to all together, then wait for each): a controlled
        shutdown stops waiting once the others stopping too leave nobody to hand over to
        (test_cluster_stop.py), rather than each broker handing its leaderships to the next."""
        brokers = list(self.brokers.values())
        if brokers:
            with ThreadPoolExecutor(len(brokers)) as pool:
                list(pool.map(lambda b: b.close(), brokers))


@pytest.fixture
def cluster(zookeeper: ZooKeeperServer, tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(zookeeper, tmp_path)
    yield c
    c.close()
