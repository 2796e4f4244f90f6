"""A topic change that ZooKeeper does not confirm is answered REQUEST_TIMED_OUT, and the broker goes on.

While ZooKeeper is frozen (SIGSTOP, as a long GC pause or a partition would look to the broker),
creating a topic, adding partitions to one and deleting one get no answer from it; the admin
client gets Kafka's retriable REQUEST_TIMED_OUT with a message that says to look before trying
again, never a hang or an internal error, and records are still taken meanwhile.  ZooKeeper may
still apply a write when it wakes (its bytes were in its socket), so once it is back the test
accepts either outcome, and checks that the broker converges: the topics are usable, each change
can be made again (or is there), and nothing in the broker's log is a traceback.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from cluster_tests.clients import produce
from cluster_tests.conftest import Cluster
from cluster_tests.zookeeper_server import ZooKeeperServer

BACK_WITHIN_S = 90


def _error(future) -> KafkaError | None:  # noqa: ANN001 - a concurrent.futures.Future of confluent-kafka
    try:
        future.result(timeout=60)
    except KafkaException as e:
        return e.args[0]
    return None


def _converged(admin: AdminClient, make) -> None:  # noqa: ANN001 - a callable returning one future
    """Retry ``make()`` until it succeeds or says the change is already there."""
    deadline = time.monotonic() + BACK_WITHIN_S
    while True:
        err = _error(make())
        if err is None or err.code() in (KafkaError.TOPIC_ALREADY_EXISTS, KafkaError.INVALID_PARTITIONS,
                                         KafkaError.UNKNOWN_TOPIC_OR_PART):
            return
        assert err.retriable() or err.code() == KafkaError.REQUEST_TIMED_OUT, err
        assert time.monotonic() < deadline, f"the broker did not take the change again after ZooKeeper came back: {err}"
        time.sleep(0.5)


@pytest.mark.cluster_timeout(240)
def test_a_change_zookeeper_does_not_confirm_times_out_and_the_broker_recovers(tmp_path: Path) -> None:
    # A ZooKeeper of its own: freezing the session one would stall the other tests' brokers.
    zookeeper = ZooKeeperServer(tmp_path / "zookeeper" / "data").start()
    cluster = Cluster(zookeeper, tmp_path)
    frozen = False
    try:
        cluster.start_brokers(node_ids=(1,))
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        before, during = f"before-{uuid.uuid4().hex[:8]}", f"during-{uuid.uuid4().hex[:8]}"
        doomed = f"doomed-{uuid.uuid4().hex[:8]}"
        assert _error(admin.create_topics([NewTopic(before, 1, 1)])[before]) is None
        assert _error(admin.create_topics([NewTopic(doomed, 1, 1)])[doomed]) is None
        assert produce(cluster.bootstrap, before, [1]) == {1: (0, 0)}

        assert zookeeper.proc is not None
        os.kill(zookeeper.proc.pid, signal.SIGSTOP)
        frozen = True
        created = admin.create_topics([NewTopic(during, 2, 1)], request_timeout=60)[during]
        grown = admin.create_partitions([NewPartitions(before, 3)], request_timeout=60)[before]
        deleted = admin.delete_topics([doomed], request_timeout=60)[doomed]
        # Answered by the broker (librdkafka's own timeout would say _TIMED_OUT, after 60 s).
        for future in (created, grown):
            err = _error(future)
            assert err is not None and err.code() == KafkaError.REQUEST_TIMED_OUT, err
            assert "The metadata store" in err.str() and "before trying again" in err.str(), err.str()
        # librdkafka shows no error message for DeleteTopics: the code alone.
        err = _error(deleted)
        assert err is not None and err.code() == KafkaError.REQUEST_TIMED_OUT, err

        # Records do not need ZooKeeper: they are still taken meanwhile.
        assert produce(cluster.bootstrap, before, [2], partition=0) == {2: (0, 1)}

        os.kill(zookeeper.proc.pid, signal.SIGCONT)
        frozen = False
        _converged(admin, lambda: admin.create_topics([NewTopic(during, 2, 1)])[during])
        _converged(admin, lambda: admin.create_partitions([NewPartitions(before, 3)])[before])
        _converged(admin, lambda: admin.delete_topics([doomed])[doomed])
        topics = admin.list_topics(timeout=30).topics
        assert len(topics[during].partitions) == 2 and len(topics[before].partitions) == 3
        # Both topics take records on every partition, the first one's old record kept.
        assert produce(cluster.bootstrap, during, [10, 11], partition=1) == {10: (1, 0), 11: (1, 1)}
        assert produce(cluster.bootstrap, before, [3], partition=0) == {3: (0, 2)}
        assert produce(cluster.bootstrap, before, [4], partition=2) == {4: (2, 0)}
        broker = cluster.brokers[1]
        assert broker.is_alive()
        assert "Traceback" not in broker.stderr_text(), broker.stderr_tail()
    finally:
        if frozen and zookeeper.proc is not None:
            os.kill(zookeeper.proc.pid, signal.SIGCONT)
        cluster.close()
        zookeeper.stop()
