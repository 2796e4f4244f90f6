"""A share-partition whose state lives on another broker (KIP-932): on three brokers, the group is
picked so that the leader of its ``__share_group_state`` partition is neither the leader of the
topic's partition nor the group's coordinator.  Every state operation then crosses brokers:

- the partition's leader initializes, reads and writes the state with InitializeShareGroupState,
  ReadShareGroupState and WriteShareGroupState (83-85);
- the group's coordinator reads its summary for ``kafka-share-groups.sh --describe``
  (ReadShareGroupStateSummary, 87) and deletes it for ``--delete-offsets`` (DeleteShareGroupState,
  86).

Each is proven by what a librdkafka share consumer is delivered and what the tool shows.
"""

from __future__ import annotations

import base64
import time
import uuid

from confluent_kafka import Producer

from cluster_tests.clients import create_topic
from cluster_tests.conftest import Cluster
from cluster_tests.test_share_group_failover import SETTINGS, _leader
from compat_tests.consumer_protocol_support import Member
from compat_tests.java_tools import run_tool, table_row
from compat_tests.raw_kafka import RawConnection
from compat_tests.test_share_consumers import SHARE_MEMBER, Deliveries

FIND_COORDINATOR, METADATA = 10, 3
GROUP_KEY, SHARE_KEY = 0, 2
WAIT_S = 60.0


def _topic_id(cluster: Cluster, topic: str) -> uuid.UUID:
    with RawConnection(cluster.brokers[1].port) as conn:
        md = conn.request(METADATA, 12, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}],
                                         "allow_auto_topic_creation": False,
                                         "include_topic_authorized_operations": False})
    return md["topics"][0]["topic_id"]


def _coordinator(cluster: Cluster, key_type: int, key: str) -> int:
    """The broker FindCoordinator names for ``key``, once its topic is made (on first ask)."""
    deadline = time.monotonic() + WAIT_S
    with RawConnection(cluster.brokers[1].port) as conn:
        while True:
            [found] = conn.request(FIND_COORDINATOR, 6, {"key_type": key_type,
                                                         "coordinator_keys": [key]})["coordinators"]
            if found["error_code"] == 0:
                return int(found["node_id"])
            assert time.monotonic() < deadline, found
            time.sleep(0.2)


def _state_coordinator(cluster: Cluster, group: str, topic_id: uuid.UUID) -> int:
    """The broker leading the share-partition's __share_group_state partition."""
    topic = base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")
    return _coordinator(cluster, SHARE_KEY, f"{group}:{topic}:0")


def _accept_all(cluster: Cluster, group: str, topic: str, values: set[str]) -> list[tuple[int, int, str]]:
    member = Member("rdkafka", cluster.bootstrap, group, topic, programs=SHARE_MEMBER, mode=("ack",))
    try:
        member.wait_for("every record accepted", lambda: set(Deliveries(member).values()) >= values
                        and member.lines[-1] == "committed")
        member.leave()
    finally:
        member.close()
    return sorted(Deliveries.of(member))


def test_share_state_on_another_broker_is_kept_over_the_share_coordinator_apis(cluster: Cluster) -> None:
    for node_id in (1, 2, 3):
        cluster.start_broker(node_id, SETTINGS)
    topic = f"share-rpc-{uuid.uuid4().hex[:8]}"
    create_topic(cluster, topic, 1)
    leader, topic_id = _leader(cluster, topic), _topic_id(cluster, topic)
    for attempt in range(200):
        group = f"share-rpc-{attempt}"
        state = _state_coordinator(cluster, group, topic_id)
        if state not in (leader, _coordinator(cluster, GROUP_KEY, group)):
            break
    else:
        raise AssertionError("no group name puts the share state on a third broker")
    run_tool("kafka-configs", ["--bootstrap-server", cluster.bootstrap, "--alter", "--entity-type", "groups",
                               "--entity-name", group, "--add-config", "share.auto.offset.reset=earliest"])
    values = [f"v{i}" for i in range(20)]
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for value in values:
        producer.produce(topic, value=value.encode())
    assert producer.flush(30) == 0

    assert _accept_all(cluster, group, topic, set(values)) == [(i, 1, f"v{i}") for i in range(20)]
    tool = ["--bootstrap-server", cluster.bootstrap, "--group", group]
    out = run_tool("kafka-share-groups", [*tool, "--describe"]).stdout.strip().splitlines()
    [row] = [table_row(out[0], line) for line in out[1:]]
    assert (row["START-OFFSET"], row["LAG"]) == ("20", "0"), row
    deleted = run_tool("kafka-share-groups", [*tool, "--delete-offsets", "--topic", topic]).stdout
    assert "Successful" in deleted, deleted
    # The state is gone from the third broker: a new member starts from the earliest record again.
    assert _accept_all(cluster, group, topic, set(values)) == [(i, 1, f"v{i}") for i in range(20)]
