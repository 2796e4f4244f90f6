"""Fetch sessions (KIP-227) between brokers: each follower's fetcher holds one session on each leader
it fetches from, with the partitions it follows there, as Kafka's followers do.  Records replicate
through them (acks=all with every replica in sync), and when a leader is killed and restarted its
followers' sessions are gone: they open new ones and replication goes on, nothing acknowledged lost.
The leaders' ``kafka_server_fetchsessioncache_*`` gauges show the sessions.

A follower's request stops naming a partition it has caught up on, and the leader then answers it
only when there is news: records, or a high watermark or log start offset other than the one it
last sent.  Both must still reach every follower: after kafka-delete-records every replica's log
starts at the new offset (followers kept the deleted records before they followed the leader's log
start, as Kafka's do on each fetch), and the failover that follows does not bring them back."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster_tests.broker_metrics import scrape_until, start_with_metrics, until_replicas_agree
from cluster_tests.clients import create_topic, produce, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_tools import run_tool

SESSIONS = "kafka_server_fetchsessioncache_numincrementalfetchsessions"
CACHED = "kafka_server_fetchsessioncache_numincrementalfetchpartitionscached"


@pytest.mark.cluster_timeout(240)
def test_followers_replicate_through_sessions_and_open_new_ones_after_a_leader_restart(cluster: Cluster,
                                                                                       tmp_path: Path) -> None:
    ports = start_with_metrics(cluster, {"metrics.console.enable": "true"})
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        states = create_topic(cluster, "sessions", partitions=3, configs={"min.insync.replicas": "3"})
        leaders = {s["leader"] for s in states}
        acked = produce(cluster.bootstrap, "sessions", list(range(300)))
        for leader in leaders:
            # One session per follower, each caching the partitions that follower follows there.
            seen = scrape_until(ports[leader], SESSIONS, 2)
            led = sum(1 for s in states if s["leader"] == leader)
            assert seen[CACHED] >= 2 * led
        # The followers learn each high watermark and log start offset through their sessions, though
        # their requests no longer name a partition they are caught up on.
        until_replicas_agree(ports, "sessions", 3)
        offsets = tmp_path / "delete.json"
        offsets.write_text('{"partitions": [{"topic": "sessions", "partition": 0, "offset": 10}], "version": 1}')
        run_tool("kafka-delete-records", ["--bootstrap-server", cluster.bootstrap, "--offset-json-file", str(offsets)])
        until_replicas_agree(ports, "sessions", 3)
        # The followers deleted them too: after the failover below they stay deleted.
        acked = {v: (p, o) for v, (p, o) in acked.items() if p != 0 or o >= 10}

        # The leader of partition 0 killed and restarted: its sessions died with it.
        restarted = states[0]["leader"]
        cluster.brokers[restarted].kill9()
        view.wait_children("/brokers/ids", lambda ids: str(restarted) not in ids)
        acked.update(produce(cluster.bootstrap, "sessions", list(range(300, 600)), **{"acks": "1"}))
        cluster.start_broker(restarted)
        for partition in range(3):
            view.wait_data(f"/brokers/topics/sessions/partitions/{partition}/state",
                           lambda s: s is not None and sorted(s["isr"]) == [1, 2, 3])
        # Back as partition 0's leader: the followers fetch from it again, in new sessions.
        run_tool("kafka-leader-election", ["--bootstrap-server", cluster.bootstrap, "--election-type",
                                           "preferred", "--all-topic-partitions"])
        view.wait_data("/brokers/topics/sessions/partitions/0/state",
                       lambda s: s is not None and s["leader"] == restarted)
        acked.update(produce(cluster.bootstrap, "sessions", list(range(600, 900))))
        scrape_until(ports[restarted], SESSIONS, 2, timeout=120)
        got = read_everything(cluster.bootstrap, "sessions", 3, len(acked))
        assert sorted(v for v, _, _ in got) == sorted(acked)
        assert {v: (p, o) for v, p, o in got} == acked
    finally:
        view.close()
