"""Stopping a whole cluster at once: SIGTERM to all three brokers together.

Each broker's controlled shutdown hands its leaderships over only while another in-sync replica is
alive to take them; when the others are stopping too, it stops without waiting out
`controlled.shutdown.max.retries` x `controlled.shutdown.retry.backoff.ms`.  Started again, the
cluster has every acknowledged record.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from cluster_tests.clients import create_topic, produce, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView


@pytest.mark.cluster_timeout(240)
def test_all_brokers_stopped_together_do_not_wait_out_the_hand_over_and_keep_every_record(
        cluster: Cluster) -> None:
    cluster.start_brokers()
    view = ZooKeeperView(cluster.zk_connect)
    try:
        create_topic(cluster, "whole", partitions=6, configs={"min.insync.replicas": "2"})
        acked = produce(cluster.bootstrap, "whole", list(range(600)))

        brokers = list(cluster.brokers.values())
        with ThreadPoolExecutor(len(brokers)) as pool:
            codes = list(pool.map(lambda b: b.stop(), brokers))
        assert codes == [0, 0, 0]
        for broker in brokers:
            text = broker.stderr_text()
            assert "controlled shutdown: handing over" in text, broker.stderr_tail()
            assert "not handed over within" not in text, broker.stderr_tail()

        for node_id in (1, 2, 3):
            cluster.start_broker(node_id)
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        for p in range(6):
            view.wait_data(f"/brokers/topics/whole/partitions/{p}/state", lambda s: s["leader"] >= 0)
        got = read_everything(cluster.bootstrap, "whole", 6, len(acked))
        assert {v: (p, o) for v, p, o in got} == acked
    finally:
        view.close()
